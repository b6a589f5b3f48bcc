/* tests/unit/test_cg_fusion.c: fused kernels (codegen/fusion.c) against
 * the interpreter. Each table row is a prim::FusionGroup read from text;
 * its kernel is compiled into one module, optimised and run through the JIT
 * on inputs laid out contiguously (the element loop, in one call and split
 * in two), as given with broadcast operands (the row loop, split), as
 * transposed views (the row loop with strides), as parts of a wider tensor
 * (rows further apart than they are long: ConstantChunk's views) and in
 * place (output 0 in input 0's buffer); every element must match what the interpreter computes
 * running the group's Subgraph on the same values: bit for bit (NaN equal to
 * NaN) for exact rows, within a few ulp for transcendentals. Inputs mix
 * random values with zeros of both signs, infinities, NaN, huge, tiny and
 * denormal numbers (floats) and the extremes of each integer type. Then:
 * groups the lowering refuses, with their reasons; ts_cg_fusion_supports;
 * and that an optimised float32 kernel is vector code without runtime
 * overlap checks. */
#include "cg_jit.h"
#include "codegen.h"
#include "runtime.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

typedef void (*kernel_fn)(const ts_cg_kargs *a, int64_t begin, int64_t end);

/* ------------------------------------------------------------------ rows */

/* value ranges: mixed, positive, small integers, [-1, 1], mixed with finite
 * magnitudes clamped to 1e6 (math.c's sin and cos reduce exactly below
 * 2^24 only); T_ONE: results
 * are compared on the scale of max(|result|, 1) (else 1/1024), for
 * functions whose float formula cancels */
enum { V_DEF, V_POS, V_SMALL, V_UNIT, V_MOD, V_MASK = 7, T_ONE = 8 };

typedef struct row {
  const char *name;
  const char *ins;  /* input types, "|"-separated: Float(7, 24), int, float, bool */
  const char *body; /* the subgraph's nodes; inputs are %a %b %c %d, the output %o (and %o2) */
  const char *outs; /* output types, "|"-separated */
  double ulps;      /* 0: bit for bit */
  int vals;         /* V_* | T_ONE */
} row;

#define FM "Float(7, 24)"
#define DM "Double(7, 24)"
#define LM "Long(7, 24)"
#define IM "Int(7, 24)"
#define BM "Bool(7, 24)"
#define UM "Byte(7, 24)"
#define ONE "%k1 : int = prim::Constant[value=1]()\n"

#define UN(op, tol) {#op, FM, "%o : " FM " = aten::" #op "(%a)", FM, tol, V_DEF}
#define UND(op, tol) {#op ".f64", DM, "%o : " DM " = aten::" #op "(%a)", DM, tol, V_DEF}
#define BIN(op, tol, v) {#op, FM "|Float(24)", "%o : " FM " = aten::" #op "(%a, %b)", FM, tol, v}
#define CMP(op) {#op, FM "|Float(24)", "%o : " BM " = aten::" #op "(%a, %b)", BM, 0, V_SMALL}, \
                {#op ".Scalar", FM, "%s : float = prim::Constant[value=0.5]()\n%o : " BM " = aten::" #op "(%a, %s)", BM, 0, V_SMALL}

static const row rows[] = {
    /* unary, float32 */
    UN(abs, 0), UN(neg, 0), UN(exp, 4), UN(log, 4), UN(log2, 4), UN(log10, 4), UN(log1p, 4), UN(expm1, 4),
    UN(sqrt, 0), UN(rsqrt, 0), {"sin", FM, "%o : " FM " = aten::sin(%a)", FM, 4, V_MOD}, {"cos", FM, "%o : " FM " = aten::cos(%a)", FM, 4, V_MOD}, UN(tan, 0), UN(asin, 0), UN(acos, 0), UN(atan, 0),
    UN(sinh, 0), UN(cosh, 0), UN(tanh, 4), UN(sigmoid, 4), UN(relu, 0), UN(relu6, 0), UN(silu, 8), UN(mish, 16),
    UN(hardswish, 0), UN(hardsigmoid, 0), UN(selu, 8), UN(erf, 4), UN(floor, 0), UN(ceil, 0), UN(round, 0),
    UN(trunc, 0), UN(frac, 0), UN(sign, 0), UN(reciprocal, 0), UN(square, 0),
    {"logical_not", FM, "%o : " BM " = aten::logical_not(%a)", BM, 0, V_DEF},
    {"isnan", FM, "%o : " BM " = aten::isnan(%a)", BM, 0, V_DEF},
    {"isinf", FM, "%o : " BM " = aten::isinf(%a)", BM, 0, V_DEF},
    {"isfinite", FM, "%o : " BM " = aten::isfinite(%a)", BM, 0, V_DEF},
    /* PyTorch's float formula x * 0.5 * (1 + erf(x / sqrt(2))) cancels for x
     * below -2, where the kernel (math.c, in double) is the more accurate:
     * compared to within 8 ulp of 1 there */
    {"gelu", FM, "%s : str = prim::Constant[value=\"none\"]()\n%o : " FM " = aten::gelu(%a, %s)", FM, 8, V_DEF | T_ONE},
    {"gelu.tanh", FM, "%s : str = prim::Constant[value=\"tanh\"]()\n%o : " FM " = aten::gelu(%a, %s)", FM, 8,
     V_DEF | T_ONE},
    {"hardtanh", FM,
     "%l : float = prim::Constant[value=-0.5]()\n%h : int = prim::Constant[value=2]()\n"
     "%o : " FM " = aten::hardtanh(%a, %l, %h)", FM, 0, V_DEF},
    {"elu", FM,
     "%al : float = prim::Constant[value=1.5]()\n%sc : float = prim::Constant[value=1.25]()\n" ONE
     "%o : " FM " = aten::elu(%a, %al, %sc, %k1)", FM, 8, V_DEF},
    {"leaky_relu", FM, "%s : float = prim::Constant[value=0.2]()\n%o : " FM " = aten::leaky_relu(%a, %s)", FM,
     0, V_DEF},
    {"softplus", FM,
     "%be : int = prim::Constant[value=2]()\n%th : int = prim::Constant[value=5]()\n"
     "%o : " FM " = aten::softplus(%a, %be, %th)", FM, 8, V_DEF},
    {"threshold", FM,
     "%t : float = prim::Constant[value=0.5]()\n%v : int = prim::Constant[value=-3]()\n"
     "%o : " FM " = aten::threshold(%a, %t, %v)", FM, 0, V_DEF},
    {"round.decimals", FM, "%t : int = prim::Constant[value=2]()\n%o : " FM " = aten::round(%a, %t)", FM, 0,
     V_DEF},
    {"round.decimals-1", FM, "%t : int = prim::Constant[value=-1]()\n%o : " FM " = aten::round(%a, %t)", FM, 0,
     V_DEF},

    /* unary, float64 */
    UND(exp, 4), UND(tanh, 4), UND(sigmoid, 4), UND(log1p, 4), UND(sqrt, 0), UND(relu, 0), UND(sin, 0),
    UND(sinh, 0), UND(atan, 0), UND(floor, 0),
    UND(log, 4), UND(expm1, 4), UND(erf, 4), UND(cos, 0), UND(log2, 4), UND(tan, 0), UND(round, 0),

    /* binary, float32, the second operand broadcast */
    {"add", FM "|Float(24)", ONE "%o : " FM " = aten::add(%a, %b, %k1)", FM, 0, V_DEF},
    {"add.alpha", FM "|Float(24)",
     "%al : float = prim::Constant[value=2.5]()\n%o : " FM " = aten::add(%a, %b, %al)", FM, 0, V_DEF},
    {"add.Scalar", FM,
     "%s : float = prim::Constant[value=0.1]()\n" ONE "%o : " FM " = aten::add(%a, %s, %k1)", FM, 0, V_DEF},
    {"sub", FM "|Float(24)", "%al : int = prim::Constant[value=3]()\n%o : " FM " = aten::sub(%a, %b, %al)", FM,
     0, V_DEF},
    {"rsub", FM "|Float(24)", ONE "%o : " FM " = aten::rsub(%a, %b, %k1)", FM, 0, V_DEF},
    {"rsub.Scalar", FM, "%s : int = prim::Constant[value=1]()\n%o : " FM " = aten::rsub(%a, %s, %s)", FM, 0,
     V_DEF},
    BIN(mul, 0, V_DEF), BIN(div, 0, V_DEF), BIN(true_divide, 0, V_DEF), BIN(floor_divide, 0, V_DEF),
    BIN(remainder, 0, V_DEF), BIN(fmod, 0, V_DEF), BIN(maximum, 0, V_DEF), BIN(minimum, 0, V_DEF),
    BIN(atan2, 0, V_DEF), BIN(pow, 8, V_POS),
    {"mul.Scalar", FM, "%s : float = prim::Constant[value=-1.5]()\n%o : " FM " = aten::mul(%a, %s)", FM, 0, V_DEF},
    {"div.Scalar", FM, "%s : int = prim::Constant[value=3]()\n%o : " FM " = aten::div(%a, %s)", FM, 0, V_DEF},
    {"div.trunc", FM "|Float(24)",
     "%m : str = prim::Constant[value=\"trunc\"]()\n%o : " FM " = aten::div(%a, %b, %m)", FM, 0, V_DEF},
    {"div.floor", FM "|Float(24)",
     "%m : str = prim::Constant[value=\"floor\"]()\n%o : " FM " = aten::div(%a, %b, %m)", FM, 0, V_DEF},
    {"div.none", FM "|Float(24)", "%m : NoneType = prim::Constant()\n%o : " FM " = aten::div(%a, %b, %m)", FM, 0,
     V_DEF},
    {"pow.2", FM, "%e : int = prim::Constant[value=2]()\n%o : " FM " = aten::pow(%a, %e)", FM, 1, V_DEF},
    {"pow.3", FM, "%e : float = prim::Constant[value=3.]()\n%o : " FM " = aten::pow(%a, %e)", FM, 2, V_DEF},
    {"pow.-2", FM, "%e : int = prim::Constant[value=-2]()\n%o : " FM " = aten::pow(%a, %e)", FM, 2, V_SMALL},
    {"pow.half", FM, "%e : float = prim::Constant[value=0.5]()\n%o : " FM " = aten::pow(%a, %e)", FM, 1, V_POS},
    {"pow.-1", FM, "%e : int = prim::Constant[value=-1]()\n%o : " FM " = aten::pow(%a, %e)", FM, 1, V_DEF},
    {"pow.2.5", FM, "%e : float = prim::Constant[value=2.5]()\n%o : " FM " = aten::pow(%a, %e)", FM, 8, V_POS},
    {"pow.Scalar", FM, "%e : float = prim::Constant[value=2.]()\n%o : " FM " = aten::pow(%e, %a)", FM, 8, V_DEF},
    {"logical_and", FM "|Float(24)", "%o : " BM " = aten::logical_and(%a, %b)", BM, 0, V_SMALL},
    {"logical_or", FM "|Float(24)", "%o : " BM " = aten::logical_or(%a, %b)", BM, 0, V_SMALL},
    {"logical_xor", FM "|Float(24)", "%o : " BM " = aten::logical_xor(%a, %b)", BM, 0, V_SMALL},
    CMP(eq), CMP(ne), CMP(lt), CMP(le), CMP(gt), CMP(ge),
    {"clamp", FM,
     "%l : float = prim::Constant[value=-0.5]()\n%h : int = prim::Constant[value=2]()\n"
     "%o : " FM " = aten::clamp(%a, %l, %h)", FM, 0, V_DEF},
    {"clamp.max_only", FM,
     "%l : NoneType = prim::Constant()\n%h : float = prim::Constant[value=0.25]()\n"
     "%o : " FM " = aten::clamp(%a, %l, %h)", FM, 0, V_DEF},
    {"clamp.Tensor", FM "|Float(24)|Float(7, 1)", "%o : " FM " = aten::clamp(%a, %b, %c)", FM, 0, V_DEF},
    {"clamp_min", FM, "%l : float = prim::Constant[value=0.]()\n%o : " FM " = aten::clamp_min(%a, %l)", FM, 0,
     V_DEF},
    {"clamp_max.Tensor", FM "|Float(24)", "%o : " FM " = aten::clamp_max(%a, %b)", FM, 0, V_DEF},
    {"where", "Bool(7, 24)|Float(24)|" FM, "%o : " FM " = aten::where(%a, %b, %c)", FM, 0, V_DEF},
    {"where.ScalarOther", "Bool(7, 24)|" FM,
     "%s : float = prim::Constant[value=-7.]()\n%o : " FM " = aten::where(%a, %b, %s)", FM, 0, V_DEF},
    {"where.byte", "Byte(7, 24)|" FM "|" FM, "%o : " FM " = aten::where(%a, %b, %c)", FM, 0, V_DEF},
    {"masked_fill", FM "|Bool(24)",
     "%s : float = prim::Constant[value=-1e+30]()\n%o : " FM " = aten::masked_fill(%a, %b, %s)", FM, 0, V_DEF},
    {"masked_fill.Tensor", FM "|Bool(7, 24)|Double()", "%o : " FM " = aten::masked_fill(%a, %b, %c)", FM, 0,
     V_DEF},
    {"lerp", FM "|" FM, "%w : float = prim::Constant[value=0.75]()\n%o : " FM " = aten::lerp(%a, %b, %w)", FM, 0,
     V_DEF},
    {"lerp.Tensor", FM "|Float(24)|Float(7, 1)", "%o : " FM " = aten::lerp(%a, %b, %c)", FM, 0, V_UNIT},
    {"addcmul", FM "|Float(24)|" FM, "%v : float = prim::Constant[value=0.5]()\n%o : " FM
     " = aten::addcmul(%a, %b, %c, %v)", FM, 0, V_DEF},
    {"addcdiv", FM "|Float(24)|" FM, "%v : int = prim::Constant[value=2]()\n%o : " FM
     " = aten::addcdiv(%a, %b, %c, %v)", FM, 0, V_DEF},

    /* float64 binary */
    {"add.f64", DM "|Double(24)", ONE "%o : " DM " = aten::add(%a, %b, %k1)", DM, 0, V_DEF},
    {"div.floor.f64", DM "|Double(24)",
     "%m : str = prim::Constant[value=\"floor\"]()\n%o : " DM " = aten::div(%a, %b, %m)", DM, 0, V_DEF},
    {"pow.f64", DM "|Double(24)", "%o : " DM " = aten::pow(%a, %b)", DM, 0, V_POS},
    {"maximum.f64", DM "|Double(24)", "%o : " DM " = aten::maximum(%a, %b)", DM, 0, V_DEF},

    /* integers and bool */
    {"add.long", LM "|Long(24)", "%al : int = prim::Constant[value=3]()\n%o : " LM " = aten::add(%a, %b, %al)",
     LM, 0, V_DEF},
    {"sub.long", LM "|Long(24)", ONE "%o : " LM " = aten::sub(%a, %b, %k1)", LM, 0, V_DEF},
    {"mul.long", LM "|Long(24)", "%o : " LM " = aten::mul(%a, %b)", LM, 0, V_DEF},
    {"neg.long", LM, "%o : " LM " = aten::neg(%a)", LM, 0, V_DEF},
    {"abs.long", LM, "%o : " LM " = aten::abs(%a)", LM, 0, V_DEF},
    {"relu.long", LM, "%o : " LM " = aten::relu(%a)", LM, 0, V_DEF},
    {"square.long", LM, "%o : " LM " = aten::square(%a)", LM, 0, V_DEF},
    {"sign.long", LM, "%o : " LM " = aten::sign(%a)", LM, 0, V_DEF},
    {"floor.long", LM, "%o : " LM " = aten::floor(%a)", LM, 0, V_DEF},
    {"bitwise_not.long", LM, "%o : " LM " = aten::bitwise_not(%a)", LM, 0, V_DEF},
    {"bitwise_and.long", LM "|Long(24)", "%o : " LM " = aten::bitwise_and(%a, %b)", LM, 0, V_DEF},
    {"bitwise_or.long", LM "|Long(24)", "%o : " LM " = aten::bitwise_or(%a, %b)", LM, 0, V_DEF},
    {"__xor__.Scalar", LM, "%s : int = prim::Constant[value=6]()\n%o : " LM " = aten::__xor__(%a, %s)", LM, 0,
     V_DEF},
    {"maximum.long", LM "|Long(24)", "%o : " LM " = aten::maximum(%a, %b)", LM, 0, V_DEF},
    {"clamp.long", LM,
     "%l : int = prim::Constant[value=-3]()\n%h : int = prim::Constant[value=4]()\n"
     "%o : " LM " = aten::clamp(%a, %l, %h)", LM, 0, V_DEF},
    {"hardtanh.long", LM,
     "%l : float = prim::Constant[value=-2.5]()\n%h : int = prim::Constant[value=7]()\n"
     "%o : " LM " = aten::hardtanh(%a, %l, %h)", LM, 0, V_DEF},
    {"threshold.long", LM, "%t : int = prim::Constant[value=1]()\n%v : int = prim::Constant[value=-9]()\n"
     "%o : " LM " = aten::threshold(%a, %t, %v)", LM, 0, V_DEF},
    {"pow.long", LM, "%e : int = prim::Constant[value=3]()\n%o : " LM " = aten::pow(%a, %e)", LM, 0, V_DEF},
    {"pow.long0", LM, "%e : int = prim::Constant[value=0]()\n%o : " LM " = aten::pow(%a, %e)", LM, 0, V_DEF},
    {"eq.long", LM "|Long(24)", "%o : " BM " = aten::eq(%a, %b)", BM, 0, V_SMALL},
    {"lt.long.float", LM, "%s : float = prim::Constant[value=0.5]()\n%o : " BM " = aten::lt(%a, %s)", BM, 0,
     V_DEF},
    {"where.long", BM "|Long(24)|" LM, "%o : " LM " = aten::where(%a, %b, %c)", LM, 0, V_DEF},
    {"addcmul.long", LM "|Long(24)|" LM, "%v : int = prim::Constant[value=2]()\n%o : " LM
     " = aten::addcmul(%a, %b, %c, %v)", LM, 0, V_DEF},
    {"div.long", LM "|Long(24)", "%o : " FM " = aten::div(%a, %b)", FM, 0, V_DEF},
    {"sigmoid.long", LM, "%o : " FM " = aten::sigmoid(%a)", FM, 4, V_SMALL},
    {"mul.long.float", LM, "%s : float = prim::Constant[value=2.5]()\n%o : " FM " = aten::mul(%a, %s)", FM, 0,
     V_DEF},
    {"logical_not.long", LM, "%o : " BM " = aten::logical_not(%a)", BM, 0, V_SMALL},
    {"isnan.long", LM, "%o : " BM " = aten::isnan(%a)", BM, 0, V_DEF},
    {"add.int.long_number", IM, "%s : int = prim::Constant[value=2147483000]()\n" ONE
     "%o : " IM " = aten::add(%a, %s, %k1)", IM, 0, V_DEF},
    {"mul.int", IM "|Int(24)", "%o : " IM " = aten::mul(%a, %b)", IM, 0, V_DEF},
    {"add.int.long", IM "|Long(24)", ONE "%o : " LM " = aten::add(%a, %b, %k1)", LM, 0, V_DEF},
    {"add.int.long0d", IM "|Long()", ONE "%o : " IM " = aten::add(%a, %b, %k1)", IM, 0, V_DEF},
    {"add.float.double0d", FM "|Double()", ONE "%o : " FM " = aten::add(%a, %b, %k1)", FM, 0, V_DEF},
    {"add.float.double", FM "|Double(24)", ONE "%o : " DM " = aten::add(%a, %b, %k1)", DM, 0, V_DEF},
    {"add.byte", UM, "%s : int = prim::Constant[value=250]()\n" ONE "%o : " UM " = aten::add(%a, %s, %k1)", UM, 0,
     V_DEF},
    {"lt.byte", UM "|Byte(24)", "%o : " BM " = aten::lt(%a, %b)", BM, 0, V_DEF},
    {"neg.char", "Char(7, 24)", "%o : Char(7, 24) = aten::neg(%a)", "Char(7, 24)", 0, V_DEF},
    {"mul.short", "Short(7, 24)|Short(24)", "%o : Short(7, 24) = aten::mul(%a, %b)", "Short(7, 24)", 0, V_DEF},
    {"add.bool", BM "|Bool(24)", ONE "%o : " BM " = aten::add(%a, %b, %k1)", BM, 0, V_DEF},
    {"mul.bool", BM "|Bool(24)", "%o : " BM " = aten::mul(%a, %b)", BM, 0, V_DEF},
    {"logical_and.bool", BM "|Bool(24)", "%o : " BM " = aten::logical_and(%a, %b)", BM, 0, V_DEF},
    {"bitwise_xor.bool", BM "|Bool(24)", "%o : " BM " = aten::bitwise_xor(%a, %b)", BM, 0, V_DEF},
    {"bitwise_not.bool", BM, "%o : " BM " = aten::bitwise_not(%a)", BM, 0, V_DEF},
    {"square.bool", BM, "%o : " LM " = aten::square(%a)", LM, 0, V_DEF},
    {"maximum.bool", BM "|Bool(24)", "%o : " BM " = aten::maximum(%a, %b)", BM, 0, V_DEF},

    {"where.Scalar", BM, "%s : float = prim::Constant[value=2.5]()\n%t : int = prim::Constant[value=-4]()\n"
     "%o : " FM " = aten::where(%a, %s, %t)", FM, 0, V_DEF},
    {"remainder.Scalar_Tensor", FM, "%s : float = prim::Constant[value=5.5]()\n%o : " FM
     " = aten::remainder(%s, %a)", FM, 0, V_DEF},
    {"bitwise_or.Scalar_Tensor", LM, "%s : int = prim::Constant[value=12]()\n%o : " LM
     " = aten::bitwise_or(%s, %a)", LM, 0, V_DEF},
    {"__and__.Tensor", LM "|Long(24)", "%o : " LM " = aten::__and__(%a, %b)", LM, 0, V_DEF},
    {"isinf.int", IM, "%o : " BM " = aten::isinf(%a)", BM, 0, V_DEF},
    {"isfinite.long", LM, "%o : " BM " = aten::isfinite(%a)", BM, 0, V_DEF},
    {"ceil.int", IM, "%o : " IM " = aten::ceil(%a)", IM, 0, V_DEF},
    {"clamp_min.Tensor.long", LM "|Long(7, 1)", "%o : " LM " = aten::clamp_min(%a, %b)", LM, 0, V_DEF},
    {"clamp_max.int", IM, "%h : int = prim::Constant[value=5]()\n%o : " IM " = aten::clamp_max(%a, %h)", IM, 0,
     V_DEF},
    {"logical_or.long", LM "|Long(24)", "%o : " BM " = aten::logical_or(%a, %b)", BM, 0, V_SMALL},
    {"ge.int.Scalar", IM, "%s : int = prim::Constant[value=-1]()\n%o : " BM " = aten::ge(%a, %s)", BM, 0, V_DEF},
    {"true_divide.Scalar", FM, "%s : float = prim::Constant[value=0.]()\n%o : " FM " = aten::true_divide(%a, %s)",
     FM, 0, V_DEF},
    {"sub.Scalar.long", LM, "%s : int = prim::Constant[value=5]()\n%al : int = prim::Constant[value=-2]()\n"
     "%o : " LM " = aten::sub(%a, %s, %al)", LM, 0, V_DEF},

    /* conversions */
    {"type_as.f2l", FM "|Long(1)", "%o : " LM " = aten::type_as(%a, %b)", LM, 0, V_DEF},
    {"type_as.f2i", FM "|Int(1)", "%o : " IM " = aten::type_as(%a, %b)", IM, 0, V_DEF},
    {"type_as.d2b", DM "|Byte(1)", "%o : " UM " = aten::type_as(%a, %b)", UM, 0, V_DEF},
    {"type_as.l2f", LM "|Float(1)", "%o : " FM " = aten::type_as(%a, %b)", FM, 0, V_DEF},
    {"type_as.f2b", FM "|Bool(1)", "%o : " BM " = aten::type_as(%a, %b)", BM, 0, V_DEF},
    {"type_as.d2f", DM "|Float(1)", "%o : " FM " = aten::type_as(%a, %b)", FM, 0, V_DEF},
    {"type_as.b2f", BM "|Float(1)", "%o : " FM " = aten::type_as(%a, %b)", FM, 0, V_DEF},

    /* scalar inputs of the group */
    {"mul.float_input", FM "|float", "%o : " FM " = aten::mul(%a, %b)", FM, 0, V_DEF},
    {"add.int_input", LM "|int", ONE "%o : " LM " = aten::add(%a, %b, %k1)", LM, 0, V_DEF},
    {"mul.int_input.float", IM "|float", "%o : " FM " = aten::mul(%a, %b)", FM, 0, V_DEF},
    {"where.float_input", BM "|" FM "|float", "%o : " FM " = aten::where(%a, %b, %c)", FM, 0, V_DEF},

    /* chains and shapes */
    {"chain", FM "|Float(24)|float",
     "%z : " FM " = aten::relu(%a)\n%half : float = prim::Constant[value=0.5]()\n"
     "%y : " FM " = aten::mul(%z, %half)\n" ONE "%x : " FM " = aten::add(%y, %b, %k1)\n"
     "%w : " FM " = aten::mul(%x, %c)\n%o : " FM " = aten::sigmoid(%w)",
     FM, 8, V_DEF},
    {"multi", "Float(2, 3)|Float(3)",
     ONE "%x : Float(2, 3) = aten::add(%a, %b, %k1)\n%y : Float(2, 3) = aten::tanh(%x)\n"
     "%o : Float(2, 3) = aten::mul(%x, %y)\n%o2 : Bool(2, 3) = aten::gt(%x, %b)",
     "Float(2, 3)|Bool(2, 3)", 8, V_DEF},
    {"mixed.dtypes", LM "|Float(24)|Double(1)",
     "%x : " BM " = aten::gt(%a, %b)\n%y : " FM " = aten::where(%x, %b, %a)\n"
     "%o : " DM " = aten::type_as(%y, %c)",
     DM, 0, V_DEF},
    {"rank0", "Float()|Float()", ONE "%o : Float() = aten::sub(%a, %b, %k1)", "Float()", 0, V_DEF},
    {"rank1", "Float(37)|Float(1)", "%o : Float(37) = aten::mul(%a, %b)", "Float(37)", 0, V_DEF},
    {"rank3", "Float(2, 3, 4)|Float(3, 1)|Float(4)",
     "%x : Float(2, 3, 4) = aten::mul(%a, %b)\n" ONE "%o : Float(2, 3, 4) = aten::add(%x, %c, %k1)",
     "Float(2, 3, 4)", 0, V_DEF},
    {"rank4.bcast", "Float(2, 1, 3, 1)|Float(4, 1, 5)", "%o : Float(2, 4, 3, 5) = aten::maximum(%a, %b)",
     "Float(2, 4, 3, 5)", 0, V_DEF},
    {"long.rows", "Float(3, 100)|Float(100)", "%o : Float(3, 100) = aten::hardswish(%a)\n",
     "Float(3, 100)", 0, V_DEF},
    {"lastdim1", "Float(4, 1)|Float(1)|Float(2, 4, 1)", "%x : Float(4, 1) = aten::mul(%a, %b)\n"
     ONE "%o : Float(2, 4, 1) = aten::sub(%c, %x, %k1)", "Float(2, 4, 1)", 0, V_DEF},
    {"empty", "Float(0, 4)|Float(4)", "%o : Float(0, 4) = aten::mul(%a, %b)", "Float(0, 4)", 0, V_DEF},
};
#define NROWS (sizeof rows / sizeof rows[0])

/* ----------------------------------------------------------- row graphs */

#define MAXIO 8

typedef struct io {
  ts_dtype dt;  /* tensors; scalars: int64 (int), float64 (float), bool */
  bool tensor;
  int32_t nd;
  int64_t sizes[8];
} io;

/* A parsed row: the outer graph, its group and what the kernel is. */
typedef struct built {
  ts_graph *g;
  ts_node *group;
  ts_graph *sub;
  int nin, nout;
  io in[MAXIO], out[MAXIO];
  char kname[32];
  bool compiled;
} built;

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s\n%s", d.text.data ? d.text.data : "", text);
  else if (!TS_CHECK(ts_graph_verify(g, &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

/* Splits "A|B|C" into at most MAXIO strings (copied into buf). */
static int split(const char *s, char *buf, size_t cap, const char **parts) {
  snprintf(buf, cap, "%s", s);
  int n = 0;
  for (char *p = buf; p && n < MAXIO; n++) {
    parts[n] = p;
    p = strchr(p, '|');
    if (p)
      *p++ = '\0';
  }
  return n;
}

/* Builds the text "graph(ins) -> FusionGroup(ins) ... with FusionGroup = graph(ins): body" */
static ts_graph *row_graph(const row *r) {
  char ibuf[512], obuf[512];
  const char *ins[MAXIO], *outs[MAXIO];
  int nin = split(r->ins, ibuf, sizeof ibuf, ins), nout = split(r->outs, obuf, sizeof obuf, outs);
  static const char *const inames[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  static const char *const onames[] = {"o", "o2"};
  ts_buf t = {0};
  ts_buf sig = {0};
  for (int i = 0; i < nin; i++)
    ts_buf_printf(&sig, "%s%%%s : %s", i ? ", " : "", inames[i], ins[i]);
  ts_buf_printf(&t, "graph(%s):\n  ", sig.data);
  for (int j = 0; j < nout; j++)
    ts_buf_printf(&t, "%s%%%s : %s", j ? ", " : "", onames[j], outs[j]);
  ts_buf_puts(&t, " = prim::FusionGroup_0(");
  for (int i = 0; i < nin; i++)
    ts_buf_printf(&t, "%s%%%s", i ? ", " : "", inames[i]);
  ts_buf_puts(&t, ")\n  return (");
  for (int j = 0; j < nout; j++)
    ts_buf_printf(&t, "%s%%%s", j ? ", " : "", onames[j]);
  ts_buf_printf(&t, ")\nwith prim::FusionGroup_0 = graph(%s):\n", sig.data);
  for (const char *p = r->body; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n)
      ts_buf_printf(&t, "  %.*s\n", (int)n, p);
    p += n + (e ? 1 : 0);
  }
  ts_buf_puts(&t, "  return (");
  for (int j = 0; j < nout; j++)
    ts_buf_printf(&t, "%s%%%s", j ? ", " : "", onames[j]);
  ts_buf_puts(&t, ")\n");
  ts_graph *g = parse(t.data);
  ts_buf_free(&t);
  ts_buf_free(&sig);
  return g;
}

static ts_node *find_group(ts_graph *g) {
  for (ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next)
    if (ts_node_is(n, TS_K_prim_FusionGroup))
      return n;
  return NULL;
}

static bool io_of(const ts_type *t, io *x) {
  memset(x, 0, sizeof *x);
  if (t->kind == TS_TY_TENSOR && t->tensor && t->tensor->rank >= 0) {
    x->tensor = true;
    x->dt = (ts_dtype)t->tensor->dtype;
    x->nd = t->tensor->rank;
    for (int32_t i = 0; i < x->nd; i++)
      x->sizes[i] = t->tensor->sizes[i];
    return true;
  }
  x->dt = t->kind == TS_TY_INT ? TS_DT_INT64 : t->kind == TS_TY_FLOAT ? TS_DT_FLOAT64 : TS_DT_BOOL;
  return t->kind == TS_TY_INT || t->kind == TS_TY_FLOAT || t->kind == TS_TY_BOOL;
}

static int64_t numel(const io *x) {
  int64_t n = 1;
  for (int32_t i = 0; i < x->nd; i++)
    n *= x->sizes[i];
  return n;
}

/* ---------------------------------------------------------------- values */

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unit_rand(void) { return (double)(next_rand() >> 11) / 9007199254740992.0; }

/* One logical value of an input (a double for floats, an int64 else):
 * special value number `sp` (any integer; -1: random ones only), else
 * random, a quarter of them special. */
static void gen_value(ts_dtype dt, int vals, int64_t sp, double *f, int64_t *i) {
  static const double fspecial[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 1e-30, -1e-30, 1e30, -1e30,
                                    INFINITY, -INFINITY, NAN, 88.5, -88.5, 100.0, -100.0, 1e-40, 0.75, 1.5, -3.0};
  static const int64_t ispecial[] = {0, 1, -1, 2, -2, 7, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 127, -128,
                                     255, 3};
  if (ts_rt_dtype_is_float(dt)) {
    double v;
    size_t nsp = sizeof fspecial / sizeof fspecial[0];
    if (vals == V_UNIT)
      v = unit_rand() * 2 - 1;
    else if (vals != V_SMALL && sp >= 0 && (size_t)sp < 2 * nsp)
      v = fspecial[(size_t)sp % nsp];
    else if (next_rand() % 4 == 0 && vals != V_SMALL)
      v = fspecial[next_rand() % nsp];
    else if (vals == V_SMALL)
      v = (double)((int64_t)(next_rand() % 7) - 3);
    else
      v = (unit_rand() * 2 - 1) * 6;
    if (vals == V_POS)
      v = fabs(v);
    if (vals == V_MOD && isfinite(v) && fabs(v) > 1e6)
      v = copysign(1e6, v);
    if (dt == TS_DT_FLOAT32)
      v = (float)v;
    *f = v;
    *i = 0;
  } else if (dt == TS_DT_BOOL) {
    *i = (int64_t)(next_rand() & 1);
    *f = (double)*i;
  } else {
    int64_t v;
    size_t nsp = sizeof ispecial / sizeof ispecial[0];
    if (vals != V_SMALL && sp >= 0 && (size_t)sp < 2 * nsp)
      v = ispecial[(size_t)sp % nsp];
    else if (next_rand() % 4 == 0 && vals != V_SMALL)
      v = ispecial[next_rand() % nsp];
    else
      v = (int64_t)(next_rand() % 41) - 20;
    if (vals == V_SMALL)
      v = (int64_t)(next_rand() % 7) - 3;
    *i = v;
    *f = (double)v;
  }
}

/* A tensor holding logical values vals (row-major), laid out contiguously
 * or (transpose) with its last two dimensions' strides swapped. */
/* A tensor of x's type holding fv/iv: fresh, a transposed view (how 1), or
 * part 1 of 3 along the last dimension of a wider tensor (how 2: what
 * prim::ConstantChunk, kept outside a group by passes/fuse.c, hands the
 * group's kernel; rows are 3x as far apart as they are long). */
static ts_rt_tensor *make_tensor(ts_rt_ctx *c, const io *x, const double *fv, const int64_t *iv, int how) {
  ts_rt_tensor *t;
  int32_t nd = x->nd;
  if (how == 2 && nd >= 1) {
    int64_t sz[8];
    memcpy(sz, x->sizes, sizeof sz);
    sz[nd - 1] = 3 * x->sizes[nd - 1];
    ts_rt_tensor *base = ts_rt_tensor_new(c, x->dt, nd, sz, true);
    if (!base)
      return NULL;
    t = ts_rt_tensor_view(c, base, x->sizes[nd - 1], nd, x->sizes, base->strides);
    ts_rt_tensor_release(base);
  } else if (how == 1 && nd >= 2) {
    int64_t sz[8];
    memcpy(sz, x->sizes, sizeof sz);
    sz[nd - 1] = x->sizes[nd - 2], sz[nd - 2] = x->sizes[nd - 1];
    ts_rt_tensor *base = ts_rt_tensor_new(c, x->dt, nd, sz, true);
    if (!base)
      return NULL;
    int64_t st[8];
    memcpy(st, base->strides, (size_t)nd * sizeof *st);
    st[nd - 1] = base->strides[nd - 2], st[nd - 2] = base->strides[nd - 1];
    t = ts_rt_tensor_view(c, base, 0, nd, x->sizes, st);
    ts_rt_tensor_release(base);
  } else {
    t = ts_rt_tensor_new(c, x->dt, nd, x->sizes, true);
  }
  if (!t)
    return NULL;
  int64_t n = numel(x);
  size_t es = ts_dtype_size(x->dt);
  for (int64_t e = 0; e < n; e++) {
    int64_t off = 0, rem = e;
    for (int32_t d = nd - 1; d >= 0; d--) {
      off += (rem % x->sizes[d]) * t->strides[d];
      rem /= x->sizes[d];
    }
    void *p = (char *)ts_rt_tensor_data(t) + off * (int64_t)es;
    if (ts_rt_dtype_is_float(x->dt))
      ts_rt_store_f64(p, x->dt, fv[e]);
    else
      ts_rt_store_i64(p, x->dt, iv[e]);
  }
  return t;
}

/* Element e (row-major) of a tensor, as a double and as an int64. */
static void tensor_get(const ts_rt_tensor *t, int64_t e, double *f, int64_t *i) {
  int64_t off = 0, rem = e;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    off += (rem % t->sizes[d]) * t->strides[d];
    rem /= t->sizes[d];
  }
  const char *p = (const char *)ts_rt_tensor_data(t) + off * (int64_t)ts_dtype_size((ts_dtype)t->dtype);
  *f = ts_rt_load_f64(p, (ts_dtype)t->dtype);
  *i = ts_rt_dtype_is_float((ts_dtype)t->dtype) ? 0 : ts_rt_load_i64(p, (ts_dtype)t->dtype);
}

/* The ulp of a float32 or float64 result around |x|. */
static double ulp_of(double x, ts_dtype dt) {
  x = fabs(x);
  if (dt == TS_DT_FLOAT32) {
    float f = (float)x;
    if (isinf(f))
      return INFINITY;
    return (double)nextafterf(f, INFINITY) - (double)f;
  }
  if (isinf(x))
    return INFINITY;
  return nextafter(x, INFINITY) - x;
}

/* Whether kernel result (kf, ki) matches the interpreter's (rf, ri). */
static bool same(ts_dtype dt, double kf, int64_t ki, double rf, int64_t ri, double ulps, bool one) {
  if (!ts_rt_dtype_is_float(dt))
    return ki == ri;
  if (isnan(kf) || isnan(rf))
    return isnan(kf) && isnan(rf);
  if (ulps == 0)
    return kf == rf && signbit(kf) == signbit(rf);
  if (kf == rf)
    return true;
  if (isinf(kf) || isinf(rf))
    return false;
  double m = fmax(fabs(kf), fabs(rf));
  /* results near zero of a function whose inputs were not: absolute error
   * of a few ulp of 1 */
  double scale = fmax(m, one ? 1.0 : 1.0 / 1024);
  return fabs(kf - rf) <= ulps * ulp_of(scale, dt);
}

/* ------------------------------------------------------------ running */

typedef struct inputs {
  int nin;
  io *x;
  double *fv[MAXIO];
  int64_t *iv[MAXIO];
  double sf[MAXIO]; /* scalar inputs */
  int64_t si[MAXIO];
  uint8_t sb[MAXIO];
} inputs;

/* The interpreter's outputs for the row's subgraph on the inputs. */
static bool reference(ts_rt_interp *ip, ts_rt_ctx *c, built *b, inputs *in, ts_iv *ret) {
  ts_iv args[MAXIO];
  bool ok = true;
  for (int k = 0; k < b->nin; k++) {
    io *x = &b->in[k];
    if (x->tensor) {
      ts_rt_tensor *t = make_tensor(c, x, in->fv[k], in->iv[k], 0);
      ok = ok && t;
      args[k] = t ? ts_iv_tensor(t) : ts_iv_none();
    } else if (x->dt == TS_DT_FLOAT64) {
      args[k] = ts_iv_double(in->sf[k]);
    } else if (x->dt == TS_DT_INT64) {
      args[k] = ts_iv_int(in->si[k]);
    } else {
      args[k] = ts_iv_bool(in->sb[k] != 0);
    }
  }
  ts_buf where = {0};
  if (ok)
    ok = ts_rt_interp_run(ip, c, b->sub, args, (uint32_t)b->nin, ret, &where);
  if (!ok)
    fprintf(stderr, "interpreter: %s\n%s", c->err.data ? c->err.data : "", where.data ? where.data : "");
  ts_buf_free(&where);
  for (int k = 0; k < b->nin; k++)
    ts_iv_release(args[k]);
  return ok;
}

enum { L_CONTIG, L_CONTIG_SPLIT, L_ROWS, L_TRANSPOSED, L_INPLACE, L_CHUNK, L_COUNT };
static const char *const layout_names[] = {"contiguous", "contiguous, split", "rows", "transposed", "in place",
                                           "chunk parts"};

/* Runs the kernel on one layout and compares every output element. */
static void run_layout(kernel_fn k, const row *r, built *b, inputs *in, const ts_iv *ref, int layout, ts_rt_ctx *c) {
  const io *o = &b->out[0];
  int32_t nd = o->nd;
  int64_t n = numel(o);
  bool all_full = true; /* every tensor input has the output's shape */
  for (int i = 0; i < b->nin; i++)
    if (b->in[i].tensor &&
        (b->in[i].nd != nd || memcmp(b->in[i].sizes, o->sizes, (size_t)nd * sizeof(int64_t)) != 0))
      all_full = false;
  if ((layout == L_CONTIG || layout == L_CONTIG_SPLIT || layout == L_INPLACE) && !all_full)
    return;
  if (layout == L_INPLACE && !(b->in[0].tensor && b->in[0].dt == o->dt))
    return;
  if (layout == L_TRANSPOSED || layout == L_CHUNK) {
    bool any = false;
    for (int i = 0; i < b->nin; i++)
      any = any || (b->in[i].tensor && b->in[i].nd >= (layout == L_CHUNK ? 1 : 2));
    if (!any)
      return;
  }
  ts_rt_tensor *ts[MAXIO] = {NULL};
  void *ptrs[2 * MAXIO];
  int64_t strides[2 * MAXIO * 8];
  memset(strides, 0x5a, sizeof strides); /* garbage where the kernel must not read */
  for (int i = 0; i < b->nin; i++) {
    io *x = &b->in[i];
    if (x->tensor) {
      ts[i] = make_tensor(c, x, in->fv[i], in->iv[i], layout == L_TRANSPOSED ? 1 : layout == L_CHUNK ? 2 : 0);
      if (!TS_CHECK(ts[i] != NULL))
        goto out;
      ptrs[i] = ts_rt_tensor_data(ts[i]);
      int32_t lead = nd - x->nd;
      for (int32_t d = 0; d < nd; d++) {
        int64_t s = 0;
        if (d >= lead && !(x->sizes[d - lead] == 1 && o->sizes[d] != 1))
          s = ts[i]->strides[d - lead];
        strides[i * nd + d] = s;
      }
    } else {
      ptrs[i] = x->dt == TS_DT_FLOAT64 ? (void *)&in->sf[i] : x->dt == TS_DT_INT64 ? (void *)&in->si[i]
                                                                                  : (void *)&in->sb[i];
    }
  }
  void *obuf[MAXIO] = {NULL};
  for (int j = 0; j < b->nout; j++) {
    obuf[j] = calloc((size_t)(n > 0 ? n : 1), ts_dtype_size(b->out[j].dt));
    ptrs[b->nin + j] = obuf[j];
  }
  if (layout == L_INPLACE)
    ptrs[b->nin] = ptrs[0];
  ts_cg_kargs a = {ptrs, strides, layout == L_CONTIG || layout == L_CONTIG_SPLIT || layout == L_INPLACE};
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < nd; d++)
    rows *= o->sizes[d];
  if (a.contig) {
    if (layout == L_CONTIG_SPLIT) {
      k(&a, 0, n / 3);
      k(&a, n / 3, n);
    } else {
      k(&a, 0, n);
    }
  } else if (rows > 1) {
    k(&a, 0, rows / 2);
    k(&a, rows / 2, rows);
  } else {
    k(&a, 0, rows);
  }
  for (int j = 0; j < b->nout; j++) {
    const io *oj = &b->out[j];
    if (!TS_CHECK(ref[j].tag == TS_IV_TENSOR))
      break;
    const ts_rt_tensor *rt = ref[j].u.t;
    TS_CHECK_INTEQ(rt->dtype, oj->dt);
    const char *res = layout == L_INPLACE && j == 0 ? (const char *)ptrs[0] : (const char *)obuf[j];
    int bad = 0;
    for (int64_t e = 0; e < n && bad < 3; e++) {
      double rf, kf;
      int64_t ri, ki = 0;
      tensor_get(rt, e, &rf, &ri);
      const char *p = res + e * (int64_t)ts_dtype_size(oj->dt);
      kf = ts_rt_load_f64(p, oj->dt);
      if (!ts_rt_dtype_is_float(oj->dt))
        ki = ts_rt_load_i64(p, oj->dt);
      if (!same(oj->dt, kf, ki, rf, ri, r->ulps, (r->vals & T_ONE) != 0)) {
        bad++;
        ts_test_failed++;
        /* the inputs of element e, for the message */
        fprintf(stderr, "%s (%s) output %d element %lld: kernel %.9g (%lld), interpreter %.9g (%lld); inputs", r->name,
                layout_names[layout], j, (long long)e, kf, (long long)ki, rf, (long long)ri);
        for (int i = 0; i < b->nin; i++) {
          if (!b->in[i].tensor)
            continue;
          int64_t ie = 0, rem = e, mul = 1;
          for (int32_t d = nd - 1; d >= 0; d--) {
            int64_t idx = rem % o->sizes[d];
            rem /= o->sizes[d];
            int32_t dd = d - (nd - b->in[i].nd);
            if (dd >= 0) {
              ie += (b->in[i].sizes[dd] == 1 ? 0 : idx) * mul;
              mul *= b->in[i].sizes[dd];
            }
          }
          fprintf(stderr, " %.9g", ts_rt_dtype_is_float(b->in[i].dt) ? in->fv[i][ie] : (double)in->iv[i][ie]);
        }
        fprintf(stderr, "\n");
      } else {
        ts_test_passed++;
      }
    }
  }
  for (int j = 0; j < b->nout; j++)
    free(obuf[j]);
out:
  for (int i = 0; i < b->nin; i++)
    if (ts[i])
      ts_rt_tensor_release(ts[i]);
}

/* Builds every row's group, compiles the kernels into one module. */
static void test_rows(void) {
  built *bs = calloc(NROWS, sizeof *bs);
  if (!TS_CHECK(bs != NULL))
    return;
  ts_cg_module m;
  ts_diag d = {0};
  ts_cg_target_opts to = {NULL, NULL, NULL, 2};
  if (!TS_CHECK(ts_cg_module_init(&m, "fusion_rows", &to, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    free(bs);
    return;
  }
  for (size_t i = 0; i < NROWS; i++) {
    built *b = &bs[i];
    b->g = row_graph(&rows[i]);
    if (!b->g)
      continue;
    b->group = find_group(b->g);
    if (!TS_CHECK(b->group != NULL))
      continue;
    b->sub = ts_node_attr(b->group, "Subgraph")->u.g;
    b->nin = (int)b->group->ninputs;
    b->nout = (int)b->group->noutputs;
    bool ok = b->nin <= MAXIO && b->nout <= MAXIO;
    for (int k = 0; ok && k < b->nin; k++)
      ok = io_of(b->group->inputs[k]->type, &b->in[k]);
    for (int j = 0; ok && j < b->nout; j++)
      ok = io_of(b->group->outputs[j]->type, &b->out[j]) && b->out[j].tensor;
    if (!TS_CHECK(ok))
      continue;
    snprintf(b->kname, sizeof b->kname, "k%zu", i);
    ts_diag_free(&d);
    LLVMValueRef fn = ts_cg_fusion_kernel(&m, b->group, b->kname, &d);
    if (!TS_CHECK(fn != NULL)) {
      fprintf(stderr, "row %s: %s", rows[i].name, d.text.data ? d.text.data : "");
      continue;
    }
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    b->compiled = true;
  }
  ts_diag_free(&d);
  if (!TS_CHECK(ts_cg_module_optimize(&m, &d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_cg_module_dispose(&m);
    goto done;
  }
  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (!TS_CHECK(j != NULL)) {
    fprintf(stderr, "%s\n", err ? err : "");
    free(err);
    goto done;
  }
  ts_rt_resolver res = {0};
  ts_rt_interp *ip = ts_rt_interp_new(&res);
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  for (size_t i = 0; i < NROWS && ip; i++) {
    built *b = &bs[i];
    if (!b->compiled)
      continue;
    void *addr = ts_test_jit_lookup(j, b->kname);
    if (!TS_CHECK(addr != NULL))
      continue;
    kernel_fn k;
    memcpy(&k, &addr, sizeof k);
    inputs in = {.nin = b->nin, .x = b->in};
    bool ok = true;
    for (int q = 0; q < b->nin; q++) {
      io *x = &b->in[q];
      if (x->tensor) {
        int64_t ne = numel(x);
        in.fv[q] = calloc((size_t)(ne ? ne : 1), sizeof(double));
        in.iv[q] = calloc((size_t)(ne ? ne : 1), sizeof(int64_t));
        ok = ok && in.fv[q] && in.iv[q];
        for (int64_t e = 0; ok && e < ne; e++)
          gen_value(x->dt, rows[i].vals & V_MASK, e + 5 * q, &in.fv[q][e], &in.iv[q][e]);
      } else {
        double f;
        int64_t v;
        gen_value(x->dt == TS_DT_FLOAT64 ? TS_DT_FLOAT32 : x->dt, V_DEF, -1, &f, &v);
        in.sf[q] = x->dt == TS_DT_FLOAT64 && isnan(f) ? 1.25 : f;
        in.si[q] = v;
        in.sb[q] = (uint8_t)(v & 1);
      }
    }
    ts_iv ref[MAXIO];
    ts_rt_clear_error(&c);
    if (TS_CHECK(ok) && TS_CHECK(reference(ip, &c, b, &in, ref))) {
      for (int layout = 0; layout < L_COUNT; layout++)
        run_layout(k, &rows[i], b, &in, ref, layout, &c);
      for (int q = 0; q < b->nout; q++)
        ts_iv_release(ref[q]);
    }
    for (int q = 0; q < b->nin; q++) {
      free(in.fv[q]);
      free(in.iv[q]);
    }
  }
  ts_rt_ctx_free(&c);
  ts_rt_interp_free(ip);
  ts_test_jit_free(j);
done:
  for (size_t i = 0; i < NROWS; i++)
    if (bs[i].g)
      ts_graph_free(bs[i].g);
  free(bs);
}

/* ------------------------------------------------------------- refusals */

typedef struct refusal {
  const char *name;
  const char *text; /* a whole graph */
  const char *reason;
} refusal;

#define GRP1(ty, body, oty)                                                                                          \
  "graph(%a : " ty ", %b : " ty "):\n  %o : " oty " = prim::FusionGroup_0(%a, %b)\n  return (%o)\n"                 \
  "with prim::FusionGroup_0 = graph(%a : " ty ", %b : " ty "):\n" body "  return (%o)\n"

static const refusal refusals[] = {
    {"div.trunc.long", GRP1(LM, "  %m : str = prim::Constant[value=\"trunc\"]()\n  %o : " LM
                                 " = aten::div(%a, %b, %m)\n", LM), "ZeroDivisionError"},
    {"remainder.long", GRP1(LM, "  %o : " LM " = aten::remainder(%a, %b)\n", LM), "ZeroDivisionError"},
    {"fmod.long", GRP1(LM, "  %o : " LM " = aten::fmod(%a, %b)\n", LM), "ZeroDivisionError"},
    {"floor_divide.long", GRP1(LM, "  %o : " LM " = aten::floor_divide(%a, %b)\n", LM), "ZeroDivisionError"},
    {"pow.long.tensor", GRP1(LM, "  %o : " LM " = aten::pow(%a, %b)\n", LM), "non-constant exponent"},
    {"pow.long.negative", GRP1(LM, "  %e : int = prim::Constant[value=-2]()\n  %o : " LM " = aten::pow(%a, %e)\n",
                               LM), "negative integer powers"},
    {"half", GRP1("Half(7, 24)", "  %o : Half(7, 24) = aten::mul(%a, %b)\n", "Half(7, 24)"), "Half"},
    {"gcd", GRP1(LM, "  %o : " LM " = aten::gcd(%a, %b)\n", LM), "no lowering for aten::gcd"},
    {"incomplete", GRP1("Tensor", "  %o : Tensor = aten::mul(%a, %b)\n", "Tensor"), "complete"},
    {"bool.sub", GRP1(BM, "  %k1 : int = prim::Constant[value=1]()\n  %o : " BM " = aten::sub(%a, %b, %k1)\n", BM),
     "bool"},
    {"relu.bool", GRP1(BM, "  %o : " BM " = aten::relu(%a)\n", BM), "not implemented for 'Bool'"},
    {"gelu.long", GRP1(LM, "  %s : str = prim::Constant[value=\"none\"]()\n  %o : " LM " = aten::gelu(%a, %s)\n",
                       LM), "not implemented for 'Long'"},
    {"bitwise_and.float", GRP1(FM, "  %o : " FM " = aten::bitwise_and(%a, %b)\n", FM),
     "not implemented for 'Float'"},
    {"alpha.non_constant",
     "graph(%a : " FM ", %s : float):\n  %o : " FM " = prim::FusionGroup_0(%a, %s)\n  return (%o)\n"
     "with prim::FusionGroup_0 = graph(%a : " FM ", %s : float):\n  %o : " FM " = aten::add(%a, %a, %s)\n"
     "  return (%o)\n", "non-constant alpha"},
    {"masked_fill.byte_mask",
     "graph(%a : " FM ", %m : " UM "):\n  %o : " FM " = prim::FusionGroup_0(%a, %m)\n  return (%o)\n"
     "with prim::FusionGroup_0 = graph(%a : " FM ", %m : " UM "):\n  %v : float = prim::Constant[value=1.]()\n"
     "  %o : " FM " = aten::masked_fill(%a, %m, %v)\n  return (%o)\n", "not bool"},
    {"wrong.output.dtype", GRP1(FM, "  %o : " DM " = aten::mul(%a, %b)\n", DM), "typed Double but computes Float"},
    {"outputs.differ",
     "graph(%a : " FM ", %b : Float(5)):\n  %o : " FM ", %p : Float(5) = prim::FusionGroup_0(%a, %b)\n"
     "  return (%o, %p)\nwith prim::FusionGroup_0 = graph(%a : " FM ", %b : Float(5)):\n"
     "  %p : Float(5) = aten::neg(%b)\n  %o : " FM " = aten::mul(%a, %p)\n  return (%o, %p)\n",
     "other sizes"},
    {"no.broadcast",
     "graph(%a : " FM ", %b : Float(4)):\n  %o : " FM " = prim::FusionGroup_0(%a, %b)\n  return (%o)\n"
     "with prim::FusionGroup_0 = graph(%a : " FM ", %b : Float(4)):\n  %o : " FM " = aten::mul(%a, %b)\n"
     "  return (%o)\n", "does not broadcast"},
    {"cat",
     "graph(%a : Float(7, 24), %b : Float(7, 24)):\n  %o : Float(6, 5) = prim::FusionGroup_0(%a, %b)\n  return (%o)\n"
     "with prim::FusionGroup_0 = graph(%a : Float(7, 24), %b : Float(7, 24)):\n"
     "  %x : Float(7, 24) = aten::relu(%a)\n  %l : Tensor[] = prim::ListConstruct(%x, %b)\n"
     "  %z : int = prim::Constant[value=0]()\n  %o : Float(6, 5) = aten::cat(%l, %z)\n  return (%o)\n",
     "no lowering for prim::ListConstruct"},
    {"chunk",
     "graph(%a : Float(3, 4)):\n  %o : Float(3, 2) = prim::FusionGroup_0(%a)\n  return (%o)\n"
     "with prim::FusionGroup_0 = graph(%a : Float(3, 4)):\n"
     "  %x : Float(3, 2), %y : Float(3, 2) = prim::ConstantChunk[chunks=2, dim=1](%a)\n"
     "  %o : Float(3, 2) = aten::mul(%x, %y)\n  return (%o)\n",
     "no lowering for prim::ConstantChunk"},
};

static void test_refusals(void) {
  ts_cg_module m;
  ts_diag d = {0};
  if (!TS_CHECK(ts_cg_module_init(&m, "fusion_refusals", NULL, &d)))
    return;
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
    const refusal *r = &refusals[i];
    ts_graph *g = parse(r->text);
    if (!g)
      continue;
    ts_node *grp = find_group(g);
    ts_diag_free(&d);
    char name[32];
    snprintf(name, sizeof name, "r%zu", i);
    LLVMValueRef fn = grp ? ts_cg_fusion_kernel(&m, grp, name, &d) : NULL;
    if (!TS_CHECK(fn == NULL) || !TS_CHECK(d.text.data && strstr(d.text.data, r->reason)))
      fprintf(stderr, "refusal %s: got \"%s\", expected \"%s\"\n", r->name, d.text.data ? d.text.data : "",
              r->reason);
    /* nothing half-made is left in the module */
    TS_CHECK(LLVMGetNamedFunction(m.mod, name) == NULL);
    ts_graph_free(g);
  }
  ts_diag_free(&d);
  TS_CHECK(ts_cg_module_optimize(&m, &d));
  ts_diag_free(&d);
  ts_cg_module_dispose(&m);
}

/* ts_cg_fusion_supports on single nodes of a subgraph. */
static void test_supports(void) {
  ts_graph *g = parse("graph(%a : " FM ", %b : " LM ", %c : Half(7, 24)):\n"
                      "  %k1 : int = prim::Constant[value=1]()\n"
                      "  %x : " FM " = aten::add(%a, %a, %k1)\n"
                      "  %y : " LM " = aten::remainder(%b, %b)\n"
                      "  %z : Half(7, 24) = aten::relu(%c)\n"
                      "  %w : " BM " = aten::isnan(%a)\n"
                      "  %t : " FM " = aten::gcd(%a, %a)\n"
                      "  return (%x, %y, %z, %w, %t)\n");
  if (!g)
    return;
  bool expect[] = {true, true, false, false, true, false};
  int i = 0;
  for (ts_node *n = ts_block_first(g->block); n != g->block->ret && i < 6; n = n->next, i++) {
    ts_diag d = {0};
    bool ok = ts_cg_fusion_supports(n, &d);
    if (!TS_CHECK(ok == expect[i]))
      fprintf(stderr, "supports %s: %d (%s)\n", n->kind_name, ok, d.text.data ? d.text.data : "");
    TS_CHECK(ok || (d.text.data && d.text.len > 0));
    ts_diag_free(&d);
  }
  ts_graph_free(g);
}

/* An optimised float32 kernel is vector code as wide as the CPU it is
 * built for (named, not the host's: nothing runs here), and its loops need
 * no runtime overlap checks (llvm.loop.parallel_accesses). */
static void test_vector_ir(void) {
  static const struct {
    const char *cpu;
    const char *lanes; /* the vector type the loop vectoriser picks for the CPU */
  } levels[] = {{"x86-64-v2", "<4 x float>"}, {"x86-64-v3", "<8 x float>"}, {"x86-64-v4", "<8 x float>"}};
  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
    ts_cg_module m;
    ts_diag d = {0};
    ts_cg_target_opts to = {NULL, levels[l].cpu, NULL, 3};
    if (!TS_CHECK(ts_cg_module_init(&m, "fusion_ir", &to, &d)))
      return;
    ts_graph *g = parse("graph(%a : Float(64, 256), %b : Float(256)):\n"
                        "  %o : Float(64, 256) = prim::FusionGroup_0(%a, %b)\n  return (%o)\n"
                        "with prim::FusionGroup_0 = graph(%a : Float(64, 256), %b : Float(256)):\n"
                        "  %k1 : int = prim::Constant[value=1]()\n"
                        "  %x : Float(64, 256) = aten::add(%a, %b, %k1)\n"
                        "  %y : Float(64, 256) = aten::relu(%x)\n"
                        "  %o : Float(64, 256) = aten::sigmoid(%y)\n  return (%o)\n");
    if (g) {
      LLVMValueRef fn = ts_cg_fusion_kernel(&m, find_group(g), "kv", &d);
      if (TS_CHECK(fn != NULL)) {
        LLVMSetLinkage(fn, LLVMExternalLinkage);
        TS_CHECK(ts_cg_module_optimize(&m, &d));
        char *ir = LLVMPrintModuleToString(m.mod);
        if (!TS_CHECK(strstr(ir, levels[l].lanes) != NULL))
          fprintf(stderr, "%s: no %s in the optimised kernel\n", levels[l].cpu, levels[l].lanes);
        TS_CHECK(strstr(ir, "vector.memcheck") == NULL);
        TS_CHECK(strstr(ir, "llvm.loop.parallel_accesses") != NULL);
        LLVMDisposeMessage(ir);
      } else {
        fprintf(stderr, "%s", d.text.data ? d.text.data : "");
      }
      ts_graph_free(g);
    }
    ts_diag_free(&d);
    ts_cg_module_dispose(&m);
  }
}

int main(void) {
  ts_diag d = {0};
  if (!TS_CHECK(ts_rt_kernels_init(&d))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return ts_test_finish();
  }
  test_rows();
  test_refusals();
  test_supports();
  test_vector_ir();
  return ts_test_finish();
}
