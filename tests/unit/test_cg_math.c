/* tests/unit/test_cg_math.c: codegen/module.c and codegen/math.c.
 *
 * Every float32 function of math.c is called from a loop kernel
 * `void vNAME(const float *x, float *y, int64_t n)`, optimised at O2 (the
 * loops must come out vectorised, with no call left: checked on hosts with
 * AVX or better), run through the JIT (cg_jit.h) and compared with the
 * double-precision C library rounded to float over every power of two, a
 * sweep of bit patterns (every STRIDE-th, both signs; TSAOT_MATH_STRIDE in
 * the environment overrides it, 1 is exhaustive) and special values. The
 * maximum error in ulp is printed per function and must stay within the
 * bound measured for it. sigmoid and tanh divide by a reciprocal estimate
 * with one Newton step (math.c's ts_mh_fdiv_fast) where the target has one
 * (x86 vectors): measured 2 and 1 ulp at every 61st bit pattern, the same
 * bounds as with a true division (sigmoid 2, tanh 2); PyTorch's Sleef
 * kernels are 1-ulp variants, the zoo's tolerances 1e-5 + 1e-4 |x|. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

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
  int bound; /* max ulp allowed: what was measured */
  double acc_limit; /* |x| above which only the range is checked (0: none) */
} math_case;

static const math_case cases[] = {
    {TS_CG_EXP, exp, 1, 0},
    {TS_CG_EXPM1, expm1, 1, 0},
    {TS_CG_LOG, log, 1, 0},
    {TS_CG_LOG1P, log1p, 1, 0},
    {TS_CG_LOG2, log2, 1, 0},
    {TS_CG_LOG10, log10, 1, 0},
    {TS_CG_TANH, tanh, 2, 0},
    {TS_CG_SIGMOID, ref_sigmoid, 2, 0},
    {TS_CG_ERF, erf, 1, 0},
    {TS_CG_ERFC, erfc, 1, 0},
    {TS_CG_GELU_ERF, ref_gelu_erf, 4, 0}, /* computed in float (math.c): 4 ulp at every 61st pattern */
    {TS_CG_GELU_TANH, ref_gelu_tanh, 3, 0}, /* computed in float (math.c): 3 ulp at every 61st pattern */
    {TS_CG_SIN, sin, 1, 0x1p24},
    {TS_CG_COS, cos, 1, 0x1p24},
};
#define NCASES (sizeof cases / sizeof cases[0])

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
  TS_CHECK(m.vf32 == 4 || m.vf32 == 8 || m.vf32 == 16);
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
      fprintf(stderr, "  %s(%a) = %a, expected %a\n", ts_cg_math_name(c->fn), (double)x, (double)y[i],
              (double)ref);
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
  TS_CHECK(worst <= 1);

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
      fprintf(stderr, "  pow(%a, %a) = %a, expected %a\n", (double)sx[i], (double)sy[i], (double)sr[i], (double)e);
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
        fprintf(stderr, "  f64 %s(%a) = %a, expected %a\n", name + 1, x, y[i], ref);
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
      TS_CHECK(isnan(ref) ? isnan(r[i]) : r[i] == ref);
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

int main(void) {
  test_module();
  test_o0();

  ts_cg_module m;
  ts_diag d = {0};
  ts_cg_target_opts o = {.opt_level = 2};
  if (!TS_CHECK(ts_cg_module_init(&m, "math", &o, &d))) {
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
    return ts_test_finish();
  }
  int vf32 = m.vf32;
  char name[32];
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    snprintf(name, sizeof name, "v%s", ts_cg_math_name((ts_cg_math_fn)fn));
    build_loop(&m, name, (ts_cg_math_fn)fn, m.t_f32);
    snprintf(name, sizeof name, "d%s", ts_cg_math_name((ts_cg_math_fn)fn));
    build_loop(&m, name, (ts_cg_math_fn)fn, m.t_f64);
  }
  if (!TS_CHECK(ts_cg_module_optimize(&m, &d)))
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
  ts_diag_free(&d);

  /* vectorised, everything inlined, no call left (no libm) */
  printf("vf32 = %d\n", vf32);
  for (int fn = 0; fn < TS_CG_MATH_COUNT; fn++) {
    snprintf(name, sizeof name, "v%s", ts_cg_math_name((ts_cg_math_fn)fn));
    LLVMValueRef f = LLVMGetNamedFunction(m.mod, name);
    char *ir = f ? LLVMPrintValueToString(f) : NULL;
    if (!TS_CHECK(ir))
      continue;
    bool calls = calls_non_intrinsic(f);
    bool v8 = strstr(ir, "<8 x float>") || strstr(ir, "<16 x float>");
    bool v4 = v8 || strstr(ir, "<4 x float>");
    printf("  %-10s %s\n", name, v8 ? "vectorised (8+ lanes)" : v4 ? "vectorised (4 lanes)" : "scalar");
    if (!TS_CHECK(!calls))
      fprintf(stderr, "  %s still calls something\n", name);
    if (vf32 >= 8 && !TS_CHECK(v8))
      fprintf(stderr, "  %s is not vectorised to 8 lanes\n", name);
    LLVMDisposeMessage(ir);
  }

  char *err = NULL;
  ts_test_jit *j = ts_test_jit_new(&m, &err);
  if (!TS_CHECK(j)) {
    fprintf(stderr, "JIT: %s\n", err ? err : "");
    free(err);
    return ts_test_finish();
  }

  uint32_t stride = 1021;
  const char *env = getenv("TSAOT_MATH_STRIDE");
  if (env && atoi(env) > 0)
    stride = (uint32_t)atoi(env);
  printf("float32 against the double C library, every %u-th bit pattern:\n", stride);
  for (size_t i = 0; i < NCASES; i++) {
    const math_case *c = &cases[i];
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
      fprintf(stderr, "  %s: %lld ulp at %a, bound %d\n", name, (long long)s.max_ulp, (double)s.worst_x, c->bound);
    TS_CHECK(s.range_ok);
  }
  void *pp = lookup(j, "vpow");
  if (pp) {
    vfn2 f;
    memcpy(&f, &pp, sizeof f);
    test_pow(f);
  }
  test_f64(j);
  ts_test_jit_free(j);
  return ts_test_finish();
}
