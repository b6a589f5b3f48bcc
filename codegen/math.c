/* codegen/math.c: transcendental functions for the fused kernels, built
 * with LLVM's IR builder as private, always-inline functions
 * ("tsaot.expf").
 *
 * float32: our own straight-line code (no branches, no calls: selects for
 * the special cases, bit casts for exponents, llvm.fmuladd for the
 * polynomials), so that the loop vectorizer turns a loop calling them into
 * vector code once they are inlined. exp, expm1, log, log1p, tanh and
 * sigmoid compute in float with Cody-Waite reduction and minimax-like
 * polynomials (Chebyshev fits made with mpmath), and so do the gelus
 * (erf: a polynomial near 0, exp(-x^2/2) times a fitted H(1/(1+|x|/2))
 * beyond; tanh: x sigmoid(2u) with only 2u in double); log2, log10, erf,
 * erfc, pow, sin and cos compute in double internally (the accuracy they
 * need would take double-float arithmetic otherwise) with double
 * polynomials accurate to ~1e-10, far below a float ulp, and round once at
 * the end; their vectors are half as wide. pow works in base 2, so that
 * powers of two come out exact. Measured against the double C library
 * rounded to float at x86-64-v2, v3 and v4 (tests/unit/test_cg_math.c
 * prints it): at most 1 ulp, sigmoid 2, gelu (tanh) 3, gelu (erf) 4.
 * Nothing relies on llvm.fmuladd fusing (x86-64-v2 has no FMA).
 * sigmoid, tanh and the gelus divide with a true division, not a
 * reciprocal estimate (why: "float32: tanh, sigmoid" below), tanh from exp
 * rather than expm1 above 0.55; clamps are llvm.maxnum/minnum (one
 * instruction each) and exp's polynomial is evaluated by Estrin's scheme:
 * fused kernels calling several of these are bound by the latency of their
 * chains.
 *
 * Where it does less than PyTorch (SLEEF): sinf/cosf reduce the argument
 * with a three-part pi/2 in double, exact for |x| < 2^24; above that the
 * result loses accuracy (Payne-Hanek would be needed) but stays a sine of
 * some reduced argument in [-pi/4, pi/4], so within [-1, 1]. gelu at -inf is
 * NaN, as PyTorch's formula gives it.
 *
 * float64 calls the C library (exp, expm1, log, ..., pow); sigmoid and the
 * gelus are built from those calls. */
#include "codegen.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const ts_mh_names[TS_CG_MATH_COUNT] = {
    [TS_CG_EXP] = "exp",         [TS_CG_EXPM1] = "expm1",         [TS_CG_LOG] = "log",   [TS_CG_LOG1P] = "log1p",
    [TS_CG_LOG2] = "log2",       [TS_CG_LOG10] = "log10",         [TS_CG_TANH] = "tanh", [TS_CG_SIGMOID] = "sigmoid",
    [TS_CG_ERF] = "erf",         [TS_CG_ERFC] = "erfc",           [TS_CG_GELU_ERF] = "gelu_erf",
    [TS_CG_GELU_TANH] = "gelu_tanh", [TS_CG_POW] = "pow",         [TS_CG_SIN] = "sin",   [TS_CG_COS] = "cos",
};

const char *ts_cg_math_name(ts_cg_math_fn fn) {
  return (unsigned)fn < TS_CG_MATH_COUNT ? ts_mh_names[fn] : NULL;
}

/* ------------------------------------------------------------ coefficients
 * Polynomial coefficients, lowest degree first (Chebyshev fits, mpmath;
 * the float ones rounded to float). */

/* exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2; fit error 1.5e-9 */
static const double ts_mh_exp_f[] = {0.5, 0.1666666716337204, 0.04166645556688309, 0.00833331048488617,
                                     0.0013934541493654251, 0.00019891980628017336};
/* expm1(r) = r + r^2/2 + r^3 Q(r), |r| <= ln2/2; fit error 8.5e-9 */
static const double ts_mh_expm1_f[] = {0.1666666716337204, 0.04166654869914055, 0.00833332072943449,
                                       0.0013926926767453551, 0.0001988352305488661};
/* log(1+f) = 2 atanh(s), s = f/(2+f): R(z) = 2atanh(s)/s - 2 = z P(z), z = s^2 <= 0.0295; fit error 1.2e-9 */
static const double ts_mh_log_f[] = {0.6666666865348816, 0.40000125765800476, 0.28550398349761963,
                                     0.23341943323612213};
/* tanh(x) = x + x^3 T(x^2), |x| <= 0.55; fit error 1.3e-8 */
static const double ts_mh_tanh_f[] = {-0.3333333134651184, 0.13333113491535187, -0.05390942841768265,
                                      0.021309388801455498, -0.00661022774875164};
/* the double versions of exp and log; fit errors 5e-13, 3.3e-16 */
static const double ts_mh_exp_d[] = {0.49999999999951383,    0.16666666666662247,   0.041666666793628057,
                                     0.0083333333448720338,  0.0013888837087667207, 0.00019841222761353435,
                                     2.4869204166523371e-05, 2.7618777029845868e-06};
static const double ts_mh_log_d[] = {0.66666666666666696, 0.39999999999893221, 0.28571428628810996,
                                     0.22222210674238516, 0.18182922513515942, 0.15330617306743305,
                                     0.14630031364122861};
/* sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4; fit errors 3e-14, 2e-15 */
static const double ts_mh_sin_d[] = {-0.16666666666663743, 0.0083333333309878674, -0.00019841266828587379,
                                     2.7555964316089623e-06, -2.480318338656292e-08};
static const double ts_mh_cos_d[] = {0.041666666666664576, -0.0013888888887212015, 2.4801585147774786e-05,
                                     -2.7556350663368756e-07, 2.0698846339798877e-09};
/* erf(z) = z E(z^2), |z| <= 0.5; fit error 7.5e-16 */
static const double ts_mh_erf_d[] = {1.1283791670955119,     -0.37612638903145668,  0.11283791667784639,
                                     -0.026866169638650711,  0.0052239619144581022, -0.00085469924035986547,
                                     0.00011992266390873113, -1.3358065159142623e-05};
/* erfc(z) = t exp(-z^2 + P(w)), t = 1/(1+z/2), w = (t - 4/7) / (3/7), 0 <= z <= 12; fit error 2e-10
 * (the form of Numerical Recipes' erfcc, fitted to double accuracy here) */
static const double ts_mh_erfc_d[] = {-0.57487630178797744,   0.58560210472564567,    0.01932366021113914,
                                      -0.031907422986474671,  -0.0017650794899557439, 0.0043198491796589246,
                                      -0.00020371683224922976, -0.00070452239937270761, 0.00016023541238386306,
                                      0.00010048956264062599,  -4.7792474594392275e-05, -8.3827603836958092e-06,
                                      6.9806484677269706e-06,  -1.008960479228746e-07};

/* float gelu (erf), |x| <= 0.75: gelu(x) = x (1/2 + x E(x^2)), E(x^2) = erf(x/sqrt2) / (2x); fit error 2.8e-11 */
static const double ts_mh_gelu_e_f[] = {0.39894228039050655, -0.06649037877589353, 0.009973531411726294,
                                        -0.0011871367444196818, 0.0001147774655009322, -8.388504672308379e-06};
/* float gelu (erf), a = |x| in [0.75, 14.5]: a Phi(-a) exp(a^2/2) = H(s), s = 3.3 t - 1.4 in [-1, 1],
 * t = 1/(1 + a/2); fit error 3.7e-9 (relative) */
static const double ts_mh_gelu_h_f[] = {0.358687307295444,      -0.07705990045961825,   -0.049247817715571074,
                                        -0.009485246930895514,  0.0018711104105281601,  0.0006249372704233564,
                                        -0.0002122322994333458, -2.6827790351579602e-05, 2.643370924316187e-05,
                                        -1.4224877052767112e-06, -1.9950719281228947e-06};

#define TS_MH_N(a) (sizeof(a) / sizeof((a)[0]))

/* ln2 split: the high parts have enough trailing zero bits that k * HI is
 * exact for the k that occur (|k| < 2^8 for float, < 2^11 for double) */
#define TS_MH_LN2HI_F 0.693145751953125
#define TS_MH_LN2LO_F 1.428606765330187045e-06
#define TS_MH_LN2HI_D 6.93147180369123816490e-01
#define TS_MH_LN2LO_D 1.90821492927058770002e-10
#define TS_MH_LOG2E 1.4426950408889634074
/* pi/2 in three parts of 29, 29 and 53 bits: q * PIO2_1 and q * PIO2_2 are
 * exact for |q| < 2^24 */
#define TS_MH_PIO2_1 1.570796325802803
#define TS_MH_PIO2_2 9.920935774287987e-10
#define TS_MH_PIO2_3 2.2517417741562176e-18

/* ------------------------------------------------------------ IR helpers */

typedef struct ts_mh {
  ts_cg_module *m;
  LLVMBuilderRef b;
} ts_mh;

static LLVMValueRef ts_mh_kf(ts_mh *h, double v) {
  return LLVMConstReal(h->m->t_f32, v);
}
static LLVMValueRef ts_mh_kd(ts_mh *h, double v) {
  return LLVMConstReal(h->m->t_f64, v);
}
/* a constant of the type of `like` */
static LLVMValueRef ts_mh_k(LLVMValueRef like, double v) {
  return LLVMConstReal(LLVMTypeOf(like), v);
}
static LLVMValueRef ts_mh_ki(LLVMTypeRef t, long long v) {
  return LLVMConstInt(t, (unsigned long long)v, 1);
}
static LLVMValueRef ts_mh_add(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFAdd(h->b, a, b, "");
}
static LLVMValueRef ts_mh_sub(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFSub(h->b, a, b, "");
}
static LLVMValueRef ts_mh_mul(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFMul(h->b, a, b, "");
}
static LLVMValueRef ts_mh_div(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFDiv(h->b, a, b, "");
}
static LLVMValueRef ts_mh_neg(ts_mh *h, LLVMValueRef a) {
  return LLVMBuildFNeg(h->b, a, "");
}
static LLVMValueRef ts_mh_sel(ts_mh *h, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(h->b, c, a, b, "");
}
static LLVMValueRef ts_mh_cmp(ts_mh *h, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildFCmp(h->b, p, a, b, "");
}
static LLVMValueRef ts_mh_isnan(ts_mh *h, LLVMValueRef a) {
  return LLVMBuildFCmp(h->b, LLVMRealUNO, a, a, "");
}
static LLVMValueRef ts_mh_and(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAnd(h->b, a, b, "");
}
static LLVMValueRef ts_mh_or(ts_mh *h, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildOr(h->b, a, b, "");
}

/* A call of the overloaded intrinsic `name` on the type of args[0]. */
static LLVMValueRef ts_mh_intr(ts_mh *h, const char *name, LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(h->m->mod, id, &t, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(h->m->ctx, id, &t, 1);
  return LLVMBuildCall2(h->b, fty, fn, args, n, "");
}
static LLVMValueRef ts_mh_intr1(ts_mh *h, const char *name, LLVMValueRef a) {
  return ts_mh_intr(h, name, &a, 1);
}
/* a * b + c, fused where the target has it (either way is accurate enough
 * where it is used) */
static LLVMValueRef ts_mh_fma(ts_mh *h, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return ts_mh_intr(h, "llvm.fmuladd", args, 3);
}
static LLVMValueRef ts_mh_rint(ts_mh *h, LLVMValueRef a) {
  return ts_mh_intr1(h, "llvm.rint", a);
}
static LLVMValueRef ts_mh_fabs(ts_mh *h, LLVMValueRef a) {
  return ts_mh_intr1(h, "llvm.fabs", a);
}
static LLVMValueRef ts_mh_copysign(ts_mh *h, LLVMValueRef mag, LLVMValueRef sgn) {
  LLVMValueRef args[2] = {mag, sgn};
  return ts_mh_intr(h, "llvm.copysign", args, 2);
}

/* c[0] + c[1] x + ... + c[n-1] x^(n-1), Horner */
static LLVMValueRef ts_mh_poly(ts_mh *h, LLVMValueRef x, const double *c, size_t n) {
  LLVMValueRef acc = ts_mh_k(x, c[n - 1]);
  for (size_t i = n - 1; i-- > 0;)
    acc = ts_mh_fma(h, acc, x, ts_mh_k(x, c[i]));
  return acc;
}

/* max(x, lo) with NaN becoming lo: llvm.maxnum, one vmaxps when lo is a
 * constant (the backend puts the never-NaN operand where x86 wants it),
 * where a compare and a select are two instructions */
static LLVMValueRef ts_mh_max_k(ts_mh *h, LLVMValueRef x, double lo) {
  LLVMValueRef args[2] = {x, ts_mh_k(x, lo)};
  return ts_mh_intr(h, "llvm.maxnum", args, 2);
}

/* x clamped to [lo, hi]; NaN becomes lo (callers select NaN at the end),
 * so that no NaN reaches an fptosi */
static LLVMValueRef ts_mh_clamp(ts_mh *h, LLVMValueRef x, double lo, double hi) {
  LLVMValueRef args[2] = {ts_mh_max_k(h, x, lo), ts_mh_k(x, hi)};
  return ts_mh_intr(h, "llvm.minnum", args, 2);
}

/* c[0] + c[1] x + ... + c[n-1] x^(n-1) for n = 6, Estrin's scheme: three
 * independent pairs, then x^2 and x^4 combine them; the chain of dependent
 * operations is 4 long where Horner's is 5 fmas (the kernels that call exp
 * several times are bound by that chain's latency) */
static LLVMValueRef ts_mh_poly6(ts_mh *h, LLVMValueRef x, const double *c) {
  LLVMValueRef x2 = ts_mh_mul(h, x, x);
  LLVMValueRef p01 = ts_mh_fma(h, ts_mh_k(x, c[1]), x, ts_mh_k(x, c[0]));
  LLVMValueRef p23 = ts_mh_fma(h, ts_mh_k(x, c[3]), x, ts_mh_k(x, c[2]));
  LLVMValueRef p45 = ts_mh_fma(h, ts_mh_k(x, c[5]), x, ts_mh_k(x, c[4]));
  return ts_mh_fma(h, ts_mh_mul(h, x2, x2), p45, ts_mh_fma(h, x2, p23, p01));
}

/* NaN in, the same NaN out */
static LLVMValueRef ts_mh_keep_nan(ts_mh *h, LLVMValueRef x, LLVMValueRef r) {
  return ts_mh_sel(h, ts_mh_isnan(h, x), x, r);
}

static LLVMValueRef ts_mh_fext(ts_mh *h, LLVMValueRef x) {
  return LLVMBuildFPExt(h->b, x, h->m->t_f64, "");
}
static LLVMValueRef ts_mh_ftrunc(ts_mh *h, LLVMValueRef x) {
  return LLVMBuildFPTrunc(h->b, x, h->m->t_f32, "");
}

/* 2^k as a float for an i32 k in [-126, 127] */
static LLVMValueRef ts_mh_pow2f(ts_mh *h, LLVMValueRef k) {
  LLVMTypeRef i32 = h->m->t_i32;
  LLVMValueRef e = LLVMBuildAdd(h->b, k, ts_mh_ki(i32, 127), "");
  return LLVMBuildBitCast(h->b, LLVMBuildShl(h->b, e, ts_mh_ki(i32, 23), ""), h->m->t_f32, "");
}

/* u * 2^k for an i32 k in [-252, 254], in two exact steps so that only the
 * last multiplication rounds (into the subnormals, or to inf) */
static LLVMValueRef ts_mh_scale2f(ts_mh *h, LLVMValueRef u, LLVMValueRef k) {
  LLVMValueRef a = LLVMBuildAShr(h->b, k, ts_mh_ki(h->m->t_i32, 1), "");
  LLVMValueRef b = LLVMBuildSub(h->b, k, a, "");
  return ts_mh_mul(h, ts_mh_mul(h, u, ts_mh_pow2f(h, a)), ts_mh_pow2f(h, b));
}

/* x - q ln2 for a float x and an integral float q, |q| < 2^8; *lost gets
 * what rounding the last step lost (for expm1), if lost */
static LLVMValueRef ts_mh_reduce_ln2f(ts_mh *h, LLVMValueRef x, LLVMValueRef q, LLVMValueRef *lost) {
  LLVMValueRef r1 = ts_mh_sub(h, x, ts_mh_mul(h, q, ts_mh_kf(h, TS_MH_LN2HI_F))); /* exact */
  LLVMValueRef ql = ts_mh_mul(h, q, ts_mh_kf(h, TS_MH_LN2LO_F));
  LLVMValueRef r = ts_mh_sub(h, r1, ql);
  if (lost)
    *lost = ts_mh_sub(h, ts_mh_sub(h, r1, r), ql);
  return r;
}

/* x - q ln2 as two fmas (exp's reduction, where nothing needs what the
 * rounding lost): the first is exact as above, fused or not; the second
 * rounds once (twice where not fused: x86-64-v2) */
static LLVMValueRef ts_mh_reduce_ln2f_fma(ts_mh *h, LLVMValueRef x, LLVMValueRef q) {
  LLVMValueRef r1 = ts_mh_fma(h, q, ts_mh_kf(h, -TS_MH_LN2HI_F), x);
  return ts_mh_fma(h, q, ts_mh_kf(h, -TS_MH_LN2LO_F), r1);
}

/* --------------------------------------------------------- float32: exp */

/* exp(x) for a float x in [-104, 89] (no NaN): u 2^q, u = exp(r). How the
 * scaling goes: TS_MH_SCALE_FULL in two steps, so that results in the
 * subnormals round once; TS_MH_SCALE_NEG for x in [-104, 0] (q in [-150,
 * 0]): u 2^(q+64) is normal and exact, times 2^-64 rounds once (two
 * instructions fewer); TS_MH_SCALE_ONE for x in [-87, 88] (q in [-126,
 * 127]), one step. */
enum { TS_MH_SCALE_ONE, TS_MH_SCALE_NEG, TS_MH_SCALE_FULL };
static LLVMValueRef ts_mh_exp_core_f(ts_mh *h, LLVMValueRef xc, int scale) {
  LLVMValueRef q = ts_mh_rint(h, ts_mh_mul(h, xc, ts_mh_kf(h, TS_MH_LOG2E)));
  LLVMValueRef r = ts_mh_reduce_ln2f_fma(h, xc, q);
  LLVMValueRef p = ts_mh_poly6(h, r, ts_mh_exp_f);
  LLVMValueRef u = ts_mh_add(h, ts_mh_fma(h, ts_mh_mul(h, r, r), p, r), ts_mh_kf(h, 1.0));
  LLVMValueRef qi = LLVMBuildFPToSI(h->b, q, h->m->t_i32, "");
  if (scale == TS_MH_SCALE_FULL)
    return ts_mh_scale2f(h, u, qi);
  if (scale == TS_MH_SCALE_NEG)
    return ts_mh_mul(h, ts_mh_mul(h, u, ts_mh_pow2f(h, LLVMBuildAdd(h->b, qi, ts_mh_ki(h->m->t_i32, 64), ""))),
                     ts_mh_kf(h, 0x1p-64));
  return ts_mh_mul(h, u, ts_mh_pow2f(h, qi));
}

static LLVMValueRef ts_mh_expf(ts_mh *h, LLVMValueRef x) {
  /* exp(-104) rounds to 0 and exp(89) overflows: the clamp keeps q in
   * [-150, 128] and changes no result */
  LLVMValueRef xc = ts_mh_clamp(h, x, -104.0, 89.0);
  return ts_mh_keep_nan(h, x, ts_mh_exp_core_f(h, xc, TS_MH_SCALE_FULL));
}

/* expm1(x) = 2^q (expm1(r) + 1 - 2^-q) */
static LLVMValueRef ts_mh_expm1f(ts_mh *h, LLVMValueRef x) {
  LLVMTypeRef i32 = h->m->t_i32;
  /* below -20 the result rounds to -1 */
  LLVMValueRef xc = ts_mh_clamp(h, x, -20.0, 89.0);
  LLVMValueRef q = ts_mh_rint(h, ts_mh_mul(h, xc, ts_mh_kf(h, TS_MH_LOG2E)));
  LLVMValueRef lost;
  LLVMValueRef r = ts_mh_reduce_ln2f(h, xc, q, &lost);
  LLVMValueRef r2 = ts_mh_mul(h, r, r);
  LLVMValueRef p = ts_mh_poly(h, r, ts_mh_expm1_f, TS_MH_N(ts_mh_expm1_f));
  LLVMValueRef hq = ts_mh_fma(h, ts_mh_mul(h, r2, r), p, ts_mh_mul(h, r2, ts_mh_kf(h, 0.5)));
  /* the part of r that rounding lost, times expm1'(r) ~ 1 + r */
  hq = ts_mh_add(h, hq, ts_mh_fma(h, lost, r, lost));
  LLVMValueRef e = ts_mh_add(h, r, hq);
  LLVMValueRef qi = LLVMBuildFPToSI(h->b, q, i32, "");
  /* 1 - 2^-q rounds to 1 for q > 24 */
  LLVMValueRef qc = ts_mh_sel(h, LLVMBuildICmp(h->b, LLVMIntSGT, qi, ts_mh_ki(i32, 25), ""), ts_mh_ki(i32, 25), qi);
  LLVMValueRef t = ts_mh_sub(h, ts_mh_kf(h, 1.0), ts_mh_pow2f(h, LLVMBuildNeg(h->b, qc, "")));
  LLVMValueRef res = ts_mh_scale2f(h, ts_mh_add(h, e, t), qi);
  res = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_kf(h, 0.0)), x, res); /* -0 */
  return ts_mh_keep_nan(h, x, res);
}

/* --------------------------------------------------------- float32: log */

/* The pieces of log(x) for a positive finite float x (subnormals too):
 * log(x) = k ln2 + log(1+f), log(1+f) = f - hfsq + s (hfsq + R). */
typedef struct ts_mh_logparts {
  LLVMValueRef k, f, hfsq, sr;
} ts_mh_logparts;

/* from a float m in [sqrt(2)/2, sqrt(2)) */
static void ts_mh_log_core_f(ts_mh *h, LLVMValueRef m, ts_mh_logparts *o) {
  LLVMValueRef f = ts_mh_sub(h, m, ts_mh_kf(h, 1.0)); /* exact */
  LLVMValueRef s = ts_mh_div(h, f, ts_mh_add(h, f, ts_mh_kf(h, 2.0)));
  LLVMValueRef z = ts_mh_mul(h, s, s);
  LLVMValueRef R = ts_mh_mul(h, z, ts_mh_poly(h, z, ts_mh_log_f, TS_MH_N(ts_mh_log_f)));
  LLVMValueRef hfsq = ts_mh_mul(h, ts_mh_mul(h, f, f), ts_mh_kf(h, 0.5));
  o->f = f;
  o->hfsq = hfsq;
  o->sr = ts_mh_mul(h, s, ts_mh_add(h, hfsq, R));
}

/* Splits the bits of a positive float v into k and m in [sqrt(2)/2,
 * sqrt(2)) with v = 2^k m; *k gets the i32 k (plus kadj). */
static LLVMValueRef ts_mh_split_f(ts_mh *h, LLVMValueRef v, LLVMValueRef kadj, LLVMValueRef *k) {
  LLVMTypeRef i32 = h->m->t_i32;
  LLVMValueRef iv = LLVMBuildBitCast(h->b, v, i32, "");
  /* subtracting sqrt(2)/2's bits moves the exponent's step to sqrt(2)/2 */
  LLVMValueRef d = LLVMBuildSub(h->b, iv, ts_mh_ki(i32, 0x3f3504f3), "");
  *k = LLVMBuildAdd(h->b, LLVMBuildAShr(h->b, d, ts_mh_ki(i32, 23), ""), kadj, "");
  LLVMValueRef mi = LLVMBuildAdd(h->b, LLVMBuildAnd(h->b, d, ts_mh_ki(i32, 0x7fffff), ""), ts_mh_ki(i32, 0x3f3504f3), "");
  return LLVMBuildBitCast(h->b, mi, h->m->t_f32, "");
}

/* log(+0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN stays */
static LLVMValueRef ts_mh_log_specials(ts_mh *h, LLVMValueRef x, LLVMValueRef r, double zero_at) {
  LLVMValueRef inf = ts_mh_k(x, INFINITY);
  r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, inf), inf, r);
  r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_k(x, zero_at)), ts_mh_k(x, -INFINITY), r);
  r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, x, ts_mh_k(x, zero_at)), ts_mh_k(x, NAN), r);
  return ts_mh_keep_nan(h, x, r);
}

static LLVMValueRef ts_mh_logf(ts_mh *h, LLVMValueRef x) {
  LLVMTypeRef i32 = h->m->t_i32;
  /* subnormals: scale into the normals first */
  LLVMValueRef sub = ts_mh_cmp(h, LLVMRealOLT, x, ts_mh_kf(h, 0x1p-126));
  LLVMValueRef xs = ts_mh_sel(h, sub, ts_mh_mul(h, x, ts_mh_kf(h, 0x1p23)), x);
  LLVMValueRef kadj = ts_mh_sel(h, sub, ts_mh_ki(i32, -23), ts_mh_ki(i32, 0));
  LLVMValueRef k;
  LLVMValueRef m = ts_mh_split_f(h, xs, kadj, &k);
  ts_mh_logparts p;
  ts_mh_log_core_f(h, m, &p);
  LLVMValueRef dk = LLVMBuildSIToFP(h->b, k, h->m->t_f32, "");
  /* smallest terms first */
  LLVMValueRef r = ts_mh_fma(h, dk, ts_mh_kf(h, TS_MH_LN2LO_F), p.sr);
  r = ts_mh_add(h, ts_mh_sub(h, r, p.hfsq), p.f);
  r = ts_mh_fma(h, dk, ts_mh_kf(h, TS_MH_LN2HI_F), r);
  return ts_mh_log_specials(h, x, r, 0.0);
}

/* log1p(x): log(u) for u = 1 + x, plus what rounding 1 + x lost, c / u */
static LLVMValueRef ts_mh_log1pf(ts_mh *h, LLVMValueRef x) {
  LLVMTypeRef i32 = h->m->t_i32;
  LLVMValueRef one = ts_mh_kf(h, 1.0);
  LLVMValueRef u = ts_mh_add(h, one, x);
  LLVMValueRef k;
  LLVMValueRef m = ts_mh_split_f(h, u, ts_mh_ki(i32, 0), &k);
  /* the rounding error of 1 + x, exact either way (for k >= 2, x >= 3 > 1) */
  LLVMValueRef big = LLVMBuildICmp(h->b, LLVMIntSGE, k, ts_mh_ki(i32, 2), "");
  LLVMValueRef c = ts_mh_sel(h, big, ts_mh_sub(h, one, ts_mh_sub(h, u, x)), ts_mh_sub(h, x, ts_mh_sub(h, u, one)));
  c = ts_mh_div(h, c, u);
  /* past 2^25 the correction is below the result's ulp (and u - x may be
   * inf - x) */
  c = ts_mh_sel(h, LLVMBuildICmp(h->b, LLVMIntSLT, k, ts_mh_ki(i32, 25), ""), c, ts_mh_kf(h, 0.0));
  ts_mh_logparts p;
  ts_mh_log_core_f(h, m, &p);
  LLVMValueRef dk = LLVMBuildSIToFP(h->b, k, h->m->t_f32, "");
  LLVMValueRef r = ts_mh_add(h, ts_mh_fma(h, dk, ts_mh_kf(h, TS_MH_LN2LO_F), c), p.sr);
  r = ts_mh_add(h, ts_mh_sub(h, r, p.hfsq), p.f);
  r = ts_mh_fma(h, dk, ts_mh_kf(h, TS_MH_LN2HI_F), r);
  r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_kf(h, 0.0)), x, r); /* -0 */
  return ts_mh_log_specials(h, x, r, -1.0);
}

/* ------------------------------------------------------ double-precision
 * cores for the float functions that compute in double: accurate to
 * ~1e-12, so that rounding to float decides the result. */

/* exp(y) for a double y; y is clamped to [-700, 700] (NaN: -700), beyond
 * which a float result is 0 or inf anyway */
static LLVMValueRef ts_mh_exp_d_core(ts_mh *h, LLVMValueRef y) {
  LLVMTypeRef i64 = h->m->t_i64;
  LLVMValueRef yc = ts_mh_clamp(h, y, -700.0, 700.0);
  LLVMValueRef n = ts_mh_rint(h, ts_mh_mul(h, yc, ts_mh_kd(h, TS_MH_LOG2E)));
  LLVMValueRef r = ts_mh_sub(h, yc, ts_mh_mul(h, n, ts_mh_kd(h, TS_MH_LN2HI_D)));
  r = ts_mh_sub(h, r, ts_mh_mul(h, n, ts_mh_kd(h, TS_MH_LN2LO_D)));
  LLVMValueRef p = ts_mh_poly(h, r, ts_mh_exp_d, TS_MH_N(ts_mh_exp_d));
  LLVMValueRef u = ts_mh_add(h, ts_mh_fma(h, ts_mh_mul(h, r, r), p, r), ts_mh_kd(h, 1.0));
  LLVMValueRef ni = LLVMBuildFPToSI(h->b, n, i64, "");
  LLVMValueRef e = LLVMBuildShl(h->b, LLVMBuildAdd(h->b, ni, ts_mh_ki(i64, 1023), ""), ts_mh_ki(i64, 52), "");
  return ts_mh_mul(h, u, LLVMBuildBitCast(h->b, e, h->m->t_f64, ""));
}

/* log(v) = dk ln2 + log(m) for a positive, finite, normal double v: sets
 * *dk (integral, as a double) and returns log(m), m in [sqrt(2)/2, sqrt(2)) */
static LLVMValueRef ts_mh_log_d_parts(ts_mh *h, LLVMValueRef v, LLVMValueRef *dk) {
  LLVMTypeRef i64 = h->m->t_i64;
  const long long sqrt1_2 = 0x3fe6a09e667f3bcdLL;
  LLVMValueRef iv = LLVMBuildBitCast(h->b, v, i64, "");
  LLVMValueRef d = LLVMBuildSub(h->b, iv, ts_mh_ki(i64, sqrt1_2), "");
  LLVMValueRef k = LLVMBuildAShr(h->b, d, ts_mh_ki(i64, 52), "");
  LLVMValueRef mi = LLVMBuildAdd(h->b, LLVMBuildAnd(h->b, d, ts_mh_ki(i64, 0xfffffffffffffLL), ""),
                                 ts_mh_ki(i64, sqrt1_2), "");
  LLVMValueRef m = LLVMBuildBitCast(h->b, mi, h->m->t_f64, "");
  LLVMValueRef f = ts_mh_sub(h, m, ts_mh_kd(h, 1.0));
  LLVMValueRef s = ts_mh_div(h, f, ts_mh_add(h, f, ts_mh_kd(h, 2.0)));
  LLVMValueRef z = ts_mh_mul(h, s, s);
  LLVMValueRef R = ts_mh_mul(h, z, ts_mh_poly(h, z, ts_mh_log_d, TS_MH_N(ts_mh_log_d)));
  LLVMValueRef hfsq = ts_mh_mul(h, ts_mh_mul(h, f, f), ts_mh_kd(h, 0.5));
  *dk = LLVMBuildSIToFP(h->b, k, h->m->t_f64, "");
  return ts_mh_add(h, ts_mh_sub(h, ts_mh_mul(h, s, ts_mh_add(h, hfsq, R)), hfsq), f);
}

/* 2^y for a double y, clamped to [-1000, 1000] (NaN: -1000), beyond which
 * a float result is 0 or inf anyway; exact when y is an integer */
static LLVMValueRef ts_mh_exp2_d_core(ts_mh *h, LLVMValueRef y) {
  LLVMTypeRef i64 = h->m->t_i64;
  LLVMValueRef yc = ts_mh_clamp(h, y, -1000.0, 1000.0);
  LLVMValueRef n = ts_mh_rint(h, yc);
  LLVMValueRef r = ts_mh_mul(h, ts_mh_sub(h, yc, n), ts_mh_kd(h, 0.69314718055994530942));
  LLVMValueRef p = ts_mh_poly(h, r, ts_mh_exp_d, TS_MH_N(ts_mh_exp_d));
  LLVMValueRef u = ts_mh_add(h, ts_mh_fma(h, ts_mh_mul(h, r, r), p, r), ts_mh_kd(h, 1.0));
  /* 2^n in two factors: n may be below the normal exponents */
  LLVMValueRef ni = LLVMBuildFPToSI(h->b, n, i64, "");
  LLVMValueRef a = LLVMBuildAShr(h->b, ni, ts_mh_ki(i64, 1), "");
  LLVMValueRef b = LLVMBuildSub(h->b, ni, a, "");
  LLVMValueRef pa = LLVMBuildShl(h->b, LLVMBuildAdd(h->b, a, ts_mh_ki(i64, 1023), ""), ts_mh_ki(i64, 52), "");
  LLVMValueRef pb = LLVMBuildShl(h->b, LLVMBuildAdd(h->b, b, ts_mh_ki(i64, 1023), ""), ts_mh_ki(i64, 52), "");
  u = ts_mh_mul(h, u, LLVMBuildBitCast(h->b, pa, h->m->t_f64, ""));
  return ts_mh_mul(h, u, LLVMBuildBitCast(h->b, pb, h->m->t_f64, ""));
}

/* erfc(z) for a double z >= 0; 0 past 12 (erfc(12) ~ 1e-64: even
 * 0.5 x erfc(x/sqrt2) rounds to 0 there) */
static LLVMValueRef ts_mh_erfc_d_core(ts_mh *h, LLVMValueRef z) {
  LLVMValueRef zc = ts_mh_clamp(h, z, 0.0, 12.0);
  LLVMValueRef t = ts_mh_div(h, ts_mh_kd(h, 1.0), ts_mh_fma(h, zc, ts_mh_kd(h, 0.5), ts_mh_kd(h, 1.0)));
  LLVMValueRef w = ts_mh_fma(h, t, ts_mh_kd(h, 7.0 / 3.0), ts_mh_kd(h, -4.0 / 3.0));
  LLVMValueRef p = ts_mh_poly(h, w, ts_mh_erfc_d, TS_MH_N(ts_mh_erfc_d));
  LLVMValueRef y = ts_mh_sub(h, p, ts_mh_mul(h, zc, zc));
  LLVMValueRef r = ts_mh_mul(h, t, ts_mh_exp_d_core(h, y));
  return ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOGT, z, ts_mh_kd(h, 12.0)), ts_mh_kd(h, 0.0), r);
}

/* erf(z) = z E(z^2) for |z| <= 0.5 */
static LLVMValueRef ts_mh_erf_small_d(ts_mh *h, LLVMValueRef z) {
  return ts_mh_mul(h, z, ts_mh_poly(h, ts_mh_mul(h, z, z), ts_mh_erf_d, TS_MH_N(ts_mh_erf_d)));
}

/* log2, log10: in double, k log_b(2) + log(m) log_b(e) */
static LLVMValueRef ts_mh_logbf(ts_mh *h, LLVMValueRef x, double log_b_2, double log_b_e) {
  LLVMValueRef xd = ts_mh_fext(h, x);
  /* zero, negatives, inf, NaN get their results from the selects below;
   * keep the core's input positive and finite meanwhile */
  LLVMValueRef ok = ts_mh_and(h, ts_mh_cmp(h, LLVMRealOGT, xd, ts_mh_kd(h, 0.0)),
                              ts_mh_cmp(h, LLVMRealOLT, xd, ts_mh_kd(h, INFINITY)));
  LLVMValueRef dk;
  LLVMValueRef lm = ts_mh_log_d_parts(h, ts_mh_sel(h, ok, xd, ts_mh_kd(h, 1.0)), &dk);
  LLVMValueRef r = ts_mh_fma(h, dk, ts_mh_kd(h, log_b_2), ts_mh_mul(h, lm, ts_mh_kd(h, log_b_e)));
  return ts_mh_log_specials(h, x, ts_mh_ftrunc(h, r), 0.0);
}

/* ------------------------------------------------ float32: tanh, sigmoid
 * sigmoid, tanh and the gelus divide with a true division (vdivps), not
 * with a reciprocal estimate and Newton steps (an `arcp` fdiv): what an
 * estimate gives depends on the vector width and the CPU (rcpps, 12 bits,
 * within 1.5 2^-12 by Intel's and AMD's manuals whatever their tables, for
 * SSE, AVX and the 256-bit vectors of AVX-512, the epilogues of 512-bit
 * loops included; vrcp14ps, 2^-14, for 512-bit vectors only), and one
 * Newton step after a 12-bit one leaves up to 2.25 ulp (sigmoid was 3 ulp
 * on AVX2 and at x86-64-v4). A second step, correct for any estimate (the
 * residual against the exact 1 + e: half an ulp with FMA), cost 3 more
 * instructions; on Zen 4 both were slower than vdivps, whose throughput
 * these kernels, bound by the FMA units, do not reach (sigmoid over 4096
 * floats in cache: 0.242 ns an element with one step, 0.286 with two,
 * 0.205 with vdivps, 512-bit vectors; 0.486, 0.570, 0.422 at x86-64-v3). A
 * true division is IEEE on every CPU: the quotient is within half an ulp
 * of a / fl(1 + e). */

/* tanh(|x|) = 1 - 2 / (e + 1), e = exp(2|x|), for |x| >= 0.55 (the
 * subtraction loses at most a bit there, tanh >= 0.5), tanh(10) rounding to
 * 1; a polynomial below 0.55. exp's argument lies in [0, 20]: no clamp to
 * its range, one-step scaling (at most 1 ulp in all,
 * tests/unit/test_cg_math.c). */
static LLVMValueRef ts_mh_tanhf(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef a = ts_mh_clamp(h, ts_mh_fabs(h, x), 0.0, 10.0);
  LLVMValueRef one = ts_mh_kf(h, 1.0);
  LLVMValueRef e = ts_mh_exp_core_f(h, ts_mh_add(h, a, a), TS_MH_SCALE_ONE);
  LLVMValueRef t = ts_mh_sub(h, one, ts_mh_div(h, ts_mh_kf(h, 2.0), ts_mh_add(h, e, one)));
  LLVMValueRef z = ts_mh_mul(h, a, a);
  LLVMValueRef small = ts_mh_fma(h, ts_mh_mul(h, a, z), ts_mh_poly(h, z, ts_mh_tanh_f, TS_MH_N(ts_mh_tanh_f)), a);
  t = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, a, ts_mh_kf(h, 0.55)), small, t);
  return ts_mh_keep_nan(h, x, ts_mh_copysign(h, t, x));
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e = exp(-|x|) <= 1
 * neither overflows nor cancels */
static LLVMValueRef ts_mh_sigmoid(ts_mh *h, LLVMValueRef x, LLVMValueRef e) {
  LLVMValueRef one = ts_mh_k(x, 1.0);
  LLVMValueRef num = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOGE, x, ts_mh_k(x, 0.0)), one, e);
  return ts_mh_div(h, num, ts_mh_add(h, one, e));
}

/* ts_mh_sigmoid in float: -|x| needs only the lower clamp of exp, and one
 * NaN select serves both */
static LLVMValueRef ts_mh_sigmoidf(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef e = ts_mh_exp_core_f(h, ts_mh_max_k(h, ts_mh_neg(h, ts_mh_fabs(h, x)), -104.0), TS_MH_SCALE_NEG);
  return ts_mh_keep_nan(h, x, ts_mh_sigmoid(h, x, e));
}

/* --------------------------------------------- float32 via double: erf... */

static LLVMValueRef ts_mh_erff(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef xd = ts_mh_fext(h, x);
  LLVMValueRef z = ts_mh_fabs(h, xd);
  LLVMValueRef small = ts_mh_erf_small_d(h, xd);
  LLVMValueRef large = ts_mh_copysign(h, ts_mh_sub(h, ts_mh_kd(h, 1.0), ts_mh_erfc_d_core(h, z)), xd);
  LLVMValueRef r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, z, ts_mh_kd(h, 0.5)), small, large);
  return ts_mh_keep_nan(h, x, ts_mh_ftrunc(h, r));
}

static LLVMValueRef ts_mh_erfcf(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef xd = ts_mh_fext(h, x);
  LLVMValueRef z = ts_mh_fabs(h, xd);
  LLVMValueRef e = ts_mh_erfc_d_core(h, z);
  LLVMValueRef r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, xd, ts_mh_kd(h, 0.0)), ts_mh_sub(h, ts_mh_kd(h, 2.0), e), e);
  LLVMValueRef small = ts_mh_sub(h, ts_mh_kd(h, 1.0), ts_mh_erf_small_d(h, xd));
  r = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, z, ts_mh_kd(h, 0.5)), small, r);
  return ts_mh_keep_nan(h, x, ts_mh_ftrunc(h, r));
}

/* PyTorch's formula gives NaN at -inf (-inf * 0); so do we */
static LLVMValueRef ts_mh_gelu_neg_inf(ts_mh *h, LLVMValueRef x, LLVMValueRef r) {
  return ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_k(x, -INFINITY)), ts_mh_k(x, NAN), r);
}

/* exp(y + ylo) 2^64 for floats y and ylo with y + ylo in [-120, 0] and
 * either |y| >= 1/4 (a multiple of 2^-25 then: y - q ln2 is exact) and
 * |ylo| <= 1/8, or ylo below y's ulp (q = 0 where |y| < 1/4): a normal
 * float for every such y (2^(q+64), q >= -174), so that a caller scaling
 * by 2^-64 last rounds only once where the result is subnormal. q comes
 * from y + ylo, so that the reduced argument stays within ln2/2. */
static LLVMValueRef ts_mh_exp_x64f(ts_mh *h, LLVMValueRef y, LLVMValueRef ylo) {
  LLVMValueRef q = ts_mh_rint(h, ts_mh_mul(h, ts_mh_add(h, y, ylo), ts_mh_kf(h, TS_MH_LOG2E)));
  LLVMValueRef r = ts_mh_add(h, ts_mh_reduce_ln2f_fma(h, y, q), ylo);
  LLVMValueRef u = ts_mh_add(h, ts_mh_fma(h, ts_mh_mul(h, r, r), ts_mh_poly6(h, r, ts_mh_exp_f), r), ts_mh_kf(h, 1.0));
  LLVMValueRef qi = LLVMBuildFPToSI(h->b, q, h->m->t_i32, "");
  return ts_mh_mul(h, u, ts_mh_pow2f(h, LLVMBuildAdd(h->b, qi, ts_mh_ki(h->m->t_i32, 64), "")));
}

/* gelu(x) = x Phi(x), in float. |x| <= 0.75: x (1/2 + x E(x^2)). Above,
 * with a = |x|: T = a Phi(-a) = H(t) exp(-a^2/2), and gelu = -T for x < 0,
 * x - T for x > 0 (no cancellation either way). -a^2/2 is split into y +
 * ylo without an fma (x86-64-v2 has none, and llvm.fmuladd then rounds
 * twice: 63 ulp at x = -12): ah, a's upper 12 bits, squares exactly, and
 * ylo = -(ah al + al^2/2) rounds once, a hundredth of an ulp of exp's
 * argument; exp's 2^q is applied as 2^(q+64) times 2^-64 after H
 * (ts_mh_exp_x64f). Past |x| = 14.5 T rounds to 0. At most 4 ulp
 * (tests/unit/test_cg_math.c, at every ISA level; the worst near x =
 * -0.76, from rounding in H's polynomial), where the double version was 1
 * ulp at about 4 times the cost: PyTorch's own float formula cancels far
 * worse below x = -2. */
static LLVMValueRef ts_mh_gelu_erff(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef a = ts_mh_fabs(h, x);
  LLVMValueRef small = ts_mh_fma(h, x, ts_mh_poly(h, ts_mh_mul(h, x, x), ts_mh_gelu_e_f, TS_MH_N(ts_mh_gelu_e_f)),
                                 ts_mh_kf(h, 0.5));
  small = ts_mh_mul(h, x, small);
  LLVMValueRef ac = ts_mh_clamp(h, a, 0.75, 14.5);
  LLVMTypeRef i32 = h->m->t_i32;
  LLVMValueRef ah = LLVMBuildBitCast(
      h->b, LLVMBuildAnd(h->b, LLVMBuildBitCast(h->b, ac, i32, ""), ts_mh_ki(i32, (int32_t)0xfffff000), ""),
      h->m->t_f32, "");
  LLVMValueRef al = ts_mh_sub(h, ac, ah); /* exact */
  /* y: 24 bits, a multiple of 2^-25 since a >= 0.75 (what exp_x64f needs) */
  LLVMValueRef y = ts_mh_mul(h, ts_mh_mul(h, ah, ah), ts_mh_kf(h, -0.5));
  /* ah al and al^2/2 are exact; |ylo| < 2^-11 a^2 */
  LLVMValueRef ylo = ts_mh_fma(h, al, ts_mh_mul(h, al, ts_mh_kf(h, -0.5)), ts_mh_neg(h, ts_mh_mul(h, ah, al)));
  LLVMValueRef e64 = ts_mh_exp_x64f(h, y, ylo);
  LLVMValueRef t = ts_mh_div(h, ts_mh_kf(h, 1.0), ts_mh_fma(h, ac, ts_mh_kf(h, 0.5), ts_mh_kf(h, 1.0)));
  LLVMValueRef sv = ts_mh_fma(h, t, ts_mh_kf(h, 3.3), ts_mh_kf(h, -1.4));
  LLVMValueRef H = ts_mh_poly(h, sv, ts_mh_gelu_h_f, TS_MH_N(ts_mh_gelu_h_f));
  LLVMValueRef T = ts_mh_mul(h, ts_mh_mul(h, H, e64), ts_mh_kf(h, 0x1p-64));
  LLVMValueRef neg = ts_mh_cmp(h, LLVMRealOLT, x, ts_mh_kf(h, 0.0));
  LLVMValueRef large = ts_mh_sel(h, neg, ts_mh_neg(h, T), ts_mh_sub(h, x, T));
  LLVMValueRef res = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLE, a, ts_mh_kf(h, 0.75)), small, large);
  return ts_mh_keep_nan(h, x, ts_mh_gelu_neg_inf(h, x, res));
}

/* x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
static LLVMValueRef ts_mh_gelu_u(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef x3 = ts_mh_mul(h, ts_mh_mul(h, x, x), x);
  return ts_mh_mul(h, ts_mh_k(x, 0.79788456080286535588), ts_mh_fma(h, x3, ts_mh_k(x, 0.044715), x));
}

/* x sigmoid(v), v = 2u: v in double (a few operations; for x < 0 the
 * result is about x e^v, whose relative error is v's absolute one), split
 * into a float and what it lost; e = exp(-|v|) in float, with the lost
 * part added to the reduced argument and 2^q applied as 2^(q+64) until the
 * end for x < 0, so that results in the subnormals round once; the
 * quotient by 1 + e. Below v = -120 the result rounds to -0. At most 3 ulp
 * (measured at every 61st bit pattern at each ISA level, the worst near x
 * = -1.3), where the double version was 1. */
static LLVMValueRef ts_mh_gelu_tanhf(ts_mh *h, LLVMValueRef x) {
  LLVMValueRef xd = ts_mh_fext(h, x);
  LLVMValueRef vd = ts_mh_neg(h, ts_mh_fabs(h, ts_mh_mul(h, ts_mh_gelu_u(h, xd), ts_mh_kd(h, 2.0))));
  LLVMValueRef y = ts_mh_ftrunc(h, vd); /* -|v| */
  LLVMValueRef ylo = ts_mh_ftrunc(h, ts_mh_sub(h, vd, ts_mh_fext(h, y)));
  LLVMValueRef yc = ts_mh_max_k(h, y, -120.0);
  /* past the clamp (or v past float's range) what rounding lost is no
   * part of yc */
  ylo = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOLT, y, ts_mh_kf(h, -120.0)), ts_mh_kf(h, 0.0), ylo);
  LLVMValueRef e64 = ts_mh_exp_x64f(h, yc, ylo);
  LLVMValueRef e = ts_mh_mul(h, e64, ts_mh_kf(h, 0x1p-64));
  LLVMValueRef neg = ts_mh_cmp(h, LLVMRealOLT, x, ts_mh_kf(h, 0.0));
  LLVMValueRef num = ts_mh_sel(h, neg, ts_mh_mul(h, x, e64), x);
  LLVMValueRef res = ts_mh_div(h, num, ts_mh_add(h, ts_mh_kf(h, 1.0), e));
  res = ts_mh_sel(h, neg, ts_mh_mul(h, res, ts_mh_kf(h, 0x1p-64)), res);
  LLVMValueRef under = ts_mh_and(h, neg, ts_mh_cmp(h, LLVMRealOLT, y, ts_mh_kf(h, -120.0)));
  res = ts_mh_sel(h, under, ts_mh_kf(h, -0.0), res);
  return ts_mh_keep_nan(h, x, ts_mh_gelu_neg_inf(h, x, res));
}

/* ------------------------------------------------------- float32: pow */

/* C's powf (C99 Annex F.9.4.4): exp(y log|x|) in double, then the signs
 * and special cases */
static LLVMValueRef ts_mh_powf(ts_mh *h, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef xd = ts_mh_fext(h, x), yd = ts_mh_fext(h, y);
  LLVMValueRef ax = ts_mh_fabs(h, xd);
  LLVMValueRef zero = ts_mh_kd(h, 0.0), inf = ts_mh_kd(h, INFINITY);
  LLVMValueRef ok = ts_mh_and(h, ts_mh_cmp(h, LLVMRealOGT, ax, zero), ts_mh_cmp(h, LLVMRealOLT, ax, inf));
  /* in base 2, so that powers of two come out exact (ties included) */
  LLVMValueRef dk;
  LLVMValueRef lm = ts_mh_log_d_parts(h, ts_mh_sel(h, ok, ax, ts_mh_kd(h, 1.0)), &dk);
  LLVMValueRef L = ts_mh_fma(h, lm, ts_mh_kd(h, TS_MH_LOG2E), dk);
  L = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, ax, zero), ts_mh_kd(h, -INFINITY), L);
  L = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, ax, inf), inf, L);
  /* exp2_d_core clamps y log2|x| to +-1000: 0 and inf after rounding to
   * float; a NaN product (0 * inf) is one of the special cases below */
  LLVMValueRef r = ts_mh_ftrunc(h, ts_mh_exp2_d_core(h, ts_mh_mul(h, yd, L)));

  LLVMValueRef ty = ts_mh_intr1(h, "llvm.trunc", y);
  LLVMValueRef yint = ts_mh_cmp(h, LLVMRealOEQ, ty, y); /* inf counts as even */
  LLVMValueRef yh = ts_mh_mul(h, y, ts_mh_kf(h, 0.5));
  LLVMValueRef yodd = ts_mh_and(h, yint, ts_mh_cmp(h, LLVMRealONE, ts_mh_intr1(h, "llvm.trunc", yh), yh));
  LLVMValueRef xneg = LLVMBuildICmp(h->b, LLVMIntSLT, LLVMBuildBitCast(h->b, x, h->m->t_i32, ""),
                                    ts_mh_ki(h->m->t_i32, 0), "");
  r = ts_mh_sel(h, ts_mh_and(h, xneg, yodd), ts_mh_neg(h, r), r);
  /* a finite negative x to a finite non-integral power */
  LLVMValueRef xfneg = ts_mh_and(h, ts_mh_cmp(h, LLVMRealOLT, x, ts_mh_kf(h, 0.0)),
                                 ts_mh_cmp(h, LLVMRealOGT, x, ts_mh_kf(h, -INFINITY)));
  LLVMValueRef yfin = ts_mh_cmp(h, LLVMRealOLT, ts_mh_fabs(h, y), ts_mh_kf(h, INFINITY));
  LLVMValueRef nan = ts_mh_kf(h, NAN);
  r = ts_mh_sel(h, ts_mh_and(h, xfneg, ts_mh_and(h, yfin, LLVMBuildNot(h->b, yint, ""))), nan, r);
  r = ts_mh_sel(h, ts_mh_or(h, ts_mh_isnan(h, x), ts_mh_isnan(h, y)), ts_mh_add(h, x, y), r);
  LLVMValueRef one = ts_mh_kf(h, 1.0);
  /* pow(x, +-0) = 1, pow(1, y) = 1 even for NaN; pow(-1, +-inf) = 1 */
  LLVMValueRef is_one = ts_mh_or(h, ts_mh_cmp(h, LLVMRealOEQ, y, ts_mh_kf(h, 0.0)), ts_mh_cmp(h, LLVMRealOEQ, x, one));
  is_one = ts_mh_or(h, is_one, ts_mh_and(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_kf(h, -1.0)),
                                         ts_mh_cmp(h, LLVMRealOEQ, ts_mh_fabs(h, y), ts_mh_kf(h, INFINITY))));
  return ts_mh_sel(h, is_one, one, r);
}

/* -------------------------------------------------- float32: sin, cos */

/* sin(x + shift * pi/2), in double: x - q pi/2 with a three-part pi/2
 * (exact for |q| < 2^24), then sin or cos of r by the quadrant */
static LLVMValueRef ts_mh_sincosf(ts_mh *h, LLVMValueRef x, int shift) {
  LLVMValueRef xd = ts_mh_fext(h, x);
  LLVMValueRef q = ts_mh_rint(h, ts_mh_mul(h, xd, ts_mh_kd(h, 0.63661977236758134308)));
  LLVMValueRef r = ts_mh_sub(h, xd, ts_mh_mul(h, q, ts_mh_kd(h, TS_MH_PIO2_1)));
  r = ts_mh_sub(h, r, ts_mh_mul(h, q, ts_mh_kd(h, TS_MH_PIO2_2)));
  r = ts_mh_sub(h, r, ts_mh_mul(h, q, ts_mh_kd(h, TS_MH_PIO2_3)));
  /* past 2^24 the reduction is inexact; keep r where the polynomials are
   * bounded by 1 */
  r = ts_mh_clamp(h, r, -0.78539816339744831, 0.78539816339744831);
  /* the quadrant, (q + shift) mod 4, in double: q may exceed every integer type */
  LLVMValueRef qs = ts_mh_add(h, q, ts_mh_kd(h, shift));
  LLVMValueRef n = ts_mh_sub(h, qs, ts_mh_mul(h, ts_mh_intr1(h, "llvm.floor", ts_mh_mul(h, qs, ts_mh_kd(h, 0.25))),
                                             ts_mh_kd(h, 4.0)));
  LLVMValueRef z = ts_mh_mul(h, r, r);
  LLVMValueRef s = ts_mh_fma(h, ts_mh_mul(h, r, z), ts_mh_poly(h, z, ts_mh_sin_d, TS_MH_N(ts_mh_sin_d)), r);
  LLVMValueRef c = ts_mh_fma(h, ts_mh_mul(h, z, z), ts_mh_poly(h, z, ts_mh_cos_d, TS_MH_N(ts_mh_cos_d)),
                             ts_mh_fma(h, z, ts_mh_kd(h, -0.5), ts_mh_kd(h, 1.0)));
  LLVMValueRef odd = ts_mh_or(h, ts_mh_cmp(h, LLVMRealOEQ, n, ts_mh_kd(h, 1.0)),
                              ts_mh_cmp(h, LLVMRealOEQ, n, ts_mh_kd(h, 3.0)));
  LLVMValueRef v = ts_mh_sel(h, odd, c, s);
  v = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOGE, n, ts_mh_kd(h, 2.0)), ts_mh_neg(h, v), v);
  LLVMValueRef res = ts_mh_ftrunc(h, v);
  if (shift == 0) /* sin(-0) = -0: x - q pi/2 lost the sign */
    res = ts_mh_sel(h, ts_mh_cmp(h, LLVMRealOEQ, x, ts_mh_kf(h, 0.0)), x, res);
  /* sin(+-inf) = NaN */
  LLVMValueRef fin = ts_mh_cmp(h, LLVMRealOLT, ts_mh_fabs(h, x), ts_mh_kf(h, INFINITY));
  res = ts_mh_sel(h, fin, res, ts_mh_kf(h, NAN));
  return ts_mh_keep_nan(h, x, res);
}

/* ------------------------------------------------ float64: the C library */

static LLVMValueRef ts_mh_libm(ts_mh *h, const char *name, LLVMValueRef *args, unsigned n) {
  LLVMTypeRef params[2] = {h->m->t_f64, h->m->t_f64};
  LLVMTypeRef fty = LLVMFunctionType(h->m->t_f64, params, n, 0);
  LLVMValueRef fn = ts_cg_module_extern(h->m, name, fty);
  return LLVMBuildCall2(h->b, fty, fn, args, n, "");
}
static LLVMValueRef ts_mh_libm1(ts_mh *h, const char *name, LLVMValueRef x) {
  return ts_mh_libm(h, name, &x, 1);
}

static LLVMValueRef ts_mh_body_f64(ts_mh *h, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y) {
  switch (fn) {
  case TS_CG_SIGMOID:
    return ts_mh_sigmoid(h, x, ts_mh_libm1(h, "exp", ts_mh_neg(h, ts_mh_fabs(h, x))));
  case TS_CG_GELU_ERF: {
    LLVMValueRef t = ts_mh_neg(h, ts_mh_mul(h, x, ts_mh_kd(h, 0.70710678118654752440)));
    return ts_mh_mul(h, ts_mh_mul(h, x, ts_mh_kd(h, 0.5)), ts_mh_libm1(h, "erfc", t));
  }
  case TS_CG_GELU_TANH: {
    /* exp(-inf) = 0 makes gelu(-inf) = -inf * 0 = NaN, as PyTorch */
    LLVMValueRef u2 = ts_mh_mul(h, ts_mh_gelu_u(h, x), ts_mh_kd(h, 2.0));
    LLVMValueRef e = ts_mh_libm1(h, "exp", ts_mh_neg(h, ts_mh_fabs(h, u2)));
    return ts_mh_mul(h, x, ts_mh_sigmoid(h, u2, e));
  }
  case TS_CG_POW: {
    LLVMValueRef args[2] = {x, y};
    return ts_mh_libm(h, "pow", args, 2);
  }
  default:
    return ts_mh_libm1(h, ts_mh_names[fn], x);
  }
}

static LLVMValueRef ts_mh_body_f32(ts_mh *h, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y) {
  switch (fn) {
  case TS_CG_EXP:
    return ts_mh_expf(h, x);
  case TS_CG_EXPM1:
    return ts_mh_expm1f(h, x);
  case TS_CG_LOG:
    return ts_mh_logf(h, x);
  case TS_CG_LOG1P:
    return ts_mh_log1pf(h, x);
  case TS_CG_LOG2:
    return ts_mh_logbf(h, x, 1.0, TS_MH_LOG2E);
  case TS_CG_LOG10:
    return ts_mh_logbf(h, x, 0.30102999566398119521, 0.43429448190325182765);
  case TS_CG_TANH:
    return ts_mh_tanhf(h, x);
  case TS_CG_SIGMOID:
    return ts_mh_sigmoidf(h, x);
  case TS_CG_ERF:
    return ts_mh_erff(h, x);
  case TS_CG_ERFC:
    return ts_mh_erfcf(h, x);
  case TS_CG_GELU_ERF:
    return ts_mh_gelu_erff(h, x);
  case TS_CG_GELU_TANH:
    return ts_mh_gelu_tanhf(h, x);
  case TS_CG_POW:
    return ts_mh_powf(h, x, y);
  case TS_CG_SIN:
    return ts_mh_sincosf(h, x, 0);
  case TS_CG_COS:
    return ts_mh_sincosf(h, x, 1);
  default:
    return NULL;
  }
}

static void ts_mh_fn_attr(ts_cg_module *m, LLVMValueRef f, const char *name, uint64_t val) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  if (kind)
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(m->ctx, kind, val));
}

LLVMValueRef ts_cg_math_get(ts_cg_module *m, ts_cg_math_fn fn, LLVMTypeRef fty, ts_diag *d) {
  if ((unsigned)fn >= TS_CG_MATH_COUNT) {
    ts_diag_error(d, "math function %d: no such function", (int)fn);
    return NULL;
  }
  bool f32 = fty == m->t_f32;
  if (!f32 && fty != m->t_f64) {
    char *s = LLVMPrintTypeToString(fty);
    ts_diag_error(d, "%s: no version for type %s (float and double only)", ts_mh_names[fn], s ? s : "?");
    LLVMDisposeMessage(s);
    return NULL;
  }
  char name[32];
  snprintf(name, sizeof name, "tsaot.%s%s", ts_mh_names[fn], f32 ? "f" : "");
  LLVMValueRef f = LLVMGetNamedFunction(m->mod, name);
  if (f)
    return f;

  LLVMTypeRef params[2] = {fty, fty};
  unsigned nparams = fn == TS_CG_POW ? 2 : 1;
  f = LLVMAddFunction(m->mod, name, LLVMFunctionType(fty, params, nparams, 0));
  LLVMSetLinkage(f, LLVMPrivateLinkage);
  ts_mh_fn_attr(m, f, "alwaysinline", 0);
  ts_mh_fn_attr(m, f, "nounwind", 0);
  if (f32) { /* no calls, no memory: the vectorizer may widen them freely */
    ts_mh_fn_attr(m, f, "willreturn", 0);
    ts_mh_fn_attr(m, f, "nosync", 0);
    ts_mh_fn_attr(m, f, "nofree", 0);
    ts_mh_fn_attr(m, f, "memory", 0); /* memory(none) */
  }
  ts_mh h = {m, LLVMCreateBuilderInContext(m->ctx)};
  LLVMPositionBuilderAtEnd(h.b, LLVMAppendBasicBlockInContext(m->ctx, f, "entry"));
  LLVMValueRef x = LLVMGetParam(f, 0), y = nparams == 2 ? LLVMGetParam(f, 1) : NULL;
  LLVMValueRef r = f32 ? ts_mh_body_f32(&h, fn, x, y) : ts_mh_body_f64(&h, fn, x, y);
  LLVMBuildRet(h.b, r);
  LLVMDisposeBuilder(h.b);
  return f;
}

LLVMValueRef ts_cg_math_call(ts_cg_module *m, LLVMBuilderRef b, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y,
                             ts_diag *d) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (fn == TS_CG_POW && (!y || LLVMTypeOf(y) != t)) {
    ts_diag_error(d, "pow: both arguments must have the same type");
    return NULL;
  }
  LLVMValueRef f = ts_cg_math_get(m, fn, t, d);
  if (!f)
    return NULL;
  LLVMValueRef args[2] = {x, y};
  LLVMValueRef call = LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, args, fn == TS_CG_POW ? 2 : 1, "");
  return call;
}
