/* runtime/kernels/pointwise.c: elementwise kernels (unary, binary,
 * comparisons, where, masked_fill, clamp, lerp, addcmul, fill_) and the C
 * functions of tensor_ops.h's "kernels/pointwise.c" section.
 *
 * How an op runs: the operands (tensors, and Scalar arguments as 0-d
 * "wrapped number" tensors) give a compute dtype by PyTorch's result_type;
 * the iterator (iter.h) broadcasts them and walks the output in runs; each
 * run is cut into blocks that are loaded into buffers of the compute domain
 * (float for float32/float16/bfloat16, double for float64, int64 for the
 * integer dtypes and bool), computed, and stored in the output's dtype.
 * Operands already in the domain's type and contiguous are used in place, so
 * contiguous float32 never goes through a buffer. Results of integer ops are
 * computed in int64 and truncated on store, which is the same as computing
 * in the narrow type with wraparound. */
#include <pthread.h>
#include <float.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "args.h"
#include "iter.h"
#include "special.h"
#include "tensor_ops.h"

#ifndef M_SQRT1_2
#define M_SQRT1_2 0.70710678118654752440
#endif
#ifndef M_2_SQRTPI
#define M_2_SQRTPI 1.12837916709551257390
#endif

/* ------------------------------------------------------------------ dtypes */

/* The C++ type names of TypeMeta, as lerp's dtype message prints them. */
static const char *pw_dt_cname(ts_dtype dt) {
  switch (dt) {
  case TS_DT_UINT8: return "unsigned char";
  case TS_DT_INT8: return "signed char";
  case TS_DT_INT16: return "short int";
  case TS_DT_INT32: return "int";
  case TS_DT_INT64: return "long int";
  case TS_DT_FLOAT16: return "c10::Half";
  case TS_DT_FLOAT32: return "float";
  case TS_DT_FLOAT64: return "double";
  case TS_DT_BOOL: return "bool";
  case TS_DT_BFLOAT16: return "c10::BFloat16";
  default: return "unknown";
  }
}

/* An operand's category for result_type. */
static ts_result_kind pw_rkind(int32_t ndim, bool wrapped) {
  return wrapped ? TS_RESULT_WRAPPED : ndim > 0 ? TS_RESULT_DIM : TS_RESULT_ZERO_DIM;
}

ts_dtype ts_rt_result_type(const ts_iv *operands, uint32_t n) {
  ts_result_state s = TS_RESULT_STATE_INIT;
  for (uint32_t k = 0; k < n; k++) {
    ts_iv v = operands[k];
    if (v.tag == TS_IV_TENSOR) ts_result_add(&s, (ts_dtype)v.u.t->dtype, pw_rkind(v.u.t->ndim, false));
    else if (v.tag == TS_IV_DOUBLE) ts_result_add(&s, TS_DT_FLOAT64, TS_RESULT_WRAPPED);
    else if (v.tag == TS_IV_INT) ts_result_add(&s, TS_DT_INT64, TS_RESULT_WRAPPED);
    else if (v.tag == TS_IV_BOOL) ts_result_add(&s, TS_DT_BOOL, TS_RESULT_WRAPPED);
  }
  ts_dtype r = ts_result_type(&s);
  return r == TS_DT_NONE ? TS_DT_FLOAT32 : r;
}

bool ts_rt_broadcast_shapes(ts_rt_ctx *c, int32_t na, const int64_t *a, int32_t nb, const int64_t *b,
                            int32_t *out_ndim, int64_t *out) {
  int32_t nd[2] = {na, nb};
  const int64_t *sh[2] = {a, b};
  return ts_rt_iter_broadcast(c, 2, nd, sh, out_ndim, out);
}

/* ----------------------------------------------------------------- the ops */

/* The ops are ir/ops.def's pointwise rows (ts_pw_op, ts_pw_get): their
 * layouts, dtype rules and formulas. */
static unsigned pw_rule(ts_pw_op op) { return ts_pw_get(op)->rule; }

/* Op parameters (alpha, limits, slopes), as given and as int64. */
typedef struct pw_par {
  double d[3];
  int64_t i[3];
} pw_par;

/* Block size of the buffered loops. */
#define PW_BLK 256

/* What one run needs, shared by the threads of the iterator. */
typedef struct pw_loop {
  ts_pw_op op;
  int32_t nops;                 /* output + inputs */
  ts_dtype cdt;                 /* compute dtype */
  ts_dtype dt[TS_RT_ITER_MAX_OPS];
  bool narrow[TS_RT_ITER_MAX_OPS]; /* input must be rounded to cdt after loading */
  pw_par par;
  atomic_int zerodiv;
} pw_loop;

/* float -> int64 as x86's conversion does for values out of range (PyTorch
 * leaves it to the hardware); in range it truncates toward zero. */
static inline int64_t pw_d2i(double v) {
  if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}

/* --------------------------------------------------- loads and stores */

/* Loads m elements of dtype dt, stride st bytes, into buf of the domain type
 * T. A zero stride loads one element and repeats it. */
#define PW_LOAD_DEF(SUF, T, FROM_F, FROM_I)                                                                      \
  static void pw_load_##SUF(const char *p, int64_t st, ts_dtype dt, T *buf, int64_t m) {                        \
    int64_t cnt = st == 0 ? 1 : m;                                                                               \
    switch (dt) {                                                                                                \
    case TS_DT_FLOAT32: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_F(*(const float *)(p + i * st)); break;  \
    case TS_DT_FLOAT64: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_F(*(const double *)(p + i * st)); break; \
    case TS_DT_FLOAT16:                                                                                          \
      for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_F(ts_rt_half_to_float(*(const uint16_t *)(p + i * st)));  \
      break;                                                                                                     \
    case TS_DT_BFLOAT16:                                                                                         \
      for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_F(ts_rt_bf16_to_float(*(const uint16_t *)(p + i * st)));  \
      break;                                                                                                     \
    case TS_DT_INT64: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const int64_t *)(p + i * st)); break; \
    case TS_DT_INT32: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const int32_t *)(p + i * st)); break; \
    case TS_DT_INT16: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const int16_t *)(p + i * st)); break; \
    case TS_DT_INT8: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const int8_t *)(p + i * st)); break;   \
    case TS_DT_UINT8: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const uint8_t *)(p + i * st)); break; \
    case TS_DT_BOOL: for (int64_t i = 0; i < cnt; i++) buf[i] = FROM_I(*(const uint8_t *)(p + i * st) != 0); break; \
    default: for (int64_t i = 0; i < cnt; i++) buf[i] = 0; break;                                              \
    }                                                                                                            \
    if (st == 0)                                                                                                 \
      for (int64_t i = 1; i < m; i++) buf[i] = buf[0];                                                           \
  }

/* Stores m domain values into dtype dt at stride st. */
#define PW_STORE_DEF(SUF, T, TO_I)                                                                               \
  static void pw_store_##SUF(char *p, int64_t st, ts_dtype dt, const T *buf, int64_t m) {                       \
    switch (dt) {                                                                                                \
    case TS_DT_FLOAT32: for (int64_t i = 0; i < m; i++) *(float *)(p + i * st) = (float)buf[i]; break;          \
    case TS_DT_FLOAT64: for (int64_t i = 0; i < m; i++) *(double *)(p + i * st) = (double)buf[i]; break;        \
    case TS_DT_FLOAT16:                                                                                          \
      for (int64_t i = 0; i < m; i++) *(uint16_t *)(p + i * st) = ts_rt_float_to_half((float)buf[i]);          \
      break;                                                                                                     \
    case TS_DT_BFLOAT16:                                                                                         \
      for (int64_t i = 0; i < m; i++) *(uint16_t *)(p + i * st) = ts_rt_float_to_bf16((float)buf[i]);          \
      break;                                                                                                     \
    case TS_DT_INT64: for (int64_t i = 0; i < m; i++) *(int64_t *)(p + i * st) = TO_I(buf[i]); break;           \
    case TS_DT_INT32: for (int64_t i = 0; i < m; i++) *(int32_t *)(p + i * st) = (int32_t)TO_I(buf[i]); break;  \
    case TS_DT_INT16: for (int64_t i = 0; i < m; i++) *(int16_t *)(p + i * st) = (int16_t)TO_I(buf[i]); break;  \
    case TS_DT_INT8: for (int64_t i = 0; i < m; i++) *(int8_t *)(p + i * st) = (int8_t)TO_I(buf[i]); break;     \
    case TS_DT_UINT8: for (int64_t i = 0; i < m; i++) *(uint8_t *)(p + i * st) = (uint8_t)TO_I(buf[i]); break;  \
    case TS_DT_BOOL: for (int64_t i = 0; i < m; i++) *(uint8_t *)(p + i * st) = buf[i] != 0; break;             \
    default: break;                                                                                              \
    }                                                                                                            \
  }

#define PW_ID(x) (x)
#define PW_TO_F(x) ((float)(x))
#define PW_TO_D(x) ((double)(x))
#define PW_TO_I64(x) ((int64_t)(x))
#define PW_F2I(x) pw_d2i((double)(x))

PW_LOAD_DEF(f, float, PW_TO_F, PW_TO_F)
PW_LOAD_DEF(d, double, PW_TO_D, PW_TO_D)
PW_LOAD_DEF(i, int64_t, PW_F2I, PW_TO_I64)
PW_STORE_DEF(f, float, PW_F2I)
PW_STORE_DEF(d, double, PW_F2I)
PW_STORE_DEF(i, int64_t, PW_ID)

/* Rounds loaded values to the compute dtype (a float64 operand of a float16
 * op is cast to float16 first, an int64 number of a uint8 op wraps), as
 * TensorIterator casts inputs to the common dtype. */
static void pw_narrow_f(float *buf, int64_t m, ts_dtype cdt) {
  if (cdt == TS_DT_FLOAT16)
    for (int64_t i = 0; i < m; i++) buf[i] = ts_rt_half_to_float(ts_rt_float_to_half(buf[i]));
  else if (cdt == TS_DT_BFLOAT16)
    for (int64_t i = 0; i < m; i++) buf[i] = ts_rt_bf16_to_float(ts_rt_float_to_bf16(buf[i]));
}

static void pw_narrow_d(double *buf, int64_t m, ts_dtype cdt) {
  (void)buf, (void)m, (void)cdt;
}

static void pw_narrow_i(int64_t *buf, int64_t m, ts_dtype cdt) {
  switch (cdt) {
  case TS_DT_INT32: for (int64_t i = 0; i < m; i++) buf[i] = (int32_t)buf[i]; break;
  case TS_DT_INT16: for (int64_t i = 0; i < m; i++) buf[i] = (int16_t)buf[i]; break;
  case TS_DT_INT8: for (int64_t i = 0; i < m; i++) buf[i] = (int8_t)buf[i]; break;
  case TS_DT_UINT8: for (int64_t i = 0; i < m; i++) buf[i] = (uint8_t)buf[i]; break;
  case TS_DT_BOOL: for (int64_t i = 0; i < m; i++) buf[i] = buf[i] != 0; break;
  default: break;
  }
}

/* ---------------------------------------------------- floating compute */

/* Floating helpers, once for float and once for double (tgmath picks the
 * float or double libm function from T). */
#define PW_FHELP_DEF(SUF, T)                                                                                     \
  /* Python's floor division, as c10's div_floor_floating */                                                    \
  static inline T pw_divfloor_##SUF(T a, T b) {                                                                  \
    if (b == 0) return a / b;                                                                                    \
    T mod = fmod(a, b);                                                                                          \
    T div = (a - mod) / b;                                                                                       \
    if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                                                              \
    if (div == 0) return copysign((T)0, a / b);                                                                  \
    T fl = floor(div);                                                                                           \
    if (div - fl > (T)0.5) fl += 1;                                                                              \
    return fl;                                                                                                   \
  }                                                                                                              \
  /* Python's %: the sign of the divisor */                                                                      \
  static inline T pw_rem_##SUF(T a, T b) {                                                                       \
    T mod = fmod(a, b);                                                                                          \
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;                                                              \
    return mod;                                                                                                  \
  }                                                                                                              \
  /* maximum/minimum propagate NaN from either side */                                                          \
  static inline T pw_max_##SUF(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }                    \
  static inline T pw_min_##SUF(T a, T b) { return a != a ? a : b != b ? b : a < b ? a : b; }

PW_FHELP_DEF(f, float)
PW_FHELP_DEF(d, double)

/* Helpers whose operands the formulas would repeat, once per type. */
#define PW_FFORM_DEF(SUF, T)                                                                                     \
  static inline T pw_lo_##SUF(T x, T lo) { return x < lo ? lo : x; }                                           \
  static inline T pw_hi_##SUF(T x, T hi) { return x > hi ? hi : x; }                                            \
  static inline T pw_sign_##SUF(T x) { return (T)((x > 0) - (x < 0)); }                                         \
  static inline T pw_gelu_##SUF(T x) { return x * (T)0.5 * ((T)1 + erf(x * (T)M_SQRT1_2)); }                     \
  static inline T pw_gelu_tanh_##SUF(T x) {                                                                      \
    T k = (T)(M_2_SQRTPI * M_SQRT1_2);                                                                           \
    return (T)0.5 * x * ((T)1 + tanh(k * (x + (T)0.044715 * x * x * x)));                                        \
  }

PW_FFORM_DEF(f, float)
PW_FFORM_DEF(d, double)

/* The largest finite value of the compute dtype (nan_to_num's default for
 * +inf; float16 and bfloat16 compute in float). */
static inline float pw_big_f(ts_dtype cdt) {
  return cdt == TS_DT_FLOAT16 ? 65504.0f : cdt == TS_DT_BFLOAT16 ? 3.38953139e38f : FLT_MAX;
}
static inline double pw_big_d(ts_dtype cdt) { return (void)cdt, DBL_MAX; }

/* nextafter in the compute dtype: bfloat16 steps by its own ulp (its
 * values are exact in float). */
static inline float pw_nextafter_f(float x, float y, ts_dtype cdt) {
  if (cdt != TS_DT_BFLOAT16 || x != x || y != y || x == y) return cdt == TS_DT_BFLOAT16 && x == y ? y : nextafterf(x, y);
  if (x == 0) return ts_rt_bf16_to_float((uint16_t)(y < 0 ? 0x8001 : 0x0001));
  uint16_t bits = ts_rt_float_to_bf16(x);
  bits = (uint16_t)(((x < y) == (x > 0)) ? bits + 1 : bits - 1);
  return ts_rt_bf16_to_float(bits);
}
static inline double pw_nextafter_d(double x, double y, ts_dtype cdt) { return (void)cdt, nextafter(x, y); }

/* The formula language of ops.def in the floating domains: PW_T is float or
 * double, PW_SUF f or d, and <tgmath.h> picks the float or double libm
 * function. The integer-only primitives give NaN (their rows refuse
 * floating dtypes before running). */
#define PW_CAT_(a, b) a##b
#define PW_CAT(a, b) PW_CAT_(a, b)
#define PW_ZERO ((PW_T)0)
#define PW_ONE ((PW_T)1)
#define PW_K(v) ((PW_T)(v))
#define PW_ADD(x, y) ((x) + (y))
#define PW_SUB(x, y) ((x) - (y))
#define PW_MUL(x, y) ((x) * (y))
#define PW_DIV(x, y) ((x) / (y))
#define PW_NEG(x) (-(x))
#define PW_ABS(x) fabs(x)
#define PW_EQ(x, y) ((x) == (y))
#define PW_NE(x, y) ((x) != (y))
#define PW_LT(x, y) ((x) < (y))
#define PW_LE(x, y) ((x) <= (y))
#define PW_GT(x, y) ((x) > (y))
#define PW_GE(x, y) ((x) >= (y))
#define PW_NZ(x) ((x) != 0)
#define PW_AND(x, y) ((x) && (y))
#define PW_OR(x, y) ((x) || (y))
#define PW_XOR(x, y) ((x) != (y))
#define PW_SEL(c, x, y) ((c) ? (x) : (y))
#define PW_LO(x, lo) PW_CAT(pw_lo_, PW_SUF)(x, lo)
#define PW_HI(x, hi) PW_CAT(pw_hi_, PW_SUF)(x, hi)
#define PW_MAX(x, y) PW_CAT(pw_max_, PW_SUF)(x, y)
#define PW_MIN(x, y) PW_CAT(pw_min_, PW_SUF)(x, y)
#define PW_FLOOR(x) floor(x)
#define PW_CEIL(x) ceil(x)
#define PW_TRUNC(x) trunc(x)
#define PW_RINT(x) nearbyint(x)
#define PW_SIGN(x) PW_CAT(pw_sign_, PW_SUF)(x)
#define PW_ISNAN(x) ((x) != (x))
#define PW_ISINF(x) isinf(x)
#define PW_ISFINITE(x) isfinite(x)
#define PW_EXP(x) exp(x)
#define PW_EXP2(x) exp2(x)
#define PW_EXPM1(x) expm1(x)
#define PW_LOG(x) log(x)
#define PW_LOG2(x) log2(x)
#define PW_LOG10(x) log10(x)
#define PW_LOG1P(x) log1p(x)
#define PW_SQRT(x) sqrt(x)
#define PW_SIN(x) sin(x)
#define PW_COS(x) cos(x)
#define PW_TAN(x) tan(x)
#define PW_ASIN(x) asin(x)
#define PW_ACOS(x) acos(x)
#define PW_ATAN(x) atan(x)
#define PW_SINH(x) sinh(x)
#define PW_COSH(x) cosh(x)
#define PW_TANH(x) tanh(x)
#define PW_ERF(x) erf(x)
#define PW_SIGMOID(x) (PW_ONE / (PW_ONE + exp(-(x))))
#define PW_GELU(x) PW_CAT(pw_gelu_, PW_SUF)(x)
#define PW_GELU_TANH(x) PW_CAT(pw_gelu_tanh_, PW_SUF)(x)
#define PW_ATAN2(x, y) atan2(x, y)
#define PW_HYPOT(x, y) hypot(x, y)
#define PW_POW(x, y) pow(x, y)
#define PW_DIVTRUNC(x, y) trunc((x) / (y))
#define PW_DIVFLOOR(x, y) PW_CAT(pw_divfloor_, PW_SUF)(x, y)
#define PW_REM(x, y) PW_CAT(pw_rem_, PW_SUF)(x, y)
#define PW_FMOD(x, y) fmod(x, y)
#define PW_BAND(x, y) ((PW_T)NAN)
#define PW_BOR(x, y) ((PW_T)NAN)
#define PW_BXOR(x, y) ((PW_T)NAN)
#define PW_BNOT(x) ((PW_T)NAN)
#define PW_SHL(x, y) ((PW_T)NAN)
#define PW_SHR(x, y) ((PW_T)NAN)
#define PW_GCD(x, y) ((PW_T)NAN)
#define PW_ACOSH(x) acosh(x)
#define PW_ASINH(x) asinh(x)
#define PW_ATANH(x) atanh(x)
#define PW_ERFC(x) erfc(x)
#define PW_LGAMMA(x) lgamma(x)
#define PW_COPYSIGN(x, y) copysign(x, y)
#define PW_FMAX(x, y) fmax(x, y)
#define PW_FMIN(x, y) fmin(x, y)
#define PW_NEXTAFTER(x, y) PW_CAT(pw_nextafter_, PW_SUF)(x, y, L->cdt)
#define PW_SIGNBIT(x) (signbit(x) != 0)
#define PW_BIG PW_CAT(pw_big_, PW_SUF)(L->cdt)
#define PW_INF ((PW_T)INFINITY)
#define PW_SP(fn, x) ((PW_T)ts_rt_sp_##fn((double)(x)))
#define PW_SP2(fn, x, y) ((PW_T)ts_rt_sp_##fn((double)(x), (double)(y)))

/* One case per row: y[0..n) = formula over the operands a, b, w (a
 * domain's formula may leave an operand unread). */
#define PW_LOOP1(f)                                                                                              \
  for (int64_t i = 0; i < n; i++) {                                                                              \
    const PW_T a = xa[i];                                                                                        \
    (void)a;                                                                                                     \
    y[i] = (PW_T)(f);                                                                                            \
  }                                                                                                              \
  break;
#define PW_LOOP2(f)                                                                                              \
  for (int64_t i = 0; i < n; i++) {                                                                              \
    const PW_T a = xa[i], b = xb[i];                                                                             \
    (void)a, (void)b;                                                                                            \
    y[i] = (PW_T)(f);                                                                                            \
  }                                                                                                              \
  break;
#define PW_LOOP3(f)                                                                                              \
  for (int64_t i = 0; i < n; i++) {                                                                              \
    const PW_T a = xa[i], b = xb[i], w = xw[i];                                                                  \
    (void)a, (void)b, (void)w;                                                                                   \
    y[i] = (PW_T)(f);                                                                                            \
  }                                                                                                              \
  break;
#define TS_OP(...)
#define TS_PW(ns, name, ip, layout, nin, rule, kname, formula, ...) case TS_PW_##name: PW_LOOP##nin(formula)
#define TS_PWF(name, layout, nin, rule, kname, formula) case TS_PW_##name: PW_LOOP##nin(formula)

/* y[0..n) = op(x[0][..], x[1][..], ...) in float. */
static void pw_apply_f(pw_loop *L, float *const *x, float *y, int64_t n) {
#define PW_T float
#define PW_SUF f
  const float *xa = x[0], *xb = x[1], *xw = x[2];
  const float p0 = (float)L->par.d[0], p1 = (float)L->par.d[1], p2 = (float)L->par.d[2];
  (void)p0, (void)p1, (void)p2;
  switch (L->op) {
#include "ops.def"
  default: for (int64_t i = 0; i < n; i++) y[i] = 0; break;
  }
#undef PW_T
#undef PW_SUF
}

/* The same in double. */
static void pw_apply_d(pw_loop *L, double *const *x, double *y, int64_t n) {
#define PW_T double
#define PW_SUF d
  const double *xa = x[0], *xb = x[1], *xw = x[2];
  const double p0 = L->par.d[0], p1 = L->par.d[1], p2 = L->par.d[2];
  (void)p0, (void)p1, (void)p2;
  switch (L->op) {
#include "ops.def"
  default: for (int64_t i = 0; i < n; i++) y[i] = 0; break;
  }
#undef PW_T
#undef PW_SUF
}

/* ----------------------------------------------------- integer compute */

/* Wrapping int64 arithmetic (signed overflow is undefined in C). */
static inline int64_t pw_wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t pw_wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t pw_wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Integer power as ATen's powi: negative exponents give 0 except for bases
 * 1 and -1. */
static int64_t pw_powi(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    x *= x;
    b >>= 1;
  }
  return (int64_t)r;
}

/* Truncating and floor division and remainders; b != 0. */
static inline int64_t pw_idiv(int64_t a, int64_t b) { return b == -1 ? pw_wsub(0, a) : a / b; }
static inline int64_t pw_imod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
static inline int64_t pw_idivfloor(int64_t a, int64_t b) {
  int64_t q = pw_idiv(a, b), r = pw_imod(a, b);
  return (r != 0 && (r < 0) != (b < 0)) ? q - 1 : q;
}
static inline int64_t pw_irem(int64_t a, int64_t b) {
  int64_t r = pw_imod(a, b);
  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

/* v wrapped to the integral dtype dt, as a store and a load would. */
static inline int64_t pw_iwrap(int64_t v, ts_dtype dt) {
  switch (dt) {
  case TS_DT_INT32: return (int32_t)v;
  case TS_DT_INT16: return (int16_t)v;
  case TS_DT_INT8: return (int8_t)v;
  case TS_DT_UINT8: return (uint8_t)v;
  default: return v;
  }
}

/* ATen's calc_gcd in the dtype dt: Euclid on the absolute values, which
 * wrap in dt (gcd(-128, 6) in int8 is -2, as PyTorch computes it). */
static int64_t pw_gcd(int64_t a, int64_t b, ts_dtype dt) {
  a = pw_iwrap(a < 0 ? pw_wsub(0, a) : a, dt);
  b = pw_iwrap(b < 0 ? pw_wsub(0, b) : b, dt);
  while (a != 0) {
    int64_t r = a == -1 ? 0 : b % a; /* INT64_MIN % -1 traps */
    b = a;
    a = r;
  }
  return b;
}

/* v << b and v >> b as ATen's lshift/rshift kernels give them in v's dtype:
 * a shift by at least the width (or negative) is 0, or the sign. Computed
 * in int64, whose low bits are the narrow dtype's. */
static inline int64_t pw_shl(int64_t a, int64_t b) { return b < 0 || b >= 64 ? 0 : (int64_t)((uint64_t)a << b); }
static inline int64_t pw_shr(int64_t a, int64_t b) { return b < 0 || b >= 64 ? (a < 0 ? -1 : 0) : a >> b; }
static inline int64_t pw_iabs(int64_t a) { return a < 0 ? pw_wsub(0, a) : a; }
static inline int64_t pw_ilo(int64_t x, int64_t lo) { return x < lo ? lo : x; }
static inline int64_t pw_ihi(int64_t x, int64_t hi) { return x > hi ? hi : x; }
static inline int64_t pw_imax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t pw_imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* Integer division by zero: the loop raises ZeroDivisionError after it. */
static inline int64_t pw_zerodiv(pw_loop *L) {
  atomic_store_explicit(&L->zerodiv, 1, memory_order_relaxed);
  return 0;
}

/* The formula language in the int64 domain (integral dtypes and bool):
 * wrapping arithmetic; the floating-only primitives give 0 (their rows
 * compute in float or refuse integers before running). */
#undef PW_ZERO
#undef PW_ONE
#undef PW_K
#undef PW_ADD
#undef PW_SUB
#undef PW_MUL
#undef PW_DIV
#undef PW_NEG
#undef PW_ABS
#undef PW_LO
#undef PW_HI
#undef PW_MAX
#undef PW_MIN
#undef PW_FLOOR
#undef PW_CEIL
#undef PW_TRUNC
#undef PW_RINT
#undef PW_SIGN
#undef PW_ISNAN
#undef PW_ISINF
#undef PW_ISFINITE
#undef PW_EXP
#undef PW_EXP2
#undef PW_EXPM1
#undef PW_LOG
#undef PW_LOG2
#undef PW_LOG10
#undef PW_LOG1P
#undef PW_SQRT
#undef PW_SIN
#undef PW_COS
#undef PW_TAN
#undef PW_ASIN
#undef PW_ACOS
#undef PW_ATAN
#undef PW_SINH
#undef PW_COSH
#undef PW_TANH
#undef PW_ERF
#undef PW_SIGMOID
#undef PW_GELU
#undef PW_GELU_TANH
#undef PW_ATAN2
#undef PW_HYPOT
#undef PW_POW
#undef PW_DIVTRUNC
#undef PW_DIVFLOOR
#undef PW_REM
#undef PW_FMOD
#undef PW_BAND
#undef PW_BOR
#undef PW_BXOR
#undef PW_BNOT
#undef PW_SHL
#undef PW_SHR
#undef PW_GCD
#undef PW_ACOSH
#undef PW_ASINH
#undef PW_ATANH
#undef PW_ERFC
#undef PW_LGAMMA
#undef PW_COPYSIGN
#undef PW_FMAX
#undef PW_FMIN
#undef PW_NEXTAFTER
#undef PW_SIGNBIT
#undef PW_BIG
#undef PW_INF
#undef PW_SP
#undef PW_SP2
#define PW_ZERO ((int64_t)0)
#define PW_ONE ((int64_t)1)
#define PW_K(v) ((int64_t)(v))
#define PW_ADD(x, y) pw_wadd(x, y)
#define PW_SUB(x, y) pw_wsub(x, y)
#define PW_MUL(x, y) pw_wmul(x, y)
#define PW_DIV(x, y) PW_ZERO
#define PW_NEG(x) pw_wsub(0, x)
#define PW_ABS(x) pw_iabs(x)
#define PW_LO(x, lo) pw_ilo(x, lo)
#define PW_HI(x, hi) pw_ihi(x, hi)
#define PW_MAX(x, y) pw_imax(x, y)
#define PW_MIN(x, y) pw_imin(x, y)
#define PW_FLOOR(x) (x)
#define PW_CEIL(x) (x)
#define PW_TRUNC(x) (x)
#define PW_RINT(x) (x)
#define PW_SIGN(x) ((int64_t)(((x) > 0) - ((x) < 0)))
#define PW_ISNAN(x) 0
#define PW_ISINF(x) 0
#define PW_ISFINITE(x) 1
#define PW_EXP(x) PW_ZERO
#define PW_EXP2(x) PW_ZERO
#define PW_EXPM1(x) PW_ZERO
#define PW_LOG(x) PW_ZERO
#define PW_LOG2(x) PW_ZERO
#define PW_LOG10(x) PW_ZERO
#define PW_LOG1P(x) PW_ZERO
#define PW_SQRT(x) PW_ZERO
#define PW_SIN(x) PW_ZERO
#define PW_COS(x) PW_ZERO
#define PW_TAN(x) PW_ZERO
#define PW_ASIN(x) PW_ZERO
#define PW_ACOS(x) PW_ZERO
#define PW_ATAN(x) PW_ZERO
#define PW_SINH(x) PW_ZERO
#define PW_COSH(x) PW_ZERO
#define PW_TANH(x) PW_ZERO
#define PW_ERF(x) PW_ZERO
#define PW_SIGMOID(x) PW_ZERO
#define PW_GELU(x) PW_ZERO
#define PW_GELU_TANH(x) PW_ZERO
#define PW_ATAN2(x, y) PW_ZERO
#define PW_HYPOT(x, y) PW_ZERO
#define PW_POW(x, y) pw_powi(x, y)
#define PW_DIVTRUNC(x, y) ((y) == 0 ? pw_zerodiv(L) : pw_idiv(x, y))
#define PW_DIVFLOOR(x, y) ((y) == 0 ? pw_zerodiv(L) : pw_idivfloor(x, y))
#define PW_REM(x, y) ((y) == 0 ? pw_zerodiv(L) : pw_irem(x, y))
#define PW_FMOD(x, y) ((y) == 0 ? pw_zerodiv(L) : pw_imod(x, y))
#define PW_BAND(x, y) ((x) & (y))
#define PW_BOR(x, y) ((x) | (y))
#define PW_BXOR(x, y) ((x) ^ (y))
#define PW_BNOT(x) (L->cdt == TS_DT_BOOL ? (int64_t)!(x) : ~(x))
#define PW_SHL(x, y) pw_shl(x, y)
#define PW_SHR(x, y) pw_shr(x, y)
#define PW_GCD(x, y) pw_gcd(x, y, L->cdt)
#define PW_ACOSH(x) PW_ZERO
#define PW_ASINH(x) PW_ZERO
#define PW_ATANH(x) PW_ZERO
#define PW_ERFC(x) PW_ZERO
#define PW_LGAMMA(x) PW_ZERO
#define PW_COPYSIGN(x, y) PW_ZERO
#define PW_FMAX(x, y) pw_imax(x, y)
#define PW_FMIN(x, y) pw_imin(x, y)
#define PW_NEXTAFTER(x, y) PW_ZERO
#define PW_SIGNBIT(x) ((x) < 0)
#define PW_BIG INT64_MAX
#define PW_INF INT64_MAX
#define PW_SP(fn, x) PW_ZERO
#define PW_SP2(fn, x, y) PW_ZERO

/* y[0..n) = op(...) in int64 (integral and bool dtypes). */
static void pw_apply_i(pw_loop *L, int64_t *const *x, int64_t *y, int64_t n) {
#define PW_T int64_t
  const int64_t *xa = x[0], *xb = x[1], *xw = x[2];
  const int64_t p0 = L->par.i[0], p1 = L->par.i[1], p2 = L->par.i[2];
  (void)p0, (void)p1, (void)p2;
  switch (L->op) {
#include "ops.def"
  default: for (int64_t i = 0; i < n; i++) y[i] = 0; break;
  }
#undef PW_T
}
#undef TS_OP
#undef TS_PW
#undef TS_PWF

/* ------------------------------------------------------- the run loops */

/* One iterator run in domain T: blocks of PW_BLK, operands used in place
 * when they are already contiguous T. */
#define PW_RUN_DEF(SUF, T, NATIVE)                                                                               \
  static void pw_run_##SUF(pw_loop *L, char **data, const int64_t *st, int64_t n) {                             \
    T buf[TS_RT_ITER_MAX_OPS][PW_BLK];                                                                           \
    T *x[TS_RT_ITER_MAX_OPS - 1] = {NULL};                                                                       \
    for (int64_t off = 0; off < n; off += PW_BLK) {                                                              \
      int64_t m = n - off < PW_BLK ? n - off : PW_BLK;                                                           \
      for (int32_t k = 1; k < L->nops; k++) {                                                                    \
        char *p = data[k] + off * st[k];                                                                         \
        if (L->dt[k] == NATIVE && st[k] == (int64_t)sizeof(T) && !L->narrow[k]) {                                \
          x[k - 1] = (T *)(void *)p;                                                                             \
        } else {                                                                                                 \
          pw_load_##SUF(p, st[k], L->dt[k], buf[k], m);                                                          \
          if (L->narrow[k]) pw_narrow_##SUF(buf[k], m, L->cdt);                                                  \
          x[k - 1] = buf[k];                                                                                     \
        }                                                                                                        \
      }                                                                                                          \
      char *po = data[0] + off * st[0];                                                                          \
      bool direct = L->dt[0] == NATIVE && st[0] == (int64_t)sizeof(T);                                          \
      T *y = direct ? (T *)(void *)po : buf[0];                                                                  \
      pw_apply_##SUF(L, x, y, m);                                                                                \
      if (!direct) pw_store_##SUF(po, st[0], L->dt[0], y, m);                                                    \
    }                                                                                                            \
  }

PW_RUN_DEF(f, float, TS_DT_FLOAT32)
PW_RUN_DEF(d, double, TS_DT_FLOAT64)
PW_RUN_DEF(i, int64_t, TS_DT_INT64)

static void pw_loop_f(void *arg, char **data, const int64_t *st, int64_t n) { pw_run_f(arg, data, st, n); }
static void pw_loop_d(void *arg, char **data, const int64_t *st, int64_t n) { pw_run_d(arg, data, st, n); }
static void pw_loop_i(void *arg, char **data, const int64_t *st, int64_t n) { pw_run_i(arg, data, st, n); }

static bool pw_check_dtype(ts_rt_ctx *c, ts_pw_op op, ts_dtype dt);

/* Runs op over inputs in[0..nin) computing in cdt. *out NULL: a new tensor
 * of dtype odt (the caller owns it on success); else the given output
 * (flags for ts_rt_iter_build). The checks come in TensorIterator's order:
 * shapes, then (cast_from not TS_DT_NONE) that the result may be cast to a
 * given output, then (kdt not TS_DT_NONE) that op has a kernel for kdt. */
static bool pw_exec_checked(ts_rt_ctx *c, ts_pw_op op, const pw_par *par, ts_dtype cdt, ts_dtype odt,
                            ts_rt_tensor **out, unsigned flags, const ts_rt_tensor *const *in, int32_t nin,
                            ts_dtype cast_from, ts_dtype kdt) {
  ts_rt_tensor *given = *out;
  ts_rt_iter it;
  if (!ts_rt_iter_build(c, &it, out, odt, flags, in, nin)) return false;
  bool ok = true;
  if (given && cast_from != TS_DT_NONE && !ts_type_can_cast(cast_from, (ts_dtype)given->dtype))
    ok = ts_rt_fail(c, "result type %s can't be cast to the desired output type %s", ts_rt_dtype_name(cast_from),
                    ts_rt_dtype_name((ts_dtype)given->dtype));
  if (ok && kdt != TS_DT_NONE) ok = pw_check_dtype(c, op, kdt);
  if (!ok) {
    if (!given) ts_rt_tensor_release(*out);
    *out = given;
    return false;
  }
  pw_loop L;
  memset(&L, 0, sizeof L);
  L.op = op;
  L.nops = nin + 1;
  L.cdt = cdt;
  L.dt[0] = (ts_dtype)(*out)->dtype;
  bool ints = !ts_dtype_is_float(cdt);
  for (int32_t k = 0; k < nin; k++) {
    ts_dtype dt = (ts_dtype)in[k]->dtype;
    L.dt[1 + k] = dt;
    L.narrow[1 + k] = dt != cdt && (cdt == TS_DT_FLOAT16 || cdt == TS_DT_BFLOAT16 || (ints && cdt != TS_DT_INT64));
  }
  if (par) L.par = *par;
  atomic_init(&L.zerodiv, 0);
  ts_rt_iter_loop fn = cdt == TS_DT_FLOAT64 ? pw_loop_d : ts_dtype_is_float(cdt) ? pw_loop_f : pw_loop_i;
  ts_rt_iter_run(c, &it, TS_RT_ITER_GRAIN, fn, &L);
  if (atomic_load(&L.zerodiv)) {
    if (!given) ts_rt_tensor_release(*out);
    *out = given;
    return ts_rt_fail(c, "ZeroDivisionError");
  }
  return true;
}

static bool pw_exec(ts_rt_ctx *c, ts_pw_op op, const pw_par *par, ts_dtype cdt, ts_dtype odt, ts_rt_tensor **out,
                    unsigned flags, const ts_rt_tensor *const *in, int32_t nin) {
  return pw_exec_checked(c, op, par, cdt, odt, out, flags, in, nin, TS_DT_NONE, TS_DT_NONE);
}

/* --------------------------------------------------- typed front end */

/* An operand: a tensor, or a number as a 0-d "wrapped number" tensor. */
typedef struct pw_arg {
  const ts_rt_tensor *t;
  bool wrapped;
  ts_iv num; /* the number, for wrapped operands */
} pw_arg;

/* PW_OUTCOPY: out= overloads PyTorch generates from the functional op
 * (add.Scalar_out, rsub.Tensor_out, masked_fill.Scalar_out, ...): the
 * result is computed as by the functional op, then copied into out (resized,
 * cast to its dtype without a castability check). */
typedef enum pw_mode { PW_NEW, PW_OUT, PW_INPLACE, PW_OUTCOPY } pw_mode;
_Static_assert(PW_NEW == (int)TS_RT_PW_NEW && PW_OUT == (int)TS_RT_PW_OUT && PW_INPLACE == (int)TS_RT_PW_INPLACE &&
                   PW_OUTCOPY == (int)TS_RT_PW_OUTCOPY,
               "pw_mode is ts_rt_pw_form");

/* The temporaries one kernel call made (wrapped numbers, converted values). */
typedef struct pw_tmp {
  ts_rt_tensor *t[8];
  int n;
} pw_tmp;

static void pw_tmp_free(pw_tmp *tm) {
  for (int i = 0; i < tm->n; i++) ts_rt_tensor_release(tm->t[i]);
  tm->n = 0;
}

/* A number as a wrapped 0-d tensor (int64, float64 or bool, as its tag). */
static bool pw_wrap(ts_rt_ctx *c, pw_tmp *tm, ts_iv v, pw_arg *a) {
  ts_rt_tensor *t;
  if (v.tag == TS_IV_DOUBLE) t = ts_rt_tensor_scalar(c, TS_DT_FLOAT64, v.u.d, 0);
  else if (v.tag == TS_IV_INT) t = ts_rt_tensor_scalar(c, TS_DT_INT64, (double)v.u.i, v.u.i);
  else if (v.tag == TS_IV_BOOL) t = ts_rt_tensor_scalar(c, TS_DT_BOOL, v.u.b, v.u.b);
  else return ts_rt_fail(c, "expected a number, got %s", ts_iv_tag_name(v));
  if (!t) return false;
  tm->t[tm->n++] = t;
  a->t = t;
  a->wrapped = true;
  a->num = v;
  return true;
}

/* Argument i as an operand: a Tensor, or a Scalar wrapped. */
static bool pw_arg_get(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, pw_tmp *tm, pw_arg *a) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_TENSOR) {
    a->t = v.u.t;
    a->wrapped = false;
    a->num = ts_iv_none();
    return true;
  }
  return pw_wrap(c, tm, v, a);
}

static ts_dtype pw_args_type(const pw_arg *args, int n) {
  ts_result_state s = TS_RESULT_STATE_INIT;
  for (int k = 0; k < n; k++)
    ts_result_add(&s, (ts_dtype)args[k].t->dtype, pw_rkind(args[k].t->ndim, args[k].wrapped));
  return ts_result_type(&s);
}

/* The dtype checks of op's rule on dtype dt. */
static bool pw_check_dtype(ts_rt_ctx *c, ts_pw_op op, ts_dtype dt) {
  unsigned f = pw_rule(op);
  bool bad = ((f & TS_PWR_NOINT) && !ts_dtype_is_float(dt)) || ((f & TS_PWR_NOBOOL) && dt == TS_DT_BOOL) ||
             ((f & TS_PWR_INTONLY) && ts_dtype_is_float(dt)) || ((f & TS_PWR_NOHALF) && dt == TS_DT_FLOAT16) ||
             ((f & TS_PWR_NOBF16) && dt == TS_DT_BFLOAT16);
  if (!bad) return true;
  if (op == TS_PW_relu && dt == TS_DT_BOOL) return ts_rt_fail(c, "Boolean inputs not supported for relu");
  if ((op == TS_PW_hardtanh || op == TS_PW_relu6) && dt == TS_DT_BOOL)
    return ts_rt_fail(c, "Bool inputs not supported for hardtanh");
  return ts_rt_fail(c, "\"%s\" not implemented for '%s'", ts_pw_get(op)->kname, ts_rt_dtype_name(dt));
}

/* Runs op on args with the compute dtype cdt (TS_DT_NONE: PyTorch's result
 * type of args), into a new tensor or `out` (mode PW_OUT / PW_INPLACE: the
 * result must be castable to it). Returns a new reference. */
static ts_rt_tensor *pw_run(ts_rt_ctx *c, ts_pw_op op, const pw_par *par, const pw_arg *args, int nin, ts_dtype cdt,
                            ts_rt_tensor *out, pw_mode mode) {
  if (cdt == TS_DT_NONE) cdt = pw_args_type(args, nin);
  ts_dtype kdt = cdt;
  unsigned f = pw_rule(op);
  if ((f & TS_PWR_PROMOTE) && !ts_dtype_is_float(cdt)) cdt = TS_DT_FLOAT32;
  if (f & TS_PWR_DOUBLE) {
    cdt = TS_DT_FLOAT64;
    if ((mode == PW_INPLACE || mode == PW_OUT) && out && out->dtype != TS_DT_FLOAT64)
      return ts_rt_fail(c, "the %s given to %s%s has dtype %s but the operation's result requires dtype Double",
                        mode == PW_INPLACE ? "base" : "output", ts_pw_get(op)->name, mode == PW_INPLACE ? "_" : "",
                        ts_rt_dtype_name((ts_dtype)out->dtype)), NULL;
  }
  ts_dtype odt = (f & TS_PWR_BOOLOUT) ? TS_DT_BOOL : cdt;
  /* unary ops that do not promote want out= in the result's dtype */
  if ((f & TS_PWR_SAMEOUT) && mode == PW_OUT && out && out->dtype != odt) {
    if (op == TS_PW_nan_to_num)
      return ts_rt_fail(c, "nan_to_num: dtype of out: %s should be same as input: %s",
                        ts_rt_dtype_name((ts_dtype)out->dtype), ts_rt_dtype_name(odt)), NULL;
    return ts_rt_fail(c, "Found dtype %s but expected %s", ts_rt_dtype_name((ts_dtype)out->dtype),
                      ts_rt_dtype_name(odt)), NULL;
  }
  if (mode == PW_OUT && out && out->dtype != TS_DT_BOOL &&
      (op == TS_PW_signbit || op == TS_PW_isneginf || op == TS_PW_isposinf))
    return ts_rt_fail(c, "%s does not support non-boolean outputs.", ts_pw_get(op)->name), NULL;
  const ts_rt_tensor *in[TS_RT_ITER_MAX_OPS];
  for (int k = 0; k < nin; k++) in[k] = args[k].t;
  ts_rt_tensor *o = out;
  if (!pw_exec_checked(c, op, par, cdt, odt, &o, mode == PW_OUT ? TS_RT_ITER_RESIZE_OUT : 0, in, nin,
                       (f & TS_PWR_BOOLOUT) ? TS_DT_NONE : cdt, kdt))
    return NULL;
  if (out) ts_rt_tensor_retain(out);
  return o;
}

/* Parameters from doubles (the int64 copies truncate). */
static pw_par pw_par3(double a, double b, double c) {
  pw_par p;
  p.d[0] = a, p.d[1] = b, p.d[2] = c;
  for (int k = 0; k < 3; k++) p.i[k] = pw_d2i(p.d[k]);
  return p;
}

/* Writes a kernel's result; false passes an error through. */
static bool pw_ret(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* pw_ret, after copying t into the out= argument for PW_OUTCOPY. */
static bool pw_fin(ts_rt_ctx *c, ts_rt_call *call, pw_mode mode, ts_rt_tensor *t) {
  if (!t || mode != PW_OUTCOPY) return pw_ret(call, t);
  ts_rt_tensor *out = NULL;
  bool ok = ts_rt_arg_tensor(c, call, call->nin - 1, &out);
  if (ok) {
    const ts_rt_tensor *in[1] = {t};
    ts_rt_tensor *o = out;
    /* computed in t's dtype so that a float goes to bool as nonzero */
    ok = pw_exec(c, TS_PW_copy, NULL, (ts_dtype)t->dtype, (ts_dtype)out->dtype, &o, TS_RT_ITER_RESIZE_OUT, in, 1);
  }
  ts_rt_tensor_release(t);
  if (!ok) return false;
  ts_rt_tensor_retain(out);
  return pw_ret(call, out);
}

/* The out= tensor of an out overload (its last input) or self for in-place
 * ops, or NULL. */
static bool pw_out_arg(ts_rt_ctx *c, const ts_rt_call *call, pw_mode mode, ts_rt_tensor **out) {
  *out = NULL;
  if (mode == PW_OUT) {
    if (call->nin == 0) return ts_rt_fail(c, "out= kernel called without arguments");
    return ts_rt_arg_tensor(c, call, call->nin - 1, out);
  }
  if (mode == PW_INPLACE) return ts_rt_arg_tensor(c, call, 0, out);
  return true;
}

/* ------------------------------------------------------- unary kernels */

static const char pw_neg_bool_msg[] = "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                                      "trying to invert a mask, use the `~` or `logical_not()` operator instead.";

/* A unary op with its Scalar parameters after self. */
static ts_rt_tensor *pw_unary(ts_rt_ctx *c, ts_pw_op op, const pw_par *par, const ts_rt_tensor *a,
                              ts_rt_tensor *out, pw_mode mode) {
  ts_dtype dt = (ts_dtype)a->dtype;
  ts_dtype cdt = TS_DT_NONE;
  unsigned f = pw_rule(op);
  if (op == TS_PW_neg && dt == TS_DT_BOOL) return ts_rt_fail(c, "%s", pw_neg_bool_msg), NULL;
  if (op == TS_PW_round_decimals && !ts_dtype_is_float(dt)) /* decimals=0 goes to round's kernel */
    return ts_rt_fail(c, "\"%s\" not implemented for '%s'", par->i[2] ? "round_cpu" : "round_vml_cpu",
                      ts_rt_dtype_name(dt)), NULL;
  if (op == TS_PW_mvlgamma) {
    if (dt == TS_DT_BOOL) return ts_rt_fail(c, "The input tensor may not be a boolean tensor."), NULL;
    if (par->i[0] < 1) return ts_rt_fail(c, "p has to be greater than or equal to 1"), NULL;
    /* PyTorch makes p arguments per element; a sum of this many terms
     * per element is a hostile p */
    if (par->i[0] > TS_PW_MVLGAMMA_MAX_P) return ts_rt_fail(c, "mvlgamma: p = %lld is too large", (long long)par->i[0]), NULL;
  }
  if ((f & TS_PWR_BOOL_INT64) && dt == TS_DT_BOOL) cdt = TS_DT_INT64;
  if (f & TS_PWR_SELF) {
    /* computed in self's dtype, the limits cast to it */
    if (!pw_check_dtype(c, op, dt)) return NULL;
    if (op == TS_PW_hardtanh && dt == TS_DT_UINT8 && (par->i[0] < 0 || par->i[1] < 0))
      return ts_rt_fail(c, "cannot do hardtanh on an unsigned type with negative limits"), NULL;
    cdt = dt;
  }
  pw_arg arg = {a, false, {.u.i = 0, .tag = TS_IV_NONE}};
  return pw_run(c, op, par, &arg, 1, cdt, out, mode);
}

/* The arguments of an overload before its out= (the whole call otherwise). */
static uint32_t pw_nargs(const ts_rt_call *call, pw_mode mode) {
  return call->nin - (mode == PW_OUT || mode == PW_OUTCOPY ? 1 : 0);
}

/* Layouts UNARY (Scalar parameters after self), GELU (approximate) and
 * ROUND (decimals, when the overload has them). */
static bool pw_k_unary(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, pw_mode mode) {
  ts_rt_tensor *a = NULL, *out = NULL;
  if (call->nin == 0) return ts_rt_fail(c, "pointwise kernel called without arguments");
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !pw_out_arg(c, call, mode, &out)) return false;
  double p[3] = {0, 0, 0};
  uint32_t np = pw_nargs(call, mode) - 1;
  ts_pw_layout layout = (ts_pw_layout)ts_pw_get(op)->layout;
  pw_par par;
  if (layout == TS_PWL_GELU) {
    const ts_rt_str *s = NULL;
    if (np > 0) {
      if (!ts_rt_arg_str(c, call, 1, &s)) return false;
      if (strcmp(s->data, "tanh") == 0) op = TS_PW_gelu_tanh;
      else if (strcmp(s->data, "none") != 0) return ts_rt_fail(c, "approximate argument must be either none or tanh.");
    }
    par = pw_par3(0, 0, 0);
  } else if (layout == TS_PWL_ROUND && np > 0) {
    int64_t dec = 0;
    if (!ts_rt_arg_int(c, call, 1, &dec)) return false;
    op = TS_PW_round_decimals;
    /* p0 = 10^|decimals| (cast to the compute type), p1 its sign */
    par = pw_par3(pow(10.0, (double)(dec < 0 ? -dec : dec)), dec < 0 ? -1 : 1, 0);
    par.i[2] = dec;
  } else {
    if (np > 3) np = 3;
    for (uint32_t k = 0; k < np; k++) {
      if (call->in[1 + k].tag == TS_IV_NONE) p[k] = NAN; /* an optional parameter not given (logit's eps) */
      else if (!ts_rt_arg_double(c, call, 1 + k, &p[k])) return false;
    }
    par = pw_par3(p[0], p[1], p[2]);
  }
  return pw_fin(c, call, mode, pw_unary(c, op, &par, a, out, mode));
}

/* ------------------------------------------------------ binary kernels */

/* add/sub/rsub's alpha checks (ATen's alpha_check). */
static bool pw_alpha_check(ts_rt_ctx *c, ts_dtype dt, ts_iv alpha) {
  if (alpha.tag == TS_IV_BOOL && dt != TS_DT_BOOL)
    return ts_rt_fail(c, "Boolean alpha only supported for Boolean results.");
  if (!ts_dtype_is_float(dt) && alpha.tag == TS_IV_DOUBLE)
    return ts_rt_fail(c, "For integral input tensors, argument alpha must not be a floating point number.");
  return true;
}

/* The binary ops with PyTorch's checks; `alpha` is None unless layout
 * ALPHA (add, sub, rsub). */
static ts_rt_tensor *pw_binary(ts_rt_ctx *c, ts_pw_op op, pw_arg a, pw_arg b, ts_iv alpha, ts_rt_tensor *out,
                               pw_mode mode) {
  pw_arg args[2] = {a, b};
  ts_dtype cdt = pw_args_type(args, 2);
  pw_par par = pw_par3(1, 0, 0);
  if (ts_pw_get(op)->layout == TS_PWL_ALPHA) {
    if (op == TS_PW_sub || op == TS_PW_rsub) {
      bool ba = a.t->dtype == TS_DT_BOOL, bb = b.t->dtype == TS_DT_BOOL;
      if (ba && bb)
        return ts_rt_fail(c, "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                             "`logical_xor()` operator instead."), NULL;
      if (ba || bb)
        return ts_rt_fail(c, "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                             "to invert a mask, use the `~` or `logical_not()` operator instead."), NULL;
    }
    if (alpha.tag != TS_IV_NONE) {
      if (!pw_alpha_check(c, cdt, alpha)) return NULL;
      double al = alpha.tag == TS_IV_DOUBLE ? alpha.u.d : alpha.tag == TS_IV_INT ? (double)alpha.u.i : alpha.u.b;
      par = pw_par3(al, 0, 0);
      if (alpha.tag == TS_IV_INT) par.i[0] = alpha.u.i;
    }
  }
  if (op == TS_PW_heaviside && a.t->dtype != b.t->dtype)
    return ts_rt_fail(c, "heaviside is not yet implemented for tensors with different dtypes."), NULL;
  if (op == TS_PW_pow && b.wrapped && b.num.tag == TS_IV_INT && b.num.u.i < 0 && !ts_dtype_is_float(cdt))
    return ts_rt_fail(c, "Integers to negative integer powers are not allowed."), NULL;
  return pw_run(c, op, &par, args, 2, cdt, out, mode);
}

/* Layouts BINARY, ALPHA (alpha after other) and DIV (rounding_mode after
 * other, when the overload has one). */
static bool pw_k_binary(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg a, b;
  ts_rt_tensor *out = NULL;
  ts_iv alpha = ts_iv_none();
  ts_pw_layout layout = (ts_pw_layout)ts_pw_get(op)->layout;
  bool extra = pw_nargs(call, mode) > 2; /* alpha or rounding_mode */
  bool ok = pw_arg_get(c, call, 0, &tm, &a) && pw_arg_get(c, call, 1, &tm, &b) && pw_out_arg(c, call, mode, &out);
  if (ok && layout == TS_PWL_ALPHA && extra && ts_rt_arg_check(c, call, 2)) alpha = call->in[2];
  if (ok && layout == TS_PWL_DIV && extra) {
    ok = ts_rt_arg_check(c, call, 2);
    if (ok) {
      ts_iv m = call->in[2];
      if (m.tag == TS_IV_NONE) op = TS_PW_div;
      else if (m.tag != TS_IV_STR) ok = ts_rt_arg_bad(c, call, 2, "str");
      else if (strcmp(m.u.s->data, "trunc") == 0) op = TS_PW_div_trunc;
      else if (strcmp(m.u.s->data, "floor") == 0) op = TS_PW_floor_divide;
      else
        ok = ts_rt_fail(c, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                        m.u.s->data);
    }
  }
  /* polygamma(n, self); its in-place kind takes (self, n) */
  if (ok && layout == TS_PWL_INT_SELF && mode == PW_INPLACE) {
    pw_arg t = a;
    a = b;
    b = t;
  }
  if (ok && layout == TS_PWL_INT_SELF && a.wrapped && a.num.tag == TS_IV_INT && a.num.u.i < 0)
    ok = ts_rt_fail(c, "polygamma(n, x) does not support negative n.");
  ts_rt_tensor *r = ok ? pw_binary(c, op, a, b, alpha, out, mode) : NULL;
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* ------------------------------------------------------- clamp kernels */

/* Layout CLAMP: clamp(self, min?, max?) with Scalar or Tensor bounds (either
 * may be None), clamp_min(self, min), clamp_max(self, max). */
static bool pw_k_clamp(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op kop, pw_mode mode) {
  int which = kop == TS_PW_clamp_min ? 1 : kop == TS_PW_clamp_max ? 2 : 0;
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  bool ok = pw_arg_get(c, call, 0, &tm, &args[0]) && pw_out_arg(c, call, mode, &out);
  bool has_min = false, has_max = false;
  if (ok) {
    if (which == 0) {
      ok = ts_rt_arg_check(c, call, 2);
      has_min = ok && call->in[1].tag != TS_IV_NONE;
      has_max = ok && call->in[2].tag != TS_IV_NONE;
      if (ok && !has_min && !has_max)
        ok = ts_rt_fail(c, "torch.clamp: At least one of 'min' or 'max' must not be None");
    } else {
      has_min = which == 1;
      has_max = which == 2;
    }
  }
  int n = 1;
  if (ok && has_min) ok = pw_arg_get(c, call, 1, &tm, &args[n++]);
  if (ok && has_max) ok = pw_arg_get(c, call, which == 0 ? 2 : 1, &tm, &args[n++]);
  ts_rt_tensor *r = NULL;
  if (ok) {
    ts_pw_op op = has_min && has_max ? TS_PW_clamp : has_min ? TS_PW_clamp_min : TS_PW_clamp_max;
    ts_dtype cdt = pw_args_type(args, n);
    /* Scalar bounds on a bool tensor: clamp_scalar_cpu has no bool kernel */
    if (cdt == TS_DT_BOOL && args[1].wrapped)
      ok = ts_rt_fail(c, "\"%s\" not implemented for 'Bool'", which == 0 ? "clamp_scalar_cpu"
                                                              : which == 1 ? "clamp_min_scalar_cpu"
                                                                           : "clamp_max_scalar_cpu");
    /* clamp_ with Scalar bounds allows no promotion of an integral self (ATen's clamp meta) */
    ts_dtype sdt = (ts_dtype)args[0].t->dtype;
    if (ok && mode == PW_INPLACE && args[1].wrapped && !ts_dtype_is_float(sdt) && cdt != sdt)
      ok = ts_rt_fail(c, "result type %s can't be cast to the desired output type %s", ts_rt_dtype_name(cdt),
                      pw_dt_cname(sdt));
    if (ok && op == TS_PW_clamp && cdt == TS_DT_BOOL) ok = ts_rt_fail(c, "\"clamp_cpu\" not implemented for 'Bool'");
    if (ok) r = pw_run(c, op, NULL, args, n, cdt, out, mode);
  }
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* ------------------------------------------------ where, masked_fill */

static bool pw_cond_check(ts_rt_ctx *c, const ts_rt_tensor *cond) {
  if (cond->dtype == TS_DT_BOOL || cond->dtype == TS_DT_UINT8) return true;
  return ts_rt_fail(c, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                    ts_rt_dtype_name((ts_dtype)cond->dtype));
}

/* Layout WHERE: where(cond, self, other), self/other Tensor or Scalar. */
static bool pw_k_where(ts_rt_ctx *c, ts_rt_call *call, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  ts_rt_tensor *r = NULL;
  if (pw_arg_get(c, call, 0, &tm, &args[0]) && pw_arg_get(c, call, 1, &tm, &args[1]) &&
      pw_arg_get(c, call, 2, &tm, &args[2]) && pw_out_arg(c, call, mode, &out) && pw_cond_check(c, args[0].t))
    r = pw_run(c, TS_PW_where, NULL, args, 3, pw_args_type(args + 1, 2), out, mode);
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* Whether every element of an integer mask is 0 or 1. */
typedef struct pw_mask_check {
  ts_dtype dt;
  bool ok;
} pw_mask_check;

static void pw_mask_01_visit(void *arg, void *elem, int64_t index) {
  (void)index;
  pw_mask_check *m = arg;
  int64_t v = ts_rt_load_i64(elem, m->dt);
  if (v != 0 && v != 1) m->ok = false;
}

static bool pw_mask_is_01(const ts_rt_tensor *mask) {
  pw_mask_check m = {(ts_dtype)mask->dtype, true};
  ts_rt_tensor_foreach(mask, pw_mask_01_visit, &m);
  return m.ok;
}

/* masked_fill: value (a number or a 0-d tensor) cast to self's dtype where
 * mask; out of place, self and mask broadcast together. */
static ts_rt_tensor *pw_masked_fill(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *mask,
                                    const ts_rt_tensor *value, ts_rt_tensor *out, pw_mode mode) {
  /* 1.13 takes an integer mask holding only 0 and 1 (the deprecated uint8
   * path generalised), checked value by value; floating masks are refused. */
  if (mask->dtype != TS_DT_BOOL && !ts_rt_dtype_is_integral((ts_dtype)mask->dtype, false))
    return ts_rt_fail(c, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                      ts_rt_dtype_name((ts_dtype)mask->dtype)), NULL;
  if (mask->dtype != TS_DT_BOOL && !pw_mask_is_01(mask))
    return ts_rt_fail(c, "Mask tensor can take 0 and 1 values only"), NULL;
  if (value->ndim != 0)
    return ts_rt_fail(c, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                         "dimension(s).", (int)value->ndim), NULL;
  pw_arg args[3] = {{mask, false, {.u.i = 0, .tag = TS_IV_NONE}},
                    {value, false, {.u.i = 0, .tag = TS_IV_NONE}},
                    {self, false, {.u.i = 0, .tag = TS_IV_NONE}}};
  ts_dtype dt = (ts_dtype)self->dtype;
  /* the value is cast to self's dtype first (2.5 into an int tensor is 2) */
  ts_rt_tensor *v = NULL;
  if (value->dtype != dt) {
    v = ts_rt_tensor_to_dtype(c, value, dt);
    if (!v) return NULL;
    args[1].t = v;
  }
  ts_rt_tensor *r = pw_run(c, TS_PW_masked_fill, NULL, args, 3, dt, out, mode);
  if (v) ts_rt_tensor_release(v);
  return r;
}

static bool pw_k_masked_fill(ts_rt_ctx *c, ts_rt_call *call, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  ts_rt_tensor *self = NULL, *mask = NULL, *out = NULL;
  pw_arg v;
  ts_rt_tensor *r = NULL;
  if (ts_rt_arg_tensor(c, call, 0, &self) && ts_rt_arg_tensor(c, call, 1, &mask) &&
      pw_arg_get(c, call, 2, &tm, &v) && pw_out_arg(c, call, mode, &out))
    r = pw_masked_fill(c, self, mask, v.t, out, mode);
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* ---------------------------------------------- lerp, addcmul, addcdiv */

static bool pw_k_lerp(ts_rt_ctx *c, ts_rt_call *call, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  ts_rt_tensor *r = NULL;
  bool ok = pw_arg_get(c, call, 0, &tm, &args[0]) && pw_arg_get(c, call, 1, &tm, &args[1]) &&
            pw_arg_get(c, call, 2, &tm, &args[2]) && pw_out_arg(c, call, mode, &out);
  if (ok) {
    ts_dtype dt = (ts_dtype)args[0].t->dtype;
    if (args[1].t->dtype != dt)
      ok = ts_rt_fail(c, "expected dtype %s for `end` but got dtype %s", pw_dt_cname(dt),
                      pw_dt_cname((ts_dtype)args[1].t->dtype));
    else if (!args[2].wrapped && args[2].t->dtype != dt)
      ok = ts_rt_fail(c, "expected dtype %s for `weight` but got dtype %s", pw_dt_cname(dt),
                      pw_dt_cname((ts_dtype)args[2].t->dtype));
    else if (!ts_dtype_is_float(dt))
      ok = ts_rt_fail(c, "\"%s\" not implemented for '%s'", args[2].wrapped ? "lerp_kernel_scalar"
                                                                            : "lerp_kernel_tensor", ts_rt_dtype_name(dt));
    if (ok) r = pw_run(c, TS_PW_lerp, NULL, args, 3, dt, out, mode);
  }
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* Layout ADDC: addcmul, addcdiv (self, tensor1, tensor2, value). */
static bool pw_k_addc(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  ts_rt_tensor *r = NULL;
  double value = 1;
  bool ok = pw_arg_get(c, call, 0, &tm, &args[0]) && pw_arg_get(c, call, 1, &tm, &args[1]) &&
            pw_arg_get(c, call, 2, &tm, &args[2]) && ts_rt_arg_double(c, call, 3, &value) &&
            pw_out_arg(c, call, mode, &out);
  if (ok && op == TS_PW_addcdiv && !ts_dtype_is_float((ts_dtype)args[1].t->dtype) && !ts_dtype_is_float((ts_dtype)args[2].t->dtype))
    ok = ts_rt_fail(c, "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                       "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                       "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                       "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                       "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                       "dtypes.");
  if (ok) {
    pw_par par = pw_par3(value, 0, 0);
    r = pw_run(c, op, &par, args, 3, TS_DT_NONE, out, mode);
  }
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* --------------------------------------------------------- fill, zero */

bool ts_rt_fill_(ts_rt_ctx *c, ts_rt_tensor *a, double value) {
  ts_rt_tensor *v = ts_rt_tensor_scalar(c, TS_DT_FLOAT64, value, 0);
  if (!v) return false;
  const ts_rt_tensor *in[1] = {v};
  ts_rt_tensor *o = a;
  bool ok = pw_exec(c, TS_PW_copy, NULL, TS_DT_FLOAT64, (ts_dtype)a->dtype, &o, 0, in, 1);
  ts_rt_tensor_release(v);
  return ok;
}

/* fill_ with a 0-d tensor or number, converted to self's dtype. */
static bool pw_k_fill(ts_rt_ctx *c, ts_rt_call *call) {
  if (ts_rt_cx_any(call)) return ts_rt_cx_fill(c, call, false);
  ts_rt_tensor *self = NULL;
  pw_tmp tm = {{NULL}, 0};
  pw_arg v;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !pw_arg_get(c, call, 1, &tm, &v)) return pw_tmp_free(&tm), false;
  bool ok = true;
  if (v.t->ndim != 0)
    ok = ts_rt_fail(c, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                    (int)v.t->ndim);
  if (ok) {
    const ts_rt_tensor *in[1] = {v.t};
    ts_rt_tensor *o = self;
    ok = pw_exec(c, TS_PW_copy, NULL, (ts_dtype)v.t->dtype, (ts_dtype)self->dtype, &o, 0, in, 1);
  }
  pw_tmp_free(&tm);
  if (!ok) return false;
  ts_rt_tensor_retain(self);
  return pw_ret(call, self);
}

static bool pw_k_zero(ts_rt_ctx *c, ts_rt_call *call) {
  if (ts_rt_cx_any(call)) return ts_rt_cx_fill(c, call, true);
  ts_rt_tensor *self = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_fill_(c, self, 0)) return false;
  ts_rt_tensor_retain(self);
  return pw_ret(call, self);
}

/* ------------------------------------------------- tensor_ops.h API */

static pw_arg pw_targ(const ts_rt_tensor *t) {
  pw_arg a = {t, false, {.u.i = 0, .tag = TS_IV_NONE}};
  return a;
}

/* Whether op runs as ts_rt_unary_op (nin 1) or ts_rt_binary_op (nin 2). */
static bool pw_api_op(ts_rt_ctx *c, ts_pw_op op, int nin) {
  const ts_pw_def *d = ts_pw_get(op);
  bool ok = d && d->nin == nin &&
            (nin == 1 ? d->layout == TS_PWL_UNARY || d->layout == TS_PWL_GELU || d->layout == TS_PWL_ROUND
                      : d->layout == TS_PWL_BINARY || d->layout == TS_PWL_ALPHA || d->layout == TS_PWL_DIV);
  return ok || ts_rt_fail(c, "%s is not a %s pointwise op", d ? d->name : "?", nin == 1 ? "unary" : "binary");
}

ts_rt_tensor *ts_rt_unary_op(ts_rt_ctx *c, ts_pw_op op, const ts_rt_tensor *a) {
  if (!pw_api_op(c, op, 1)) return NULL;
  pw_par par = pw_par3(0, 0, 0);
  return pw_unary(c, op, &par, a, NULL, PW_NEW);
}

bool ts_rt_unary_op_(ts_rt_ctx *c, ts_pw_op op, ts_rt_tensor *a) {
  if (!pw_api_op(c, op, 1)) return false;
  pw_par par = pw_par3(0, 0, 0);
  ts_rt_tensor *r = pw_unary(c, op, &par, a, a, PW_INPLACE);
  if (!r) return false;
  ts_rt_tensor_release(r);
  return true;
}

ts_rt_tensor *ts_rt_binary_op(ts_rt_ctx *c, ts_pw_op op, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (!pw_api_op(c, op, 2)) return NULL;
  return pw_binary(c, op, pw_targ(a), pw_targ(b), ts_iv_none(), NULL, PW_NEW);
}

bool ts_rt_binary_op_(ts_rt_ctx *c, ts_pw_op op, ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (!pw_api_op(c, op, 2)) return false;
  ts_rt_tensor *r = pw_binary(c, op, pw_targ(a), pw_targ(b), ts_iv_none(), a, PW_INPLACE);
  if (!r) return false;
  ts_rt_tensor_release(r);
  return true;
}

ts_rt_tensor *ts_rt_add(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, double alpha) {
  ts_iv al = alpha == (double)(int64_t)alpha ? ts_iv_int((int64_t)alpha) : ts_iv_double(alpha);
  if (ts_dtype_is_float((ts_dtype)a->dtype) || ts_dtype_is_float((ts_dtype)b->dtype)) al = ts_iv_double(alpha);
  return pw_binary(c, TS_PW_add, pw_targ(a), pw_targ(b), al, NULL, PW_NEW);
}

/* a OP s with s a Python number: integral values stay int so an integer
 * tensor keeps its dtype. */
static ts_rt_tensor *pw_scalar_op(ts_rt_ctx *c, ts_pw_op op, const ts_rt_tensor *a, double s) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg b;
  bool integral = s == floor(s) && fabs(s) < 9.0e18;
  ts_iv v = integral && !ts_dtype_is_float((ts_dtype)a->dtype) ? ts_iv_int((int64_t)s) : ts_iv_double(s);
  ts_rt_tensor *r = NULL;
  if (pw_wrap(c, &tm, v, &b)) r = pw_binary(c, op, pw_targ(a), b, ts_iv_int(1), NULL, PW_NEW);
  pw_tmp_free(&tm);
  return r;
}

ts_rt_tensor *ts_rt_mul_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s) { return pw_scalar_op(c, TS_PW_mul, a, s); }
ts_rt_tensor *ts_rt_add_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s) { return pw_scalar_op(c, TS_PW_add, a, s); }

ts_rt_tensor *ts_rt_where(ts_rt_ctx *c, const ts_rt_tensor *cond, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (!pw_cond_check(c, cond)) return NULL;
  pw_arg args[3] = {pw_targ(cond), pw_targ(a), pw_targ(b)};
  return pw_run(c, TS_PW_where, NULL, args, 3, pw_args_type(args + 1, 2), NULL, PW_NEW);
}

ts_rt_tensor *ts_rt_masked_fill(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *mask, double value) {
  ts_rt_tensor *v = ts_rt_tensor_scalar(c, TS_DT_FLOAT64, value, 0);
  if (!v) return NULL;
  ts_rt_tensor *r = pw_masked_fill(c, a, mask, v, NULL, PW_NEW);
  ts_rt_tensor_release(v);
  return r;
}

bool ts_rt_pointwise_buffer(ts_rt_ctx *c, ts_pw_op op, ts_dtype dt, void *x, int64_t n) {
  const ts_pw_def *d = ts_pw_get(op);
  if (!d || d->nin != 1 || (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64))
    return ts_rt_fail(c, "ts_rt_pointwise_buffer: not a one-operand op on float32 or float64");
  pw_loop L;
  memset(&L, 0, sizeof L);
  L.op = op;
  L.nops = 2;
  L.cdt = dt;
  L.par = pw_par3(0, 0, 0);
  if (dt == TS_DT_FLOAT64) {
    double *ops[3] = {x, NULL, NULL};
    pw_apply_d(&L, ops, x, n);
  } else {
    float *ops[3] = {x, NULL, NULL};
    pw_apply_f(&L, ops, x, n);
  }
  return true;
}

/* ------------------------------------------------------- kernel table */

/* A row's kernel in one mode: the layout reads the overload's arguments. */
static bool pw_k(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, pw_mode mode) {
  /* complex operands: the row's complex formula (kernels/complex.c) */
  if (ts_rt_cx_any(call)) return ts_rt_cx_pointwise(c, call, op, (ts_rt_pw_form)mode);
  switch ((ts_pw_layout)ts_pw_get(op)->layout) {
  case TS_PWL_UNARY: case TS_PWL_GELU: case TS_PWL_ROUND: return pw_k_unary(c, call, op, mode);
  case TS_PWL_BINARY: case TS_PWL_ALPHA: case TS_PWL_DIV: case TS_PWL_INT_SELF: return pw_k_binary(c, call, op, mode);
  case TS_PWL_CLAMP: return pw_k_clamp(c, call, op, mode);
  case TS_PWL_WHERE: return pw_k_where(c, call, mode);
  case TS_PWL_MASKED_FILL: return pw_k_masked_fill(c, call, mode);
  case TS_PWL_LERP: return pw_k_lerp(c, call, mode);
  case TS_PWL_ADDC: return pw_k_addc(c, call, op, mode);
  case TS_PWL_TYPE_AS: break;
  }
  return ts_rt_fail(c, "aten::%s: no pointwise kernel", ts_pw_get(op)->name);
}

/* Four wrappers per row, one per pw_mode. */
#define TS_OP(...)
#define TS_PWF(...)
#define TS_PW(ns, name, ...)                                                                                     \
  static bool pw_kk_##name##_new(ts_rt_ctx *c, ts_rt_call *call) { return pw_k(c, call, TS_PW_##name, PW_NEW); } \
  static bool pw_kk_##name##_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k(c, call, TS_PW_##name, PW_OUT); } \
  static bool pw_kk_##name##_inplace(ts_rt_ctx *c, ts_rt_call *call) {                                           \
    return pw_k(c, call, TS_PW_##name, PW_INPLACE);                                                              \
  }                                                                                                              \
  static bool pw_kk_##name##_outcopy(ts_rt_ctx *c, ts_rt_call *call) {                                           \
    return pw_k(c, call, TS_PW_##name, PW_OUTCOPY);                                                              \
  }
#include "ops.def"
#undef TS_PW

static const ts_rt_kernel_fn pw_kfns[TS_PW_COUNT][4] = {
#define TS_PW(ns, name, ...)                                                                                     \
  [TS_PW_##name] = {pw_kk_##name##_new, pw_kk_##name##_out, pw_kk_##name##_inplace, pw_kk_##name##_outcopy},
#include "ops.def"
#undef TS_PW
#undef TS_PWF
#undef TS_OP
};

/* Kernels of ops that are not pointwise rows. */
static const ts_rt_kernel_def pw_other_kernels[] = {
    {"aten::fill_.Scalar", pw_k_fill},
    {"aten::fill_.Tensor", pw_k_fill},
    {"aten::zero_", pw_k_zero},
};

/* The mode of schema s of row d's kind (or of its in-place kind), -1 for
 * overloads whose kernels live elsewhere (numbers: kernels/scalar.c). */
static int pw_schema_mode(const ts_pw_def *d, const ts_schema *s, bool inplace) {
  if (s->vararg || s->varret || s->nrets != 1 || s->rets[0].type->kind != TS_TY_TENSOR || s->nargs == 0)
    return -1;
  if (inplace) return ts_op_is_inplace(s) && s->args[0].type->kind == TS_TY_TENSOR ? PW_INPLACE : -1;
  bool tensor = false;
  for (uint32_t i = 0; i < s->nargs; i++) tensor |= s->args[i].type->kind == TS_TY_TENSOR;
  if (!tensor) return -1;
  if (ts_op_is_out(s)) return ts_pw_out_is_autogen(d, s) ? PW_OUTCOPY : PW_OUT;
  return PW_NEW;
}

/* Visits every kernel of the table: its schema and function. */
static void pw_table_each(void (*fn)(void *arg, const ts_schema *s, ts_rt_kernel_fn k), void *arg) {
  for (int op = 0; op < TS_PW_COUNT; op++) {
    const ts_pw_def *d = ts_pw_get((ts_pw_op)op);
    if (d->kind == TS_K_OTHER || d->layout == TS_PWL_TYPE_AS) continue; /* type_as is aten::to's (shape.c) */
    for (int ip = 0; ip < 2; ip++) {
      ts_kind k = ip ? ts_op_inplace_kind(d->kind) : d->kind;
      uint32_t n = 0;
      const ts_schema *const *ss = k == TS_K_OTHER ? NULL : ts_op_schemas(k, &n);
      for (uint32_t i = 0; i < n; i++) {
        int mode = pw_schema_mode(d, ss[i], ip);
        if (mode >= 0) fn(arg, ss[i], pw_kfns[op][mode]);
      }
    }
  }
}

typedef struct pw_table_fill {
  ts_rt_kernel_def *defs;
  char *names;
  uint32_t n;
  size_t bytes;
} pw_table_fill;

static void pw_table_count(void *arg, const ts_schema *s, ts_rt_kernel_fn k) {
  (void)k;
  pw_table_fill *f = arg;
  f->n++;
  f->bytes += strlen(s->name) + 1 + strlen(s->overload) + 1;
}

static void pw_table_put(void *arg, const ts_schema *s, ts_rt_kernel_fn k) {
  pw_table_fill *f = arg;
  char *name = f->names;
  size_t len = strlen(s->name);
  memcpy(name, s->name, len);
  if (s->overload[0]) {
    name[len++] = '.';
    memcpy(name + len, s->overload, strlen(s->overload));
    len += strlen(s->overload);
  }
  name[len] = '\0';
  f->names += len + 1;
  f->defs[f->n].schema = name;
  f->defs[f->n].fn = k;
  f->n++;
}

static pthread_once_t pw_table_once = PTHREAD_ONCE_INIT;
static ts_rt_kernel_def *pw_table; /* made once, never freed */

/* The table: every row's overloads with a tensor (functional, out=, in the
 * row's in-place kind), then the other ops. */
static void pw_table_build(void) {
  pw_table_fill f = {NULL, NULL, 0, 0};
  pw_table_each(pw_table_count, &f);
  size_t nother = sizeof pw_other_kernels / sizeof pw_other_kernels[0];
  size_t ndefs = f.n + nother + 1;
  char *mem = malloc(ndefs * sizeof(ts_rt_kernel_def) + f.bytes);
  if (!mem) return;
  f.defs = (ts_rt_kernel_def *)(void *)mem;
  f.names = mem + ndefs * sizeof(ts_rt_kernel_def);
  f.n = 0;
  pw_table_each(pw_table_put, &f);
  for (size_t i = 0; i < nother; i++) f.defs[f.n++] = pw_other_kernels[i];
  f.defs[f.n].schema = NULL;
  f.defs[f.n].fn = NULL;
  pw_table = f.defs;
}

const ts_rt_kernel_def *ts_rt_kernels_pointwise(void) {
  pthread_once(&pw_table_once, pw_table_build);
  return pw_table;
}
