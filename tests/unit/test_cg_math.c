/* tests/unit/test_cg_math.c: codegen/module.c and codegen/math.c at every
 * x86-64 ISA level the generated code can run at.
 *
 * Every float32 function of math.c is called from a loop kernel `void
 * vNAME(const float *x, float *y, int64_t n)`, built for each level by
 * naming its CPU (ts_cg_target_opts.cpu, not the host's): x86-64-v2
 * (SSE4.2, no FMA), x86-64-v3 (AVX2 + FMA), x86-64-v4 (AVX-512, 256-bit
 * vectors as LLVM tunes it) and x86-64-v4 with 512-bit vectors (as the
 * default build on an AVX-512 host). At each level the loops must come out
 * vectorised as wide as the level's registers (4, 8, 8, 16 lanes; loops
 * computing in double half to all of that) with no call left; the module's
 * own target machine compiles them to an object (cg_jit.h), whose code is
 * decoded and must use the level's encodings (v2 no VEX or EVEX, v3 VEX
 * and no EVEX, v4 EVEX; zmm only with 512-bit vectors) and no estimate
 * instruction (rcpps: its results differ between CPUs); the JIT then runs
 * that object where the host has the level's features (asked at run time;
 * a level the host lacks is built and checked but not run: "skipped
 * x86-64-v4: the host has no AVX-512 ..."), and a probe (llvm.fmuladd)
 * shows that the code that ran fuses exactly where the level has FMA.
 * Results are compared with the double-precision C library rounded to
 * float over every power of two, a sweep of bit patterns (every STRIDE-th,
 * both signs) and special values; the maximum error in ulp is printed per
 * function and level and must stay within the same bound at every level.
 *
 * The bounds are what was measured, the same at every level (at every
 * 61st bit pattern): exp, expm1, log, log1p, erf, erfc, tanh 1; log2,
 * log10, sin, cos 0 (bound 1); sigmoid 2; gelu (tanh) 3; gelu (erf) 4; pow
 * 0 on its grid (bound 1). Over every float (TSAOT_MATH_STRIDE=1) at
 * x86-64-v2, v3, v4 and v4/512: sigmoid 2, tanh 1. sigmoid, tanh and the
 * gelus divide with vdivps (math.c); with a reciprocal estimate and one
 * Newton step, as before, sigmoid was 3 ulp on AVX2 and at x86-64-v4 (12-bit
 * vrcpps), and gelu (erf) 63 at x86-64-v2, where an fma it relied on is
 * not fused. PyTorch's Sleef kernels are 1-ulp variants, the zoo's
 * tolerances 1e-5 + 1e-4 |x|.
 *
 * The environment can narrow a run: TSAOT_MATH_STRIDE (1 is exhaustive,
 * minutes per function and level), TSAOT_MATH_LEVELS and TSAOT_MATH_FNS
 * (comma-separated names: "x86-64-v3", "sigmoid,tanh"). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Disassembler.h>

#include "cg_jit.h"
#include "test.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ------------------------------------------------------------ references */

static double ref_sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}
static double ref_gelu_erf(double x) {
  return 0.5 * x * erfc(-x * 0.70710678118654752440);
}
static double ref_gelu_tanh(double x) {
  long double xl = x;
  long double u = sqrtl(2.0L / (long double)M_PI) * (xl + 0.044715L * xl * xl * xl);
  return (double)(xl / (1.0L + expl(-2.0L * u)));
}

typedef struct math_case {
  ts_cg_math_fn fn;
  double (*ref)(double);
  int bound; /* max ulp allowed at every level: what was measured (the header) */
  double acc_limit; /* |x| above which only the range is checked (0: none) */
} math_case;

static const math_case cases[] = {
    {TS_CG_EXP, exp, 1, 0},
    {TS_CG_EXPM1, expm1, 1, 0},
    {TS_CG_LOG, log, 1, 0},
    {TS_CG_LOG1P, log1p, 1, 0},
    {TS_CG_LOG2, log2, 1, 0},
    {TS_CG_LOG10, log10, 1, 0},
    {TS_CG_TANH, tanh, 1, 0},
    {TS_CG_SIGMOID, ref_sigmoid, 2, 0},
    {TS_CG_ERF, erf, 1, 0},
    {TS_CG_ERFC, erfc, 1, 0},
    {TS_CG_GELU_ERF, ref_gelu_erf, 4, 0},
    {TS_CG_GELU_TANH, ref_gelu_tanh, 3, 0},
    {TS_CG_SIN, sin, 1, 0x1p24},
    {TS_CG_COS, cos, 1, 0x1p24},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* the ISA level being tested, for failure messages */
static const char *cur_level = "";

/* ------------------------------------------------------------ ulp metric */

static int64_t ord(float f) {
  int32_t i;
  memcpy(&i, &f, sizeof i);
  return i < 0 ? (int64_t)INT32_MIN - i : i;
}

/* distance in representable floats; NaN matches only NaN */
static int64_t ulp_dist(float r, float ref) {
  if (isnan(r) || isnan(ref))
    return isnan(r) && isnan(ref) ? 0 : INT64_C(1) << 40;
  int64_t d = ord(r) - ord(ref);
  return d < 0 ? -d : d;
}

static float bits_f(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* ------------------------------------------------------------ the kernels */

/* void NAME(const T *a[, const T *b], T *out, int64_t n): out[i] = f(a[i][, b[i]]) */
static LLVMValueRef build_loop(ts_cg_module *m, const char *name, ts_cg_math_fn fn, LLVMTypeRef et) {
  int nin = fn == TS_CG_POW ? 2 : 1;
  LLVMTypeRef params[4] = {m->t_ptr, m->t_ptr, m->t_ptr, m->t_i64};
  if (nin == 1)
    params[2] = m->t_i64;
  LLVMValueRef f = LLVMAddFunction(m->mod, name, LLVMFunctionType(m->t_void, params, (unsigned)nin + 2, 0));
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (int i = 0; i <= nin; i++)
    LLVMAddAttributeAtIndex(f, (unsigned)i + 1, LLVMCreateEnumAttribute(m->ctx, noalias, 0));
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(m->ctx, f, "entry");
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(m->ctx, f, "loop");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->ctx, f, "done");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  LLVMValueRef n = LLVMGetParam(f, (unsigned)nin + 1);
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, n, LLVMConstInt(m->t_i64, 0, 0), ""), loop, done);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, m->t_i64, "i");
  LLVMValueRef args[2] = {NULL, NULL};
  for (int k = 0; k < nin; k++) {
    LLVMValueRef p = LLVMBuildGEP2(b, et, LLVMGetParam(f, (unsigned)k), &i, 1, "");
    args[k] = LLVMBuildLoad2(b, et, p, "");
  }
  ts_diag d = {0};
  LLVMValueRef r = ts_cg_math_call(m, b, fn, args[0], args[1], &d);
  TS_CHECK(r != NULL);
  ts_diag_free(&d);
  LLVMBuildStore(b, r, LLVMBuildGEP2(b, et, LLVMGetParam(f, (unsigned)nin), &i, 1, ""));
  LLVMValueRef i1 = LLVMBuildNSWAdd(b, i, LLVMConstInt(m->t_i64, 1, 0), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, i1, n, ""), done, loop);
  LLVMValueRef zero = LLVMConstInt(m->t_i64, 0, 0);
  LLVMBasicBlockRef from[2] = {entry, loop};
  LLVMValueRef vals[2] = {zero, i1};
  LLVMAddIncoming(i, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return f;
}

typedef void (*vfn1)(const float *, float *, int64_t);
typedef void (*vfn2)(const float *, const float *, float *, int64_t);
typedef void (*vdfn1)(const double *, double *, int64_t);
typedef void (*vdfn2)(const double *, const double *, double *, int64_t);

static void *lookup(ts_test_jit *j, const char *name) {
  void *p = ts_test_jit_lookup(j, name);
  if (!TS_CHECK(p != NULL))
    fprintf(stderr, "  symbol %s\n", name);
  return p;
}

/* whether f calls anything but an LLVM intrinsic */
static bool calls_non_intrinsic(LLVMValueRef f) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsACallInst(in))
        continue;
      LLVMValueRef callee = LLVMGetCalledValue(in);
      if (!LLVMIsAFunction(callee) || LLVMGetIntrinsicID(callee) == 0)
        return true;
    }
  return false;
}

/* ------------------------------------------------------------ module.c */

static void test_module(void) {
  ts_cg_module m;
  ts_diag d = {0};
  ts_cg_target_opts bad = {.triple = "nonsense-unknown-nowhere", .opt_level = 2};
  TS_CHECK(!ts_cg_module_init(&m, "bad", &bad, &d));
  TS_CHECK(d.errors == 1 && d.text.data && strstr(d.text.data, "nonsense-unknown-nowhere"));
  TS_CHECK(m.mod == NULL && m.ctx == NULL && m.tm == NULL);
  ts_diag_free(&d);

  d = (ts_diag){0};
  ts_cg_target_opts o4 = {.opt_level = 4};
  TS_CHECK(!ts_cg_module_init(&m, "bad", &o4, &d));
  TS_CHECK(d.errors == 1);
  ts_diag_free(&d);

  d = (ts_diag){0};
  TS_CHECK(ts_cg_module_init(&m, "ok", NULL, &d));
  TS_CHECK(m.opt_level == 2 && m.ctx && m.mod && m.tm && m.td);
  TS_CHECK(LLVMGetTypeKind(m.t_f32) == LLVMFloatTypeKind && LLVMGetTypeKind(m.t_ptr) == LLVMPointerTypeKind);
  TS_CHECK(LLVMGetIntTypeWidth(m.t_i64) == 64);
  char *triple = LLVMGetDefaultTargetTriple();
  TS_CHECK_STREQ(LLVMGetTarget(m.mod), triple);
  LLVMDisposeMessage(triple);
  TS_CHECK(strlen(LLVMGetDataLayoutStr(m.mod)) > 0);
  LLVMTypeRef ft = LLVMFunctionType(m.t_f64, &m.t_f64, 1, 0);
  LLVMValueRef e1 = ts_cg_module_extern(&m, "cos", ft);
  TS_CHECK(e1 && ts_cg_module_extern(&m, "cos", ft) == e1);
  TS_CHECK(LLVMGetLinkage(e1) == LLVMExternalLinkage && LLVMIsDeclaration(e1));

  /* an invalid module is refused with the verifier's words */
  LLVMValueRef f = LLVMAddFunction(m.mod, "broken", ft);
  LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(m.ctx, f, "entry");
  (void)bb; /* a block without terminator */
  TS_CHECK(!ts_cg_module_optimize(&m, &d));
  TS_CHECK(d.errors == 1 && strstr(d.text.data, "invalid"));
  ts_diag_free(&d);
  ts_cg_module_dispose(&m);
  TS_CHECK(m.mod == NULL);
  ts_cg_module_dispose(&m); /* twice is harmless */

  /* the math API's errors and names */
  d = (ts_diag){0};
  TS_CHECK(ts_cg_module_init(&m, "names", NULL, &d));
  TS_CHECK(ts_cg_math_get(&m, TS_CG_EXP, m.t_i32, &d) == NULL);
  TS_CHECK(d.errors == 1 && strstr(d.text.data, "float and double"));
  TS_CHECK(ts_cg_math_get(&m, TS_CG_MATH_COUNT, m.t_f32, &d) == NULL);
  TS_CHECK(ts_cg_math_get(&m, TS_CG_EXP, m.t_f16, NULL) == NULL);
  ts_diag_free(&d);
  LLVMValueRef ef = ts_cg_math_get(&m, TS_CG_EXP, m.t_f32, NULL);
  TS_CHECK(ef && ts_cg_math_get(&m, TS_CG_EXP, m.t_f32, NULL) == ef);
  size_t len;
  TS_CHECK_STREQ(LLVMGetValueName2(ef, &len), "tsaot.expf");
  TS_CHECK(LLVMGetLinkage(ef) == LLVMPrivateLinkage);
  LLVMValueRef pd = ts_cg_math_get(&m, TS_CG_POW, m.t_f64, NULL);
  TS_CHECK_STREQ(LLVMGetValueName2(pd, &len), "tsaot.pow");
  TS_CHECK(LLVMCountParams(pd) == 2);
  TS_CHECK_STREQ(ts_cg_math_name(TS_CG_GELU_TANH), "gelu_tanh");
  TS_CHECK(ts_cg_math_name(TS_CG_MATH_COUNT) == NULL);
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    TS_CHECK(ts_cg_math_get(&m, (ts_cg_math_fn)fn, m.t_f32, NULL) != NULL);
    TS_CHECK(ts_cg_math_get(&m, (ts_cg_math_fn)fn, m.t_f64, NULL) != NULL);
  }
  char *msg = NULL;
  TS_CHECK(!LLVMVerifyModule(m.mod, LLVMReturnStatusAction, &msg));
  LLVMDisposeMessage(msg);
  ts_cg_module_dispose(&m);
}

/* ------------------------------------------------------------ accuracy */

enum { CHUNK = 1 << 15 };

typedef struct sweep {
  int64_t max_ulp;
  float worst_x;
  int64_t n;
  bool range_ok; /* beyond acc_limit: |result| <= 1 or NaN where the ref is */
} sweep;

static void sweep_chunk(const math_case *c, vfn1 f, const float *x, float *y, int64_t n, sweep *s) {
  f(x, y, n);
  for (int64_t i = 0; i < n; i++) {
    if (c->acc_limit > 0 && fabsf(x[i]) >= c->acc_limit) {
      if (!(fabsf(y[i]) <= 1.0f || (isnan(y[i]) && !isfinite(x[i]))))
        s->range_ok = false;
      continue;
    }
    float ref = (float)c->ref((double)x[i]);
    int64_t u = ulp_dist(y[i], ref);
    if (u > s->max_ulp) {
      s->max_ulp = u;
      s->worst_x = x[i];
    }
  }
  s->n += n;
}

/* every power of two, both signs, and every stride-th bit pattern */
static void run_sweep(const math_case *c, vfn1 f, uint32_t stride, sweep *s) {
  float *x = malloc(CHUNK * sizeof *x), *y = malloc(CHUNK * sizeof *y);
  if (!TS_CHECK(x && y)) {
    free(x);
    free(y);
    return;
  }
  int64_t n = 0;
  for (int k = -149; k <= 127; k++) {
    x[n++] = ldexpf(1.0f, k);
    x[n++] = -ldexpf(1.0f, k);
  }
  sweep_chunk(c, f, x, y, n, s);
  n = 0;
  for (uint64_t u = 0; u < 0x80000000u; u += stride) {
    x[n++] = bits_f((uint32_t)u);
    x[n++] = bits_f((uint32_t)u | 0x80000000u);
    if (n == CHUNK) {
      sweep_chunk(c, f, x, y, n, s);
      n = 0;
    }
  }
  sweep_chunk(c, f, x, y, n, s);
  free(x);
  free(y);
}

/* Values where the IEEE cases and the thresholds are: the result must be
 * exact for inf, NaN and zero results (sign included), else within bound. */
static const float specials[] = {
    0.0f,         -0.0f,        INFINITY,        -INFINITY,       NAN,           0x1p-149f,    -0x1p-149f,
    0x1.fffffcp-127f, -0x1.fffffcp-127f, FLT_MIN, -FLT_MIN,       FLT_MAX,       -FLT_MAX,     1.0f,
    -1.0f,        0.5f,         -0.5f,           2.0f,            88.72283172607421875f, 88.7228394f, 89.0f,
    -87.33654f,   -87.336548f,  -103.972076f,    -103.972084f,    -104.0f,       -110.0f,      10.0f,
    -10.0f,       9.0f,         -9.0f,           16.0f,           -16.0f,        1e-8f,        -1e-8f,
    0x1p-24f,     -0x1p-24f,    0x1p-25f,        -0x1p-25f,       -0.99999994f,  -0.9999f,     3.14159274f,
    -3.14159274f, 1.57079637f,  -1.57079637f,    100000.0f,       -100000.0f,    0x1p24f,      -0x1p24f,
    12.0f,        -12.0f,       30.0f,           -30.0f,          1e30f,         -1e30f,       0.84375f,
    0.5f,         1.25f,        6.0f,            -6.0f,           26.55f,        -26.55f,
};

static void check_specials(const math_case *c, vfn1 f, int64_t *worst) {
  enum { NS = sizeof specials / sizeof specials[0] };
  float y[NS];
  f(specials, y, NS);
  for (int i = 0; i < NS; i++) {
    float x = specials[i];
    float ref = (float)c->ref((double)x);
    bool ok;
    if (isnan(ref) || isinf(ref) || ref == 0.0f)
      ok = isnan(ref) ? isnan(y[i]) : (y[i] == ref && signbit(y[i]) == signbit(ref));
    else if (c->acc_limit > 0 && fabsf(x) >= c->acc_limit)
      ok = fabsf(y[i]) <= 1.0f;
    else {
      int64_t u = ulp_dist(y[i], ref);
      ok = u <= c->bound;
      if (u > *worst)
        *worst = u;
    }
    if (!TS_CHECK(ok))
      fprintf(stderr, "  %s: %s(%a) = %a, expected %a\n", cur_level, ts_cg_math_name(c->fn), (double)x,
              (double)y[i], (double)ref);
  }
}

/* pow: a grid, and C99 Annex F's special cases */
static void test_pow(vfn2 f) {
  enum { NX = 600, NY = 160 };
  static float xs[NX], ys[NY];
  int nx = 0, ny = 0;
  for (uint32_t u = 0x00000001u; nx < NX / 2; u += 0x7f800000u / (NX / 2)) {
    xs[nx++] = bits_f(u);
    xs[nx++] = -bits_f(u + 12345u);
  }
  for (int k = -10; k <= 10; k++)
    ys[ny++] = (float)k;
  for (int k = -7; k <= 7; k += 2)
    ys[ny++] = (float)k * 0.5f;
  const float extra_y[] = {0.1f, -0.1f, 1e-3f, 1e-7f, -1e-7f, 0x1p-149f, 0.3333333f, 2.7182817f, 100.0f, -100.0f,
                           127.5f, -149.5f, 1e10f, -1e10f, 33.0f, 64.0f, 0x1p24f, 0x1p24f + 2, 3e38f};
  for (size_t k = 0; k < sizeof extra_y / sizeof extra_y[0]; k++)
    ys[ny++] = extra_y[k];
  uint32_t v = 0x3f800000u;
  while (ny < NY) { /* a spread of exponents of every size */
    v = v * 1664525u + 1013904223u;
    float yv = bits_f((v >> 1) % 0x43000000u);
    ys[ny++] = (v & 1) ? -yv : yv;
  }
  static float X[2 * NX * NY], Y[2 * NX * NY], R[2 * NX * NY];
  int64_t n = 0;
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      X[n] = xs[i];
      Y[n] = ys[j];
      n++;
    }
  /* and random pairs where results are mostly finite: x in [2^-8, 2^8) of
   * either sign, y in (-32, 32), integral for negative x half the time */
  while (n < 2 * NX * NY) {
    v = v * 1664525u + 1013904223u;
    uint32_t w = v * 22695477u + 1u;
    float xv = bits_f(0x3b800000u + (v >> 1) % (0x43800000u - 0x3b800000u));
    float yv = ((float)(w >> 8) / 16777216.0f - 0.5f) * 64.0f;
    if (v & 1) {
      xv = -xv;
      if (w & 1)
        yv = truncf(yv);
    }
    X[n] = xv;
    Y[n] = yv;
    n++;
  }
  f(X, Y, R, n);
  int64_t worst = 0, nfinite = 0;
  float wx = 0, wy = 0;
  for (int64_t i = 0; i < n; i++) {
    float ref = (float)pow((double)X[i], (double)Y[i]);
    nfinite += isfinite(ref) && ref != 0.0f;
    int64_t u = ulp_dist(R[i], ref);
    if ((ref == 0.0f || isinf(ref)) && u == 0 && signbit(ref) != signbit(R[i]))
      u = INT64_C(1) << 40;
    if (u > worst) {
      worst = u;
      wx = X[i];
      wy = Y[i];
    }
  }
  printf("  %-10s max %lld ulp (at %a, %a) over %lld pairs (%lld finite, nonzero)\n", "pow", (long long)worst,
         (double)wx, (double)wy, (long long)n, (long long)nfinite);
  TS_CHECK(nfinite > n / 4);
  if (!TS_CHECK(worst <= 1))
    fprintf(stderr, "  %s: pow: %lld ulp at (%a, %a), bound 1\n", cur_level, (long long)worst, (double)wx, (double)wy);

  const float inf = INFINITY, nan = NAN;
  const float sp[][3] = {
      {1.0f, nan, 1.0f},       {nan, 0.0f, 1.0f},        {nan, -0.0f, 1.0f},       {-3.0f, 0.0f, 1.0f},
      {1.0f, inf, 1.0f},       {-1.0f, inf, 1.0f},       {-1.0f, -inf, 1.0f},      {0.0f, -3.0f, inf},
      {-0.0f, -3.0f, -inf},    {0.0f, -2.0f, inf},       {-0.0f, -2.0f, inf},      {-0.0f, -0.5f, inf},
      {-0.0f, -inf, inf},      {0.0f, 3.0f, 0.0f},       {-0.0f, 3.0f, -0.0f},     {-0.0f, 2.0f, 0.0f},
      {-0.0f, 0.5f, 0.0f},     {-0.0f, inf, 0.0f},       {0.5f, -inf, inf},        {-0.5f, -inf, inf},
      {2.0f, -inf, 0.0f},      {-2.0f, -inf, 0.0f},      {0.5f, inf, 0.0f},        {-0.5f, inf, 0.0f},
      {2.0f, inf, inf},        {-2.0f, inf, inf},        {-inf, -3.0f, -0.0f},     {-inf, -2.0f, 0.0f},
      {-inf, -0.5f, 0.0f},     {-inf, 3.0f, -inf},       {-inf, 2.0f, inf},        {-inf, 0.5f, inf},
      {inf, -1.0f, 0.0f},      {inf, 0.5f, inf},         {-2.0f, 0.5f, nan},       {-8.0f, 1.0f / 3, nan},
      {-2.0f, 3.0f, -8.0f},    {-2.0f, -1.0f, -0.5f},    {-2.0f, 2.0f, 4.0f},      {nan, 1.0f, nan},
      {2.0f, nan, nan},        {-1.0f, nan, nan},        {10.0f, 39.0f, inf},      {-10.0f, 39.0f, -inf},
      {2.0f, -149.0f, 0x1p-149f}, {2.0f, -150.0f, 0.0f}, {-2.0f, -151.0f, -0.0f},  {2.0f, 127.0f, 0x1p127f},
      {2.0f, 128.0f, inf},     {4.0f, 0.5f, 2.0f},       {-0x1p24f, 0x1p24f + 2, inf}, {-3.0f, 0x1p25f, inf},
  };
  enum { NSP = sizeof sp / sizeof sp[0] };
  float sx[NSP], sy[NSP], sr[NSP];
  for (int i = 0; i < NSP; i++) {
    sx[i] = sp[i][0];
    sy[i] = sp[i][1];
  }
  f(sx, sy, sr, NSP);
  for (int i = 0; i < NSP; i++) {
    float e = sp[i][2];
    bool ok = isnan(e) ? isnan(sr[i]) : (sr[i] == e && signbit(sr[i]) == signbit(e));
    if (!TS_CHECK(ok))
      fprintf(stderr, "  %s: pow(%a, %a) = %a, expected %a\n", cur_level, (double)sx[i], (double)sy[i], (double)sr[i],
              (double)e);
  }
}

/* f64: the C library's results, and sigmoid/gelu from them */
static void test_f64(ts_test_jit *j) {
  const double xs[] = {-1000.0, -30.0, -3.0, -0.5, -0.0, 0.0, 1e-300, 0.25, 1.0, 2.5, 10.0, 700.0};
  enum { N = sizeof xs / sizeof xs[0] };
  double (*const refs[])(double) = {exp, expm1, log, log1p, log2, log10, tanh, NULL, erf, erfc, NULL, NULL, NULL,
                                    sin, cos};
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    if (fn == TS_CG_POW)
      continue;
    char name[32];
    snprintf(name, sizeof name, "d%s", ts_cg_math_name((ts_cg_math_fn)fn));
    void *p = lookup(j, name);
    if (!p)
      continue;
    vdfn1 f;
    memcpy(&f, &p, sizeof f);
    double y[N];
    f(xs, y, N);
    for (int i = 0; i < N; i++) {
      double x = xs[i], ref;
      switch (fn) {
      case TS_CG_SIGMOID:
        ref = x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
        break;
      case TS_CG_GELU_ERF:
        ref = ref_gelu_erf(x);
        break;
      case TS_CG_GELU_TANH:
        ref = ref_gelu_tanh(x);
        break;
      default:
        ref = refs[fn](x);
      }
      bool ok = isnan(ref) ? isnan(y[i]) : (y[i] == ref || fabs(y[i] - ref) <= 1e-15 * fabs(ref));
      if (!TS_CHECK(ok))
        fprintf(stderr, "  %s: f64 %s(%a) = %a, expected %a\n", cur_level, name + 1, x, y[i], ref);
    }
  }
  void *p = lookup(j, "dpow");
  if (p) {
    vdfn2 f;
    memcpy(&f, &p, sizeof f);
    const double a[] = {2.0, -2.0, 0.0, 10.0, 1.5, -8.0};
    const double b[] = {0.5, 3.0, -1.0, -300.0, 1e3, 1.0 / 3};
    double r[6];
    f(a, b, r, 6);
    for (int i = 0; i < 6; i++) {
      double ref = pow(a[i], b[i]);
      if (!TS_CHECK(isnan(ref) ? isnan(r[i]) : r[i] == ref))
        fprintf(stderr, "  %s: f64 pow(%a, %a) = %a, expected %a\n", cur_level, a[i], b[i], r[i], ref);
    }
  }
}

/* at O0 nothing is inlined: the functions run as calls */
static void test_o0(void) {
  ts_cg_module m;
  ts_cg_target_opts o = {.opt_level = 0};
  if (!TS_CHECK(ts_cg_module_init(&m, "o0", &o, NULL)))
    return;
  build_loop(&m, "vexp", TS_CG_EXP, m.t_f32);
  build_loop(&m, "vpow", TS_CG_POW, m.t_f32);
  TS_CHECK(ts_cg_module_optimize(&m, NULL));
  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (!TS_CHECK(j)) {
    fprintf(stderr, "  %s\n", err ? err : "");
    free(err);
    return;
  }
  void *p1 = lookup(j, "vexp"), *p2 = lookup(j, "vpow");
  if (p1 && p2) {
    vfn1 f;
    vfn2 g;
    memcpy(&f, &p1, sizeof f);
    memcpy(&g, &p2, sizeof g);
    const float x[4] = {0.0f, 1.0f, -2.5f, 80.0f}, y[4] = {2.0f, 3.0f, -2.0f, 0.5f};
    float r[4];
    f(x, r, 4);
    for (int i = 0; i < 4; i++)
      TS_CHECK(ulp_dist(r[i], (float)exp((double)x[i])) <= 1);
    g(x, y, r, 4);
    for (int i = 0; i < 4; i++)
      TS_CHECK(ulp_dist(r[i], (float)pow((double)x[i], (double)y[i])) <= 1);
  }
  ts_test_jit_free(j);
}

/* ------------------------------------------------------------ ISA levels */

/* What the host runs, asked at run time (GCC's and clang's
 * __builtin_cpu_supports, which report AVX and AVX-512 only where the OS
 * saves their registers, XGETBV). Not asked: CX16 and LAHF (v2), F16C,
 * LZCNT and MOVBE (v3), which every part with the rest has and clang 16
 * cannot name. */
#if defined(__x86_64__)
static bool host_v2(void) {
  return __builtin_cpu_supports("sse3") && __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
         __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
}
static bool host_v3(void) {
  return host_v2() && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
static bool host_v4(void) {
  return host_v3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

/* the instruction encodings a level's code is made of */
enum { ISA_LEGACY, ISA_VEX, ISA_EVEX };

typedef struct level {
  const char *name; /* in messages */
  const char *cpu, *features;
  int lanes;  /* float lanes of a loop computing in float (in double: half to all) */
  int isa;    /* its code: only legacy SSE encodings; VEX (AVX), no EVEX; EVEX (AVX-512) */
  bool zmm;   /* 512-bit float vectors: loops computing in float use zmm */
  bool fma;   /* llvm.fmuladd fuses */
  bool (*host_runs)(void);
  const char *needs; /* what the host must have to run it */
} level;

/* x86-64-v4 as LLVM tunes it prefers 256-bit vectors; with -prefer-256-bit
 * its loops are 512 bits wide (with 256-bit epilogues), as in the default
 * build on an AVX-512 host (Zen 4, Skylake-X). Both are tested: their code
 * differs (a division by reciprocal estimate got vrcp14ps in one, vrcpps
 * in the other). */
static const level levels[] = {
    {"x86-64-v2", "x86-64-v2", NULL, 4, ISA_LEGACY, false, false, host_v2, "SSE4.2 and POPCNT"},
    {"x86-64-v3", "x86-64-v3", NULL, 8, ISA_VEX, false, true, host_v3, "AVX2, FMA and BMI2"},
    {"x86-64-v4", "x86-64-v4", NULL, 8, ISA_EVEX, false, true, host_v4, "AVX-512 (F, BW, CD, DQ, VL)"},
    {"x86-64-v4/512", "x86-64-v4", "-prefer-256-bit", 16, ISA_EVEX, true, true, host_v4,
     "AVX-512 (F, BW, CD, DQ, VL)"},
};
#define NLEVELS (sizeof levels / sizeof levels[0])

/* whether a comma-separated list (an environment variable; NULL: every
 * name) names `name` */
static bool listed(const char *list, const char *name) {
  if (!list || !*list)
    return true;
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && memcmp(p, name, n) == 0)
      return true;
    if (!end)
      break;
    p = end + 1;
  }
  return false;
}

/* the functions computing in double inside (math.c): their vectors of
 * doubles take twice the registers, and the vectoriser picks half the
 * lanes for some (erf, erfc, sin and cos at x86-64-v3: 4) */
static bool in_double(ts_cg_math_fn fn) {
  return fn == TS_CG_LOG2 || fn == TS_CG_LOG10 || fn == TS_CG_ERF || fn == TS_CG_ERFC || fn == TS_CG_POW ||
         fn == TS_CG_SIN || fn == TS_CG_COS || fn == TS_CG_GELU_TANH;
}

/* the most lanes of any float vector type in f's IR (1: scalar) */
static int float_lanes(LLVMValueRef f) {
  char *ir = LLVMPrintValueToString(f);
  int most = 1;
  for (const char *p = ir; p && (p = strchr(p, '<')) != NULL; p++) {
    char *end;
    long n = strtol(p + 1, &end, 10);
    if (end != p + 1 && strncmp(end, " x float>", 9) == 0 && n > most)
      most = (int)n;
  }
  LLVMDisposeMessage(ir);
  return most;
}

typedef struct code_stats {
  int64_t legacy, vex, evex, bad; /* instructions by encoding; bad: undecodable */
  bool zmm;
  char estimate[24]; /* an estimate instruction used (rcpps, vrsqrt14ps...), if any */
} code_stats;

/* Decodes a function's machine code: each instruction's encoding from its
 * first byte after the legacy prefixes (in 64-bit mode 0xc4/0xc5 can only
 * start a VEX and 0x62 an EVEX instruction), its text for zmm and for the
 * reciprocal (square root) estimates. */
static void code_scan(LLVMDisasmContextRef dc, const uint8_t *code, uint64_t size, code_stats *st) {
  memset(st, 0, sizeof *st);
  uint64_t pc = 0;
  while (pc < size) {
    char text[160];
    size_t n = LLVMDisasmInstruction(dc, (uint8_t *)(uintptr_t)(code + pc), size - pc, pc, text, sizeof text);
    if (n == 0) {
      st->bad++;
      pc++;
      continue;
    }
    static const uint8_t prefixes[] = {0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3};
    uint64_t k = pc;
    while (k + 1 < pc + n && memchr(prefixes, code[k], sizeof prefixes))
      k++;
    if (code[k] == 0xc4 || code[k] == 0xc5)
      st->vex++;
    else if (code[k] == 0x62)
      st->evex++;
    else
      st->legacy++;
    st->zmm = st->zmm || strstr(text, "%zmm") != NULL;
    char mnemonic[24];
    if (sscanf(text, "%23s", mnemonic) == 1 && (strstr(mnemonic, "rcp") || strstr(mnemonic, "rsqrt")))
      memcpy(st->estimate, mnemonic, sizeof mnemonic);
    pc += n;
  }
}

/* The level's code is what the level allows, and uses it: decoded from
 * the object that the JIT then runs. Loops computing in double may use zmm
 * at x86-64-v4 for their 8 doubles. No estimate instruction: what those
 * give differs between CPUs (math.c divides with vdivps), and results
 * measured on this host would not hold on another. */
static bool check_code(const level *L, ts_cg_math_fn fn, const char *name, const code_stats *st) {
  bool ok = st->bad == 0 && st->legacy + st->vex + st->evex > 0;
  if (L->isa == ISA_LEGACY)
    ok = ok && st->vex == 0 && st->evex == 0;
  else if (L->isa == ISA_VEX)
    ok = ok && st->vex > 0 && st->evex == 0;
  else
    ok = ok && st->evex > 0;
  if (!in_double(fn))
    ok = ok && st->zmm == L->zmm;
  ok = ok && !st->estimate[0];
  if (!TS_CHECK(ok))
    fprintf(stderr, "  %s: %s: %lld legacy, %lld VEX, %lld EVEX, %lld undecodable instructions, zmm %s%s%s\n",
            L->name, name, (long long)st->legacy, (long long)st->vex, (long long)st->evex, (long long)st->bad,
            st->zmm ? "used" : "unused", st->estimate[0] ? ", estimate " : "", st->estimate);
  return ok;
}

/* float probe(float x) = llvm.fmuladd(x, x, -(x * x)): the low half of x^2
 * where the code fuses (FMA), 0 where it does not */
static void build_probe(ts_cg_module *m) {
  LLVMValueRef f = LLVMAddFunction(m->mod, "probe", LLVMFunctionType(m->t_f32, &m->t_f32, 1, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->ctx, f, "entry"));
  LLVMValueRef x = LLVMGetParam(f, 0);
  LLVMValueRef args[3] = {x, x, LLVMBuildFNeg(b, LLVMBuildFMul(b, x, x, ""), "")};
  unsigned id = LLVMLookupIntrinsicID("llvm.fmuladd", 12);
  LLVMValueRef fma = LLVMGetIntrinsicDeclaration(m->mod, id, &m->t_f32, 1);
  LLVMBuildRet(b, LLVMBuildCall2(b, LLVMIntrinsicGetType(m->ctx, id, &m->t_f32, 1), fma, args, 3, ""));
  LLVMDisposeBuilder(b);
}

/* Every lowering at one level: built for its CPU (not the host's), the
 * loops vectorised as wide as the level's registers with no call left,
 * the object's code made of the level's encodings, then, where the host
 * can run it, that object run through the JIT against the references. */
static void test_level(const level *L, uint32_t stride, const char *only_fns) {
  cur_level = L->name;
  printf("%s (cpu %s%s%s):\n", L->name, L->cpu, L->features ? ", features " : "", L->features ? L->features : "");
  ts_cg_module m;
  ts_diag d = {0};
  ts_cg_target_opts o = {.cpu = L->cpu, .features = L->features, .opt_level = 2};
  if (!TS_CHECK(ts_cg_module_init(&m, "math", &o, &d))) {
    fprintf(stderr, "  %s: %s\n", L->name, d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return;
  }
  char name[32];
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    snprintf(name, sizeof name, "v%s", ts_cg_math_name((ts_cg_math_fn)fn));
    build_loop(&m, name, (ts_cg_math_fn)fn, m.t_f32);
    snprintf(name, sizeof name, "d%s", ts_cg_math_name((ts_cg_math_fn)fn));
    build_loop(&m, name, (ts_cg_math_fn)fn, m.t_f64);
  }
  build_probe(&m);
  if (!TS_CHECK(ts_cg_module_optimize(&m, &d)))
    fprintf(stderr, "  %s: %s\n", L->name, d.text.data ? d.text.data : "");
  ts_diag_free(&d);

  /* vectorised to the level's width, everything inlined, no call left (no libm) */
  int lanes_of[TS_CG_MATH_COUNT] = {0};
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    snprintf(name, sizeof name, "v%s", ts_cg_math_name((ts_cg_math_fn)fn));
    LLVMValueRef f = LLVMGetNamedFunction(m.mod, name);
    if (!TS_CHECK(f))
      continue;
    int least = in_double((ts_cg_math_fn)fn) ? L->lanes / 2 : L->lanes;
    int lanes = lanes_of[fn] = float_lanes(f);
    if (!TS_CHECK(!calls_non_intrinsic(f)))
      fprintf(stderr, "  %s: %s still calls something\n", L->name, name);
    if (!TS_CHECK(lanes >= least && lanes <= L->lanes))
      fprintf(stderr, "  %s: %s is vectorised to %d lanes, expected %d to %d\n", L->name, name, lanes, least,
              L->lanes);
  }

  char *triple = LLVMGetDefaultTargetTriple();
  char *err = NULL;
  LLVMMemoryBufferRef obj = ts_test_jit_compile(&m, &err);
  if (!TS_CHECK(obj)) {
    fprintf(stderr, "  %s: object: %s\n", L->name, err ? err : "");
    free(err);
    LLVMDisposeMessage(triple);
    return;
  }
  LLVMDisasmContextRef dc = LLVMCreateDisasmCPUFeatures(triple, "", "", NULL, 0, NULL, NULL);
  LLVMDisposeMessage(triple);
  if (TS_CHECK(dc)) {
    for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
      snprintf(name, sizeof name, "v%s", ts_cg_math_name((ts_cg_math_fn)fn));
      uint64_t size;
      const uint8_t *code = ts_test_obj_function(obj, name, &size);
      if (!TS_CHECK(code && size > 0)) {
        fprintf(stderr, "  %s: no code for %s in the object\n", L->name, name);
        continue;
      }
      code_stats st;
      code_scan(dc, code, size, &st);
      check_code(L, (ts_cg_math_fn)fn, name, &st);
      printf("  %-11s %2d lanes, %4lld instructions (%lld VEX, %lld EVEX)%s\n", name, lanes_of[fn],
             (long long)(st.legacy + st.vex + st.evex), (long long)st.vex, (long long)st.evex, st.zmm ? ", zmm" : "");
    }
    LLVMDisasmDispose(dc);
  }

  if (!L->host_runs()) {
    printf("skipped %s: the host has no %s\n", L->name, L->needs);
    LLVMDisposeMemoryBuffer(obj);
    return;
  }
  ts_test_jit *j = ts_test_jit_load(obj, &err);
  if (!TS_CHECK(j)) {
    fprintf(stderr, "  %s: JIT: %s\n", L->name, err ? err : "");
    free(err);
    return;
  }

  /* the code that runs is the level's: it fuses where the level has FMA,
   * even on a host that has FMA */
  void *pp = lookup(j, "probe");
  if (pp) {
    float (*probe)(float);
    memcpy(&probe, &pp, sizeof probe);
    float lo = probe(1.0f + 0x1p-12f); /* (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 */
    if (!TS_CHECK(lo == (L->fma ? 0x1p-24f : 0.0f)))
      fprintf(stderr, "  %s: fmuladd gave %a: the code is not the level's (FMA %s)\n", L->name, (double)lo,
              L->fma ? "expected" : "not expected");
  }

  printf("  float32 against the double C library, every %u-th bit pattern:\n", stride);
  for (size_t i = 0; i < NCASES; i++) {
    const math_case *c = &cases[i];
    if (!listed(only_fns, ts_cg_math_name(c->fn)))
      continue;
    snprintf(name, sizeof name, "v%s", ts_cg_math_name(c->fn));
    void *p = lookup(j, name);
    if (!p)
      continue;
    vfn1 f;
    memcpy(&f, &p, sizeof f);
    sweep s = {.range_ok = true};
    run_sweep(c, f, stride, &s);
    int64_t worst_special = 0;
    check_specials(c, f, &worst_special);
    printf("  %-10s max %lld ulp (at %a) over %lld values; specials max %lld\n", ts_cg_math_name(c->fn),
           (long long)s.max_ulp, (double)s.worst_x, (long long)s.n, (long long)worst_special);
    if (!TS_CHECK(s.max_ulp <= c->bound))
      fprintf(stderr, "  %s: %s: %lld ulp at %a, bound %d\n", L->name, name, (long long)s.max_ulp, (double)s.worst_x,
              c->bound);
    if (!TS_CHECK(s.range_ok))
      fprintf(stderr, "  %s: %s: a result out of [-1, 1] past |x| = %g\n", L->name, name, c->acc_limit);
  }
  void *pw = listed(only_fns, "pow") ? lookup(j, "vpow") : NULL;
  if (pw) {
    vfn2 f;
    memcpy(&f, &pw, sizeof f);
    test_pow(f);
  }
  test_f64(j);
  ts_test_jit_free(j);
}

#endif /* __x86_64__ */

int main(void) {
  test_module();
  test_o0();
#if defined(__x86_64__)
  LLVMInitializeNativeDisassembler();
  uint32_t stride = 1021;
  const char *env = getenv("TSAOT_MATH_STRIDE");
  if (env && atoi(env) > 0)
    stride = (uint32_t)atoi(env);
  const char *only_levels = getenv("TSAOT_MATH_LEVELS"), *only_fns = getenv("TSAOT_MATH_FNS");
  for (size_t l = 0; l < NLEVELS; l++)
    if (listed(only_levels, levels[l].name))
      test_level(&levels[l], stride, only_fns);
#else
  printf("skipped the ISA levels: they are x86-64's, the host is not\n");
#endif
  return ts_test_finish();
}
