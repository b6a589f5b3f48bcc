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
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "args.h"
#include "iter.h"
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

typedef enum pw_op {
  /* unary */
  PW_ABS, PW_NEG, PW_EXP, PW_LOG, PW_LOG2, PW_LOG10, PW_LOG1P, PW_EXPM1, PW_SQRT, PW_RSQRT, PW_SIN, PW_COS,
  PW_TAN, PW_ASIN, PW_ACOS, PW_ATAN, PW_SINH, PW_COSH, PW_TANH, PW_SIGMOID, PW_RELU, PW_GELU, PW_GELU_TANH,
  PW_SILU, PW_MISH, PW_HARDSWISH, PW_HARDSIGMOID, PW_HARDTANH, PW_ELU, PW_LEAKY_RELU, PW_SOFTPLUS, PW_ERF,
  PW_FLOOR, PW_CEIL, PW_ROUND, PW_ROUND_DEC, PW_TRUNC, PW_FRAC, PW_SIGN, PW_RECIPROCAL, PW_SQUARE,
  PW_LOGICAL_NOT, PW_BITWISE_NOT, PW_ISNAN, PW_ISINF, PW_ISFINITE, PW_THRESHOLD, PW_COPY,
  /* binary */
  PW_ADD, PW_SUB, PW_MUL, PW_DIV, PW_DIV_TRUNC, PW_DIV_FLOOR, PW_REMAINDER, PW_FMOD, PW_POW, PW_MAXIMUM,
  PW_MINIMUM, PW_ATAN2, PW_BAND, PW_BOR, PW_BXOR, PW_GCD, PW_LAND, PW_LOR, PW_LXOR, PW_EQ, PW_NE, PW_LT, PW_LE, PW_GT,
  PW_GE, PW_CLAMP_MIN, PW_CLAMP_MAX,
  /* ternary */
  PW_CLAMP, PW_WHERE, PW_LERP, PW_ADDCMUL, PW_ADDCDIV,
  PW_NOPS,
  /* kernel-level aliases, resolved before running */
  PW_SELU, PW_RELU6, PW_RSUB, PW_DIV_MODE,
} pw_op;

enum {
  PF_PROMOTE = 1,  /* integral/bool inputs compute in float32 */
  PF_NOINT = 2,    /* "\"name\" not implemented for 'Long'" on integral or bool */
  PF_NOBOOL = 4,   /* the same on bool */
  PF_INTONLY = 8,  /* the same on floating dtypes */
  PF_BOOLOUT = 16, /* the result is bool */
  /* PyTorch 1.13's CPU kernel has no float16 (bfloat16) instance: "\"name\"
   * not implemented for 'Half'" (the op cases record which ops refuse). */
  PF_NOHALF = 32,
  PF_NOBF16 = 64,
};

typedef struct pw_desc {
  const char *kname; /* the ATen kernel's name in "not implemented" messages */
  uint8_t nin;
  uint8_t flags;
} pw_desc;

static const pw_desc pw_descs[PW_NOPS] = {
    [PW_ABS] = {"abs_cpu", 1, PF_NOBOOL},
    [PW_NEG] = {"neg_cpu", 1, 0},
    [PW_EXP] = {"exp_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_LOG] = {"log_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_LOG2] = {"log2_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_LOG10] = {"log10_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_LOG1P] = {"log1p_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_EXPM1] = {"expm1_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_SQRT] = {"sqrt_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_RSQRT] = {"rsqrt_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_SIN] = {"sin_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_COS] = {"cos_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_TAN] = {"tan_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_ASIN] = {"asin_vml_cpu", 1, PF_PROMOTE},
    [PW_ACOS] = {"acos_vml_cpu", 1, PF_PROMOTE},
    [PW_ATAN] = {"atan_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_SINH] = {"sinh_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_COSH] = {"cosh_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_TANH] = {"tanh_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_SIGMOID] = {"sigmoid_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_RELU] = {"clamp_min_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_GELU] = {"GeluKernelImpl", 1, PF_NOINT | PF_NOHALF},
    [PW_GELU_TANH] = {"GeluKernelImpl", 1, PF_NOINT | PF_NOHALF},
    [PW_SILU] = {"silu_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_MISH] = {"mish_cpu", 1, PF_NOINT | PF_NOHALF | PF_NOBF16},
    [PW_HARDSWISH] = {"hardswish_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_HARDSIGMOID] = {"hardsigmoid_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_HARDTANH] = {"clamp_scalar_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_ELU] = {"elu_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_LEAKY_RELU] = {"leaky_relu_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_SOFTPLUS] = {"softplus_cpu", 1, PF_NOINT | PF_NOHALF},
    [PW_ERF] = {"erf_vml_cpu", 1, PF_PROMOTE | PF_NOHALF},
    [PW_FLOOR] = {"floor_vml_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_CEIL] = {"ceil_vml_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_ROUND] = {"round_vml_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_ROUND_DEC] = {"round_cpu", 1, PF_NOINT},
    [PW_TRUNC] = {"trunc_vml_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_FRAC] = {"frac_cpu", 1, PF_NOINT},
    [PW_SIGN] = {"sign_cpu", 1, 0},
    [PW_RECIPROCAL] = {"reciprocal_cpu", 1, PF_PROMOTE},
    [PW_SQUARE] = {"square", 1, 0},
    [PW_LOGICAL_NOT] = {"logical_not_cpu", 1, PF_BOOLOUT},
    [PW_BITWISE_NOT] = {"bitwise_not_cpu", 1, PF_INTONLY},
    [PW_ISNAN] = {"isnan", 1, PF_BOOLOUT},
    [PW_ISINF] = {"isinf", 1, PF_BOOLOUT},
    [PW_ISFINITE] = {"isfinite", 1, PF_BOOLOUT},
    [PW_THRESHOLD] = {"threshold_cpu", 1, PF_NOBOOL | PF_NOHALF},
    [PW_COPY] = {"copy_", 1, 0},
    [PW_ADD] = {"add_cpu", 2, 0},
    [PW_SUB] = {"sub_cpu", 2, 0},
    [PW_MUL] = {"mul_cpu", 2, 0},
    [PW_DIV] = {"div_true_cpu", 2, PF_PROMOTE},
    [PW_DIV_TRUNC] = {"div_trunc_cpu", 2, PF_NOBOOL},
    [PW_DIV_FLOOR] = {"div_floor_cpu", 2, PF_NOBOOL},
    [PW_REMAINDER] = {"remainder_cpu", 2, PF_NOBOOL},
    [PW_FMOD] = {"fmod_cpu", 2, PF_NOBOOL},
    [PW_POW] = {"pow", 2, PF_NOBOOL},
    [PW_MAXIMUM] = {"maximum_cpu", 2, 0},
    [PW_MINIMUM] = {"minimum_cpu", 2, 0},
    [PW_ATAN2] = {"atan2_cpu", 2, PF_PROMOTE | PF_NOHALF},
    [PW_BAND] = {"bitwise_and_cpu", 2, PF_INTONLY},
    [PW_BOR] = {"bitwise_or_cpu", 2, PF_INTONLY},
    [PW_BXOR] = {"bitwise_xor_cpu", 2, PF_INTONLY},
    [PW_GCD] = {"gcd_cpu", 2, PF_INTONLY | PF_NOBOOL},
    [PW_LAND] = {"logical_and_cpu", 2, PF_BOOLOUT},
    [PW_LOR] = {"logical_or_cpu", 2, PF_BOOLOUT},
    [PW_LXOR] = {"logical_xor_cpu", 2, PF_BOOLOUT},
    [PW_EQ] = {"eq_cpu", 2, PF_BOOLOUT},
    [PW_NE] = {"ne_cpu", 2, PF_BOOLOUT},
    [PW_LT] = {"lt_cpu", 2, PF_BOOLOUT},
    [PW_LE] = {"le_cpu", 2, PF_BOOLOUT},
    [PW_GT] = {"gt_cpu", 2, PF_BOOLOUT},
    [PW_GE] = {"ge_cpu", 2, PF_BOOLOUT},
    [PW_CLAMP_MIN] = {"clamp_min_cpu", 2, 0},
    [PW_CLAMP_MAX] = {"clamp_max_cpu", 2, 0},
    [PW_CLAMP] = {"clamp_cpu", 3, PF_NOHALF},
    [PW_WHERE] = {"where_cpu", 3, 0},
    [PW_LERP] = {"lerp_kernel_scalar", 3, PF_NOINT},
    [PW_ADDCMUL] = {"addcmul_cpu_out", 3, PF_NOBOOL},
    [PW_ADDCDIV] = {"addcdiv_cpu_out", 3, PF_NOBOOL},
};

/* Op parameters (alpha, limits, slopes), as given and as int64. */
typedef struct pw_par {
  double d[3];
  int64_t i[3];
} pw_par;

/* Block size of the buffered loops. */
#define PW_BLK 256

/* What one run needs, shared by the threads of the iterator. */
typedef struct pw_loop {
  pw_op op;
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

#define PW_EACH(stmt)                                                                                            \
  for (int64_t i = 0; i < n; i++) {                                                                              \
    stmt;                                                                                                        \
  }                                                                                                              \
  break

/* y[0..n) = op(x[0][..], x[1][..], ...) in the floating domain T. */
#define PW_FAPPLY_DEF(SUF, T)                                                                                    \
  static void pw_apply_##SUF(pw_loop *L, T *const *x, T *y, int64_t n) {                                        \
    const T *a = x[0], *b = x[1], *w = x[2];                                                                     \
    const T p0 = (T)L->par.d[0], p1 = (T)L->par.d[1], p2 = (T)L->par.d[2];                                       \
    switch (L->op) {                                                                                             \
    case PW_ABS: PW_EACH(y[i] = fabs(a[i]));                                                                     \
    case PW_NEG: PW_EACH(y[i] = -a[i]);                                                                          \
    case PW_EXP: PW_EACH(y[i] = exp(a[i]));                                                                      \
    case PW_LOG: PW_EACH(y[i] = log(a[i]));                                                                      \
    case PW_LOG2: PW_EACH(y[i] = log2(a[i]));                                                                    \
    case PW_LOG10: PW_EACH(y[i] = log10(a[i]));                                                                  \
    case PW_LOG1P: PW_EACH(y[i] = log1p(a[i]));                                                                  \
    case PW_EXPM1: PW_EACH(y[i] = expm1(a[i]));                                                                  \
    case PW_SQRT: PW_EACH(y[i] = sqrt(a[i]));                                                                    \
    case PW_RSQRT: PW_EACH(y[i] = (T)1 / sqrt(a[i]));                                                            \
    case PW_SIN: PW_EACH(y[i] = sin(a[i]));                                                                      \
    case PW_COS: PW_EACH(y[i] = cos(a[i]));                                                                      \
    case PW_TAN: PW_EACH(y[i] = tan(a[i]));                                                                      \
    case PW_ASIN: PW_EACH(y[i] = asin(a[i]));                                                                    \
    case PW_ACOS: PW_EACH(y[i] = acos(a[i]));                                                                    \
    case PW_ATAN: PW_EACH(y[i] = atan(a[i]));                                                                    \
    case PW_SINH: PW_EACH(y[i] = sinh(a[i]));                                                                    \
    case PW_COSH: PW_EACH(y[i] = cosh(a[i]));                                                                    \
    case PW_TANH: PW_EACH(y[i] = tanh(a[i]));                                                                    \
    case PW_SIGMOID: PW_EACH(y[i] = (T)1 / ((T)1 + exp(-a[i])));                                                 \
    case PW_RELU: PW_EACH(y[i] = a[i] < 0 ? (T)0 : a[i]);                                                        \
    case PW_GELU: PW_EACH(y[i] = a[i] * (T)0.5 * ((T)1 + erf(a[i] * (T)M_SQRT1_2)));                             \
    case PW_GELU_TANH:                                                                                           \
      PW_EACH(T v = a[i]; T k = (T)(M_2_SQRTPI * M_SQRT1_2);                                                     \
              y[i] = (T)0.5 * v * ((T)1 + tanh(k * (v + (T)0.044715 * v * v * v))));                             \
    case PW_SILU: PW_EACH(y[i] = a[i] / ((T)1 + exp(-a[i])));                                                    \
    case PW_MISH: PW_EACH(y[i] = a[i] * tanh(log1p(exp(a[i]))));                                                 \
    case PW_HARDSWISH:                                                                                           \
      PW_EACH(T t = a[i] + 3; t = t < 0 ? (T)0 : t; t = t > 6 ? (T)6 : t; y[i] = a[i] * t / 6);                  \
    case PW_HARDSIGMOID: PW_EACH(T t = a[i] + 3; t = t < 0 ? (T)0 : t; t = t > 6 ? (T)6 : t; y[i] = t / 6);      \
    case PW_HARDTANH: PW_EACH(T t = a[i] < p0 ? p0 : a[i]; y[i] = t > p1 ? p1 : t);                              \
    case PW_ELU: PW_EACH(y[i] = a[i] <= 0 ? expm1(a[i] * p2) * (p0 * p1) : a[i] * p1);                           \
    case PW_LEAKY_RELU: PW_EACH(y[i] = a[i] > 0 ? a[i] : a[i] * p0);                                             \
    case PW_SOFTPLUS: PW_EACH(y[i] = a[i] * p0 > p1 ? a[i] : log1p(exp(a[i] * p0)) / p0);                        \
    case PW_ERF: PW_EACH(y[i] = erf(a[i]));                                                                      \
    case PW_FLOOR: PW_EACH(y[i] = floor(a[i]));                                                                  \
    case PW_CEIL: PW_EACH(y[i] = ceil(a[i]));                                                                    \
    case PW_ROUND: PW_EACH(y[i] = nearbyint(a[i]));                                                              \
    case PW_ROUND_DEC: {                                                                                         \
      int64_t dec = L->par.i[0];                                                                                 \
      T ten = (T)pow(10.0, (double)(dec < 0 ? -dec : dec));                                                      \
      if (dec < 0) { PW_EACH(y[i] = nearbyint(a[i] / ten) * ten); }                                              \
      PW_EACH(y[i] = nearbyint(a[i] * ten) / ten);                                                               \
    }                                                                                                            \
    case PW_TRUNC: PW_EACH(y[i] = trunc(a[i]));                                                                  \
    case PW_FRAC: PW_EACH(y[i] = a[i] - trunc(a[i]));                                                            \
    case PW_SIGN: PW_EACH(y[i] = (T)((a[i] > 0) - (a[i] < 0)));                                                  \
    case PW_RECIPROCAL: PW_EACH(y[i] = (T)1 / a[i]);                                                             \
    case PW_SQUARE: PW_EACH(y[i] = a[i] * a[i]);                                                                 \
    case PW_LOGICAL_NOT: PW_EACH(y[i] = a[i] == 0);                                                              \
    case PW_ISNAN: PW_EACH(y[i] = a[i] != a[i]);                                                                 \
    case PW_ISINF: PW_EACH(y[i] = isinf(a[i]));                                                                  \
    case PW_ISFINITE: PW_EACH(y[i] = isfinite(a[i]));                                                            \
    case PW_THRESHOLD: PW_EACH(y[i] = a[i] <= p0 ? p1 : a[i]);                                                   \
    case PW_COPY: PW_EACH(y[i] = a[i]);                                                                          \
    case PW_ADD: PW_EACH(y[i] = a[i] + p0 * b[i]);                                                               \
    case PW_SUB: PW_EACH(y[i] = a[i] - p0 * b[i]);                                                               \
    case PW_MUL: PW_EACH(y[i] = a[i] * b[i]);                                                                    \
    case PW_DIV: PW_EACH(y[i] = a[i] / b[i]);                                                                    \
    case PW_DIV_TRUNC: PW_EACH(y[i] = trunc(a[i] / b[i]));                                                       \
    case PW_DIV_FLOOR: PW_EACH(y[i] = pw_divfloor_##SUF(a[i], b[i]));                                            \
    case PW_REMAINDER: PW_EACH(y[i] = pw_rem_##SUF(a[i], b[i]));                                                 \
    case PW_FMOD: PW_EACH(y[i] = fmod(a[i], b[i]));                                                              \
    case PW_POW: PW_EACH(y[i] = pow(a[i], b[i]));                                                                \
    case PW_MAXIMUM: PW_EACH(y[i] = pw_max_##SUF(a[i], b[i]));                                                   \
    case PW_MINIMUM: PW_EACH(y[i] = pw_min_##SUF(a[i], b[i]));                                                   \
    case PW_ATAN2: PW_EACH(y[i] = atan2(a[i], b[i]));                                                            \
    case PW_LAND: PW_EACH(y[i] = a[i] != 0 && b[i] != 0);                                                        \
    case PW_LOR: PW_EACH(y[i] = a[i] != 0 || b[i] != 0);                                                         \
    case PW_LXOR: PW_EACH(y[i] = (a[i] != 0) != (b[i] != 0));                                                    \
    case PW_EQ: PW_EACH(y[i] = a[i] == b[i]);                                                                    \
    case PW_NE: PW_EACH(y[i] = a[i] != b[i]);                                                                    \
    case PW_LT: PW_EACH(y[i] = a[i] < b[i]);                                                                     \
    case PW_LE: PW_EACH(y[i] = a[i] <= b[i]);                                                                    \
    case PW_GT: PW_EACH(y[i] = a[i] > b[i]);                                                                     \
    case PW_GE: PW_EACH(y[i] = a[i] >= b[i]);                                                                    \
    case PW_CLAMP_MIN: PW_EACH(y[i] = pw_max_##SUF(a[i], b[i]));                                                 \
    case PW_CLAMP_MAX: PW_EACH(y[i] = pw_min_##SUF(a[i], b[i]));                                                 \
    case PW_CLAMP: PW_EACH(y[i] = pw_min_##SUF(pw_max_##SUF(a[i], b[i]), w[i]));                                 \
    case PW_WHERE: PW_EACH(y[i] = a[i] != 0 ? b[i] : w[i]);                                                      \
    case PW_LERP:                                                                                                \
      PW_EACH(T d = b[i] - a[i]; y[i] = fabs(w[i]) < (T)0.5 ? a[i] + w[i] * d : b[i] - d * ((T)1 - w[i]));       \
    case PW_ADDCMUL: PW_EACH(y[i] = a[i] + p0 * b[i] * w[i]);                                                    \
    case PW_ADDCDIV: PW_EACH(y[i] = a[i] + p0 * b[i] / w[i]);                                                    \
    default: PW_EACH(y[i] = 0);                                                                                  \
    }                                                                                                            \
  }

PW_FAPPLY_DEF(f, float)
PW_FAPPLY_DEF(d, double)

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

#define PW_ZDIV(expr)                                                                                            \
  PW_EACH(if (b[i] == 0) {                                                                                       \
    atomic_store_explicit(&L->zerodiv, 1, memory_order_relaxed);                                                 \
    y[i] = 0;                                                                                                    \
  } else y[i] = (expr))

/* y[0..n) = op(...) in int64 (integral and bool dtypes). */
static void pw_apply_i(pw_loop *L, int64_t *const *x, int64_t *y, int64_t n) {
  const int64_t *a = x[0], *b = x[1], *w = x[2];
  const int64_t p0 = L->par.i[0], p1 = L->par.i[1];
  bool isbool = L->cdt == TS_DT_BOOL;
  switch (L->op) {
  case PW_ABS: PW_EACH(y[i] = a[i] < 0 ? pw_wsub(0, a[i]) : a[i]);
  case PW_NEG: PW_EACH(y[i] = pw_wsub(0, a[i]));
  case PW_RELU: PW_EACH(y[i] = a[i] < 0 ? 0 : a[i]);
  case PW_HARDTANH: PW_EACH(int64_t t = a[i] < p0 ? p0 : a[i]; y[i] = t > p1 ? p1 : t);
  case PW_FLOOR: case PW_CEIL: case PW_ROUND: case PW_TRUNC: case PW_COPY: PW_EACH(y[i] = a[i]);
  case PW_SIGN: PW_EACH(y[i] = (a[i] > 0) - (a[i] < 0));
  case PW_SQUARE: PW_EACH(y[i] = pw_wmul(a[i], a[i]));
  case PW_LOGICAL_NOT: PW_EACH(y[i] = a[i] == 0);
  case PW_BITWISE_NOT:
    if (isbool) {
      PW_EACH(y[i] = !a[i]);
    }
    PW_EACH(y[i] = ~a[i]);
  case PW_ISNAN: case PW_ISINF: PW_EACH(y[i] = 0);
  case PW_ISFINITE: PW_EACH(y[i] = 1);
  case PW_THRESHOLD: PW_EACH(y[i] = a[i] <= p0 ? p1 : a[i]);
  case PW_ADD: PW_EACH(y[i] = pw_wadd(a[i], pw_wmul(p0, b[i])));
  case PW_SUB: PW_EACH(y[i] = pw_wsub(a[i], pw_wmul(p0, b[i])));
  case PW_MUL: PW_EACH(y[i] = pw_wmul(a[i], b[i]));
  case PW_DIV_TRUNC: PW_ZDIV(pw_idiv(a[i], b[i]));
  case PW_DIV_FLOOR: PW_ZDIV(pw_idivfloor(a[i], b[i]));
  case PW_REMAINDER: PW_ZDIV(pw_irem(a[i], b[i]));
  case PW_FMOD: PW_ZDIV(pw_imod(a[i], b[i]));
  case PW_POW: PW_EACH(y[i] = pw_powi(a[i], b[i]));
  case PW_MAXIMUM: case PW_CLAMP_MIN: PW_EACH(y[i] = a[i] > b[i] ? a[i] : b[i]);
  case PW_MINIMUM: case PW_CLAMP_MAX: PW_EACH(y[i] = a[i] < b[i] ? a[i] : b[i]);
  case PW_CLAMP: PW_EACH(int64_t t = a[i] > b[i] ? a[i] : b[i]; y[i] = t < w[i] ? t : w[i]);
  case PW_BAND: PW_EACH(y[i] = a[i] & b[i]);
  case PW_BOR: PW_EACH(y[i] = a[i] | b[i]);
  case PW_BXOR: PW_EACH(y[i] = a[i] ^ b[i]);
  case PW_GCD: PW_EACH(y[i] = pw_gcd(a[i], b[i], L->cdt));
  case PW_LAND: PW_EACH(y[i] = a[i] != 0 && b[i] != 0);
  case PW_LOR: PW_EACH(y[i] = a[i] != 0 || b[i] != 0);
  case PW_LXOR: PW_EACH(y[i] = (a[i] != 0) != (b[i] != 0));
  case PW_EQ: PW_EACH(y[i] = a[i] == b[i]);
  case PW_NE: PW_EACH(y[i] = a[i] != b[i]);
  case PW_LT: PW_EACH(y[i] = a[i] < b[i]);
  case PW_LE: PW_EACH(y[i] = a[i] <= b[i]);
  case PW_GT: PW_EACH(y[i] = a[i] > b[i]);
  case PW_GE: PW_EACH(y[i] = a[i] >= b[i]);
  case PW_WHERE: PW_EACH(y[i] = a[i] != 0 ? b[i] : w[i]);
  case PW_ADDCMUL: PW_EACH(y[i] = pw_wadd(a[i], pw_wmul(p0, pw_wmul(b[i], w[i]))));
  default: PW_EACH(y[i] = 0);
  }
}

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

static bool pw_check_dtype(ts_rt_ctx *c, pw_op op, ts_dtype dt);

/* Runs op over inputs in[0..nin) computing in cdt. *out NULL: a new tensor
 * of dtype odt (the caller owns it on success); else the given output
 * (flags for ts_rt_iter_build). The checks come in TensorIterator's order:
 * shapes, then (cast_from not TS_DT_NONE) that the result may be cast to a
 * given output, then (kdt not TS_DT_NONE) that op has a kernel for kdt. */
static bool pw_exec_checked(ts_rt_ctx *c, pw_op op, const pw_par *par, ts_dtype cdt, ts_dtype odt,
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

static bool pw_exec(ts_rt_ctx *c, pw_op op, const pw_par *par, ts_dtype cdt, ts_dtype odt, ts_rt_tensor **out,
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

/* The dtype checks of op's flags on dtype dt. */
static bool pw_check_dtype(ts_rt_ctx *c, pw_op op, ts_dtype dt) {
  unsigned f = pw_descs[op].flags;
  bool bad = ((f & PF_NOINT) && !ts_dtype_is_float(dt)) || ((f & PF_NOBOOL) && dt == TS_DT_BOOL) ||
             ((f & PF_INTONLY) && ts_dtype_is_float(dt)) || ((f & PF_NOHALF) && dt == TS_DT_FLOAT16) ||
             ((f & PF_NOBF16) && dt == TS_DT_BFLOAT16);
  if (!bad) return true;
  if (op == PW_RELU && dt == TS_DT_BOOL) return ts_rt_fail(c, "Boolean inputs not supported for relu");
  if (op == PW_HARDTANH && dt == TS_DT_BOOL) return ts_rt_fail(c, "Bool inputs not supported for hardtanh");
  return ts_rt_fail(c, "\"%s\" not implemented for '%s'", pw_descs[op].kname, ts_rt_dtype_name(dt));
}

/* Runs op on args with the compute dtype cdt (TS_DT_NONE: PyTorch's result
 * type of args), into a new tensor or `out` (mode PW_OUT / PW_INPLACE: the
 * result must be castable to it). Returns a new reference. */
static ts_rt_tensor *pw_run(ts_rt_ctx *c, pw_op op, const pw_par *par, const pw_arg *args, int nin, ts_dtype cdt,
                            ts_rt_tensor *out, pw_mode mode) {
  if (cdt == TS_DT_NONE) cdt = pw_args_type(args, nin);
  ts_dtype kdt = cdt;
  unsigned f = pw_descs[op].flags;
  if ((f & PF_PROMOTE) && !ts_dtype_is_float(cdt)) cdt = TS_DT_FLOAT32;
  ts_dtype odt = (f & PF_BOOLOUT) ? TS_DT_BOOL : cdt;
  const ts_rt_tensor *in[TS_RT_ITER_MAX_OPS];
  for (int k = 0; k < nin; k++) in[k] = args[k].t;
  ts_rt_tensor *o = out;
  if (!pw_exec_checked(c, op, par, cdt, odt, &o, mode == PW_OUT ? TS_RT_ITER_RESIZE_OUT : 0, in, nin,
                       (f & PF_BOOLOUT) ? TS_DT_NONE : cdt, kdt))
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
    ok = pw_exec(c, PW_COPY, NULL, (ts_dtype)t->dtype, (ts_dtype)out->dtype, &o, TS_RT_ITER_RESIZE_OUT, in, 1);
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
static ts_rt_tensor *pw_unary(ts_rt_ctx *c, pw_op op, const pw_par *par, const ts_rt_tensor *a, ts_rt_tensor *out,
                              pw_mode mode) {
  ts_dtype dt = (ts_dtype)a->dtype;
  ts_dtype cdt = TS_DT_NONE;
  if (op == PW_NEG && dt == TS_DT_BOOL) return ts_rt_fail(c, "%s", pw_neg_bool_msg), NULL;
  if (op == PW_ROUND_DEC && !ts_dtype_is_float(dt)) /* decimals=0 goes to round's kernel */
    return ts_rt_fail(c, "\"%s\" not implemented for '%s'", par->i[0] ? "round_cpu" : "round_vml_cpu",
                      ts_rt_dtype_name(dt)), NULL;
  if (op == PW_SQUARE && dt == TS_DT_BOOL) cdt = TS_DT_INT64; /* square is pow(x, 2) */
  if (op == PW_HARDTANH || op == PW_THRESHOLD) {
    /* computed in self's dtype, the limits cast to it */
    if (!pw_check_dtype(c, op, dt)) return NULL;
    if (op == PW_HARDTANH && dt == TS_DT_UINT8 && (par->i[0] < 0 || par->i[1] < 0))
      return ts_rt_fail(c, "cannot do hardtanh on an unsigned type with negative limits"), NULL;
    cdt = dt;
  }
  pw_arg arg = {a, false, {.u.i = 0, .tag = TS_IV_NONE}};
  return pw_run(c, op, par, &arg, 1, cdt, out, mode);
}

static bool pw_k_unary(ts_rt_ctx *c, ts_rt_call *call, pw_op op, pw_mode mode) {
  ts_rt_tensor *a = NULL, *out = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !pw_out_arg(c, call, mode, &out)) return false;
  double p[3] = {0, 0, 0};
  uint32_t np = call->nin - 1 - (mode == PW_OUT ? 1 : 0);
  if (op == PW_GELU) {
    const ts_rt_str *s = NULL;
    if (!ts_rt_arg_str(c, call, 1, &s)) return false;
    if (strcmp(s->data, "tanh") == 0) op = PW_GELU_TANH;
    else if (strcmp(s->data, "none") != 0) return ts_rt_fail(c, "approximate argument must be either none or tanh.");
    np = 0;
  } else if (op == PW_ROUND_DEC) {
    int64_t dec = 0;
    if (!ts_rt_arg_int(c, call, 1, &dec)) return false;
    p[0] = (double)dec;
    np = 0;
  }
  if (np > 3) np = 3;
  for (uint32_t k = 0; k < np; k++)
    if (!ts_rt_arg_double(c, call, 1 + k, &p[k])) return false;
  pw_par par = pw_par3(p[0], p[1], p[2]);
  if (op == PW_ROUND_DEC) par.i[0] = (int64_t)p[0];
  if (op == PW_RELU6) {
    op = PW_HARDTANH;
    par = pw_par3(0, 6, 0);
  } else if (op == PW_SELU) {
    op = PW_ELU;
    par = pw_par3(1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1);
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

/* The binary ops with PyTorch's checks; `alpha` is None unless add/sub. */
static ts_rt_tensor *pw_binary(ts_rt_ctx *c, pw_op op, pw_arg a, pw_arg b, ts_iv alpha, ts_rt_tensor *out,
                               pw_mode mode) {
  if (op == PW_RSUB) {
    pw_arg t = a;
    a = b;
    b = t;
    op = PW_SUB;
  }
  pw_arg args[2] = {a, b};
  ts_dtype cdt = pw_args_type(args, 2);
  pw_par par = pw_par3(1, 0, 0);
  if (op == PW_ADD || op == PW_SUB) {
    if (op == PW_SUB) {
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
  if (op == PW_POW && b.wrapped && b.num.tag == TS_IV_INT && b.num.u.i < 0 && !ts_dtype_is_float(cdt))
    return ts_rt_fail(c, "Integers to negative integer powers are not allowed."), NULL;
  return pw_run(c, op, &par, args, 2, cdt, out, mode);
}

static bool pw_k_binary(ts_rt_ctx *c, ts_rt_call *call, pw_op op, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg a, b;
  ts_rt_tensor *out = NULL;
  ts_iv alpha = ts_iv_none();
  bool ok = pw_arg_get(c, call, 0, &tm, &a) && pw_arg_get(c, call, 1, &tm, &b) && pw_out_arg(c, call, mode, &out);
  if (ok && (op == PW_ADD || op == PW_SUB || op == PW_RSUB) && ts_rt_arg_check(c, call, 2)) alpha = call->in[2];
  if (ok && op == PW_DIV_MODE) {
    ok = ts_rt_arg_check(c, call, 2);
    if (ok) {
      ts_iv m = call->in[2];
      if (m.tag == TS_IV_NONE) op = PW_DIV;
      else if (m.tag != TS_IV_STR) ok = ts_rt_arg_bad(c, call, 2, "str");
      else if (strcmp(m.u.s->data, "trunc") == 0) op = PW_DIV_TRUNC;
      else if (strcmp(m.u.s->data, "floor") == 0) op = PW_DIV_FLOOR;
      else
        ok = ts_rt_fail(c, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'",
                        m.u.s->data);
    }
  }
  ts_rt_tensor *r = ok ? pw_binary(c, op, a, b, alpha, out, mode) : NULL;
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

/* ------------------------------------------------------- clamp kernels */

/* clamp(self, min?, max?) with Scalar or Tensor bounds; which: 0 both
 * arguments (either may be None), 1 clamp_min, 2 clamp_max. */
static bool pw_k_clamp(ts_rt_ctx *c, ts_rt_call *call, int which, pw_mode mode) {
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
    pw_op op = has_min && has_max ? PW_CLAMP : has_min ? PW_CLAMP_MIN : PW_CLAMP_MAX;
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
    if (ok && op == PW_CLAMP && cdt == TS_DT_BOOL) ok = ts_rt_fail(c, "\"clamp_cpu\" not implemented for 'Bool'");
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

/* where(cond, self, other), self/other Tensor or Scalar. */
static bool pw_k_where(ts_rt_ctx *c, ts_rt_call *call, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  ts_rt_tensor *r = NULL;
  if (pw_arg_get(c, call, 0, &tm, &args[0]) && pw_arg_get(c, call, 1, &tm, &args[1]) &&
      pw_arg_get(c, call, 2, &tm, &args[2]) && pw_out_arg(c, call, mode, &out) && pw_cond_check(c, args[0].t))
    r = pw_run(c, PW_WHERE, NULL, args, 3, pw_args_type(args + 1, 2), out, mode);
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
  ts_rt_tensor *r = pw_run(c, PW_WHERE, NULL, args, 3, dt, out, mode);
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
    if (ok) r = pw_run(c, PW_LERP, NULL, args, 3, dt, out, mode);
  }
  pw_tmp_free(&tm);
  return pw_fin(c, call, mode, r);
}

static bool pw_k_addc(ts_rt_ctx *c, ts_rt_call *call, pw_op op, pw_mode mode) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg args[3];
  ts_rt_tensor *out = NULL;
  ts_rt_tensor *r = NULL;
  double value = 1;
  bool ok = pw_arg_get(c, call, 0, &tm, &args[0]) && pw_arg_get(c, call, 1, &tm, &args[1]) &&
            pw_arg_get(c, call, 2, &tm, &args[2]) && ts_rt_arg_double(c, call, 3, &value) &&
            pw_out_arg(c, call, mode, &out);
  if (ok && op == PW_ADDCDIV && !ts_dtype_is_float((ts_dtype)args[1].t->dtype) && !ts_dtype_is_float((ts_dtype)args[2].t->dtype))
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
  bool ok = pw_exec(c, PW_COPY, NULL, TS_DT_FLOAT64, (ts_dtype)a->dtype, &o, 0, in, 1);
  ts_rt_tensor_release(v);
  return ok;
}

/* fill_ with a 0-d tensor or number, converted to self's dtype. */
static bool pw_k_fill(ts_rt_ctx *c, ts_rt_call *call) {
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
    ok = pw_exec(c, PW_COPY, NULL, (ts_dtype)v.t->dtype, (ts_dtype)self->dtype, &o, 0, in, 1);
  }
  pw_tmp_free(&tm);
  if (!ok) return false;
  ts_rt_tensor_retain(self);
  return pw_ret(call, self);
}

static bool pw_k_zero(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *self = NULL;
  if (!ts_rt_arg_tensor(c, call, 0, &self) || !ts_rt_fill_(c, self, 0)) return false;
  ts_rt_tensor_retain(self);
  return pw_ret(call, self);
}

/* ------------------------------------------------- tensor_ops.h API */

static const pw_op pw_unary_map[] = {
    [TS_RT_ABS] = PW_ABS, [TS_RT_NEG] = PW_NEG, [TS_RT_EXP] = PW_EXP, [TS_RT_LOG] = PW_LOG,
    [TS_RT_SQRT] = PW_SQRT, [TS_RT_RSQRT] = PW_RSQRT, [TS_RT_SIN] = PW_SIN, [TS_RT_COS] = PW_COS,
    [TS_RT_TANH] = PW_TANH, [TS_RT_SIGMOID] = PW_SIGMOID, [TS_RT_RELU] = PW_RELU, [TS_RT_GELU] = PW_GELU,
    [TS_RT_GELU_TANH] = PW_GELU_TANH, [TS_RT_SILU] = PW_SILU, [TS_RT_ERF] = PW_ERF,
    [TS_RT_RECIPROCAL] = PW_RECIPROCAL, [TS_RT_LOGICAL_NOT] = PW_LOGICAL_NOT, [TS_RT_FLOOR] = PW_FLOOR,
    [TS_RT_CEIL] = PW_CEIL, [TS_RT_ROUND] = PW_ROUND,
};

static const pw_op pw_binary_map[] = {
    [TS_RT_ADD] = PW_ADD, [TS_RT_SUB] = PW_SUB, [TS_RT_MUL] = PW_MUL, [TS_RT_DIV] = PW_DIV,
    [TS_RT_MAXIMUM] = PW_MAXIMUM, [TS_RT_MINIMUM] = PW_MINIMUM, [TS_RT_POW] = PW_POW, [TS_RT_EQ] = PW_EQ,
    [TS_RT_NE] = PW_NE, [TS_RT_LT] = PW_LT, [TS_RT_LE] = PW_LE, [TS_RT_GT] = PW_GT, [TS_RT_GE] = PW_GE,
    [TS_RT_LOGICAL_AND] = PW_LAND, [TS_RT_LOGICAL_OR] = PW_LOR,
};

static pw_arg pw_targ(const ts_rt_tensor *t) {
  pw_arg a = {t, false, {.u.i = 0, .tag = TS_IV_NONE}};
  return a;
}

ts_rt_tensor *ts_rt_unary_op(ts_rt_ctx *c, ts_rt_unary op, const ts_rt_tensor *a) {
  if ((unsigned)op >= sizeof pw_unary_map / sizeof pw_unary_map[0]) return ts_rt_fail(c, "bad unary op"), NULL;
  pw_par par = pw_par3(0, 0, 0);
  return pw_unary(c, pw_unary_map[op], &par, a, NULL, PW_NEW);
}

bool ts_rt_unary_op_(ts_rt_ctx *c, ts_rt_unary op, ts_rt_tensor *a) {
  if ((unsigned)op >= sizeof pw_unary_map / sizeof pw_unary_map[0]) return ts_rt_fail(c, "bad unary op");
  pw_par par = pw_par3(0, 0, 0);
  ts_rt_tensor *r = pw_unary(c, pw_unary_map[op], &par, a, a, PW_INPLACE);
  if (!r) return false;
  ts_rt_tensor_release(r);
  return true;
}

ts_rt_tensor *ts_rt_binary_op(ts_rt_ctx *c, ts_rt_binary op, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if ((unsigned)op >= sizeof pw_binary_map / sizeof pw_binary_map[0]) return ts_rt_fail(c, "bad binary op"), NULL;
  return pw_binary(c, pw_binary_map[op], pw_targ(a), pw_targ(b), ts_iv_none(), NULL, PW_NEW);
}

bool ts_rt_binary_op_(ts_rt_ctx *c, ts_rt_binary op, ts_rt_tensor *a, const ts_rt_tensor *b) {
  if ((unsigned)op >= sizeof pw_binary_map / sizeof pw_binary_map[0]) return ts_rt_fail(c, "bad binary op");
  ts_rt_tensor *r = pw_binary(c, pw_binary_map[op], pw_targ(a), pw_targ(b), ts_iv_none(), a, PW_INPLACE);
  if (!r) return false;
  ts_rt_tensor_release(r);
  return true;
}

ts_rt_tensor *ts_rt_add(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, double alpha) {
  ts_iv al = alpha == (double)(int64_t)alpha ? ts_iv_int((int64_t)alpha) : ts_iv_double(alpha);
  if (ts_dtype_is_float((ts_dtype)a->dtype) || ts_dtype_is_float((ts_dtype)b->dtype)) al = ts_iv_double(alpha);
  return pw_binary(c, PW_ADD, pw_targ(a), pw_targ(b), al, NULL, PW_NEW);
}

/* a OP s with s a Python number: integral values stay int so an integer
 * tensor keeps its dtype. */
static ts_rt_tensor *pw_scalar_op(ts_rt_ctx *c, pw_op op, const ts_rt_tensor *a, double s) {
  pw_tmp tm = {{NULL}, 0};
  pw_arg b;
  bool integral = s == floor(s) && fabs(s) < 9.0e18;
  ts_iv v = integral && !ts_dtype_is_float((ts_dtype)a->dtype) ? ts_iv_int((int64_t)s) : ts_iv_double(s);
  ts_rt_tensor *r = NULL;
  if (pw_wrap(c, &tm, v, &b)) r = pw_binary(c, op, pw_targ(a), b, ts_iv_int(1), NULL, PW_NEW);
  pw_tmp_free(&tm);
  return r;
}

ts_rt_tensor *ts_rt_mul_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s) { return pw_scalar_op(c, PW_MUL, a, s); }
ts_rt_tensor *ts_rt_add_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s) { return pw_scalar_op(c, PW_ADD, a, s); }

ts_rt_tensor *ts_rt_where(ts_rt_ctx *c, const ts_rt_tensor *cond, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (!pw_cond_check(c, cond)) return NULL;
  pw_arg args[3] = {pw_targ(cond), pw_targ(a), pw_targ(b)};
  return pw_run(c, PW_WHERE, NULL, args, 3, pw_args_type(args + 1, 2), NULL, PW_NEW);
}

ts_rt_tensor *ts_rt_masked_fill(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *mask, double value) {
  ts_rt_tensor *v = ts_rt_tensor_scalar(c, TS_DT_FLOAT64, value, 0);
  if (!v) return NULL;
  ts_rt_tensor *r = pw_masked_fill(c, a, mask, v, NULL, PW_NEW);
  ts_rt_tensor_release(v);
  return r;
}

/* ------------------------------------------------------- kernel table */

/* One wrapper per schema: the op and the overload's argument layout. */
static bool pw_kk_abs(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ABS, PW_NEW); }
static bool pw_kk_abs__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ABS, PW_OUT); }
static bool pw_kk_abs_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ABS, PW_INPLACE); }
static bool pw_kk_neg(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_NEG, PW_NEW); }
static bool pw_kk_neg__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_NEG, PW_OUT); }
static bool pw_kk_neg_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_NEG, PW_INPLACE); }
static bool pw_kk_exp(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_EXP, PW_NEW); }
static bool pw_kk_exp__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_EXP, PW_OUT); }
static bool pw_kk_exp_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_EXP, PW_INPLACE); }
static bool pw_kk_log(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG, PW_NEW); }
static bool pw_kk_log__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG, PW_OUT); }
static bool pw_kk_log_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG, PW_INPLACE); }
static bool pw_kk_log2(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG2, PW_NEW); }
static bool pw_kk_log2__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG2, PW_OUT); }
static bool pw_kk_log10(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG10, PW_NEW); }
static bool pw_kk_log10__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG10, PW_OUT); }
static bool pw_kk_log1p(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG1P, PW_NEW); }
static bool pw_kk_log1p__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOG1P, PW_OUT); }
static bool pw_kk_expm1(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_EXPM1, PW_NEW); }
static bool pw_kk_expm1__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_EXPM1, PW_OUT); }
static bool pw_kk_sqrt(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SQRT, PW_NEW); }
static bool pw_kk_sqrt__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SQRT, PW_OUT); }
static bool pw_kk_sqrt_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SQRT, PW_INPLACE); }
static bool pw_kk_rsqrt(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RSQRT, PW_NEW); }
static bool pw_kk_rsqrt__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RSQRT, PW_OUT); }
static bool pw_kk_sin(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIN, PW_NEW); }
static bool pw_kk_sin__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIN, PW_OUT); }
static bool pw_kk_cos(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_COS, PW_NEW); }
static bool pw_kk_cos__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_COS, PW_OUT); }
static bool pw_kk_tan(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TAN, PW_NEW); }
static bool pw_kk_tan__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TAN, PW_OUT); }
static bool pw_kk_asin(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ASIN, PW_NEW); }
static bool pw_kk_asin__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ASIN, PW_OUT); }
static bool pw_kk_acos(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ACOS, PW_NEW); }
static bool pw_kk_acos__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ACOS, PW_OUT); }
static bool pw_kk_atan(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ATAN, PW_NEW); }
static bool pw_kk_atan__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ATAN, PW_OUT); }
static bool pw_kk_sinh(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SINH, PW_NEW); }
static bool pw_kk_sinh__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SINH, PW_OUT); }
static bool pw_kk_cosh(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_COSH, PW_NEW); }
static bool pw_kk_cosh__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_COSH, PW_OUT); }
static bool pw_kk_tanh(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TANH, PW_NEW); }
static bool pw_kk_tanh__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TANH, PW_OUT); }
static bool pw_kk_tanh_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TANH, PW_INPLACE); }
static bool pw_kk_sigmoid(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIGMOID, PW_NEW); }
static bool pw_kk_sigmoid__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIGMOID, PW_OUT); }
static bool pw_kk_sigmoid_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIGMOID, PW_INPLACE); }
static bool pw_kk_relu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RELU, PW_NEW); }
static bool pw_kk_relu__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RELU, PW_OUT); }
static bool pw_kk_relu_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RELU, PW_INPLACE); }
static bool pw_kk_relu6(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RELU6, PW_NEW); }
static bool pw_kk_gelu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_GELU, PW_NEW); }
static bool pw_kk_gelu__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_GELU, PW_OUT); }
static bool pw_kk_silu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SILU, PW_NEW); }
static bool pw_kk_silu__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SILU, PW_OUT); }
static bool pw_kk_silu_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SILU, PW_INPLACE); }
static bool pw_kk_mish(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_MISH, PW_NEW); }
static bool pw_kk_mish__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_MISH, PW_OUT); }
static bool pw_kk_hardswish(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDSWISH, PW_NEW); }
static bool pw_kk_hardswish__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDSWISH, PW_OUT); }
static bool pw_kk_hardswish_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDSWISH, PW_INPLACE); }
static bool pw_kk_hardsigmoid(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDSIGMOID, PW_NEW); }
static bool pw_kk_hardsigmoid__out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_unary(c, call, PW_HARDSIGMOID, PW_OUT);
}
static bool pw_kk_hardsigmoid_(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_unary(c, call, PW_HARDSIGMOID, PW_INPLACE);
}
static bool pw_kk_hardtanh(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDTANH, PW_NEW); }
static bool pw_kk_hardtanh__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDTANH, PW_OUT); }
static bool pw_kk_hardtanh_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_HARDTANH, PW_INPLACE); }
static bool pw_kk_elu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ELU, PW_NEW); }
static bool pw_kk_elu__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ELU, PW_OUT); }
static bool pw_kk_elu_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ELU, PW_INPLACE); }
static bool pw_kk_selu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SELU, PW_NEW); }
static bool pw_kk_leaky_relu(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LEAKY_RELU, PW_NEW); }
static bool pw_kk_leaky_relu__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LEAKY_RELU, PW_OUT); }
static bool pw_kk_leaky_relu_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LEAKY_RELU, PW_INPLACE); }
static bool pw_kk_softplus(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SOFTPLUS, PW_NEW); }
static bool pw_kk_softplus__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SOFTPLUS, PW_OUT); }
static bool pw_kk_erf(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ERF, PW_NEW); }
static bool pw_kk_erf__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ERF, PW_OUT); }
static bool pw_kk_floor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_FLOOR, PW_NEW); }
static bool pw_kk_floor__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_FLOOR, PW_OUT); }
static bool pw_kk_ceil(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_CEIL, PW_NEW); }
static bool pw_kk_ceil__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_CEIL, PW_OUT); }
static bool pw_kk_round(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ROUND, PW_NEW); }
static bool pw_kk_round__decimals(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ROUND_DEC, PW_NEW); }
static bool pw_kk_round__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ROUND, PW_OUT); }
static bool pw_kk_round__decimals_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_unary(c, call, PW_ROUND_DEC, PW_OUT);
}
static bool pw_kk_trunc(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TRUNC, PW_NEW); }
static bool pw_kk_trunc__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_TRUNC, PW_OUT); }
static bool pw_kk_frac(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_FRAC, PW_NEW); }
static bool pw_kk_frac__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_FRAC, PW_OUT); }
static bool pw_kk_sign(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIGN, PW_NEW); }
static bool pw_kk_sign__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SIGN, PW_OUT); }
static bool pw_kk_reciprocal(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RECIPROCAL, PW_NEW); }
static bool pw_kk_reciprocal__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_RECIPROCAL, PW_OUT); }
static bool pw_kk_square(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SQUARE, PW_NEW); }
static bool pw_kk_square__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_SQUARE, PW_OUT); }
static bool pw_kk_logical_not(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_LOGICAL_NOT, PW_NEW); }
static bool pw_kk_logical_not__out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_unary(c, call, PW_LOGICAL_NOT, PW_OUT);
}
static bool pw_kk_bitwise_not(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_BITWISE_NOT, PW_NEW); }
static bool pw_kk_bitwise_not__out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_unary(c, call, PW_BITWISE_NOT, PW_OUT);
}
static bool pw_kk_isnan(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ISNAN, PW_NEW); }
static bool pw_kk_isnan__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ISNAN, PW_OUT); }
static bool pw_kk_isinf(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ISINF, PW_NEW); }
static bool pw_kk_isinf__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ISINF, PW_OUT); }
static bool pw_kk_isfinite(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_ISFINITE, PW_NEW); }
static bool pw_kk_threshold(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_THRESHOLD, PW_NEW); }
static bool pw_kk_threshold__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_THRESHOLD, PW_OUT); }
static bool pw_kk_threshold_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_unary(c, call, PW_THRESHOLD, PW_INPLACE); }
static bool pw_kk_clamp(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_NEW); }
static bool pw_kk_clamp__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_NEW); }
static bool pw_kk_clamp__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_OUT); }
static bool pw_kk_clamp__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_OUT); }
static bool pw_kk_clamp_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_INPLACE); }
static bool pw_kk_clamp___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 0, PW_INPLACE); }
static bool pw_kk_clamp_min(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 1, PW_NEW); }
static bool pw_kk_clamp_min__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 1, PW_NEW); }
static bool pw_kk_clamp_min__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 1, PW_OUT); }
static bool pw_kk_clamp_min__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 1, PW_OUT); }
static bool pw_kk_clamp_max(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 2, PW_NEW); }
static bool pw_kk_clamp_max__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 2, PW_NEW); }
static bool pw_kk_clamp_max__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 2, PW_OUT); }
static bool pw_kk_clamp_max__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_clamp(c, call, 2, PW_OUT); }
static bool pw_kk_add__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_NEW); }
static bool pw_kk_add__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_NEW); }
static bool pw_kk_add__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_OUT); }
static bool pw_kk_add__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_OUTCOPY); }
static bool pw_kk_add___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_INPLACE); }
static bool pw_kk_add___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ADD, PW_INPLACE); }
static bool pw_kk_sub__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_NEW); }
static bool pw_kk_sub__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_NEW); }
static bool pw_kk_sub__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_OUT); }
static bool pw_kk_sub__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_OUTCOPY); }
static bool pw_kk_sub___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_INPLACE); }
static bool pw_kk_sub___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_SUB, PW_INPLACE); }
static bool pw_kk_mul__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_NEW); }
static bool pw_kk_mul__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_NEW); }
static bool pw_kk_mul__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_OUT); }
static bool pw_kk_mul__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_OUTCOPY); }
static bool pw_kk_mul___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_INPLACE); }
static bool pw_kk_mul___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MUL, PW_INPLACE); }
static bool pw_kk_div__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_NEW); }
static bool pw_kk_div__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_NEW); }
static bool pw_kk_div__Tensor_mode(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV_MODE, PW_NEW); }
static bool pw_kk_div__Scalar_mode(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV_MODE, PW_NEW); }
static bool pw_kk_div__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_OUT); }
static bool pw_kk_div__out_mode(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV_MODE, PW_OUT); }
static bool pw_kk_div__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_OUTCOPY); }
static bool pw_kk_div__Scalar_mode_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_DIV_MODE, PW_OUTCOPY);
}
static bool pw_kk_div___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_INPLACE); }
static bool pw_kk_div___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_INPLACE); }
static bool pw_kk_div___Tensor_mode(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_DIV_MODE, PW_INPLACE);
}
static bool pw_kk_div___Scalar_mode(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_DIV_MODE, PW_INPLACE);
}
static bool pw_kk_remainder__Tensor(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_NEW);
}
static bool pw_kk_remainder__Scalar(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_NEW);
}
static bool pw_kk_remainder__Scalar_Tensor(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_NEW);
}
static bool pw_kk_remainder__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_OUT);
}
static bool pw_kk_remainder__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_OUT);
}
static bool pw_kk_remainder__Scalar_Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_REMAINDER, PW_OUTCOPY);
}
static bool pw_kk_fmod__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_FMOD, PW_NEW); }
static bool pw_kk_fmod__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_FMOD, PW_NEW); }
static bool pw_kk_fmod__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_FMOD, PW_OUT); }
static bool pw_kk_fmod__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_FMOD, PW_OUT); }
static bool pw_kk_pow__Tensor_Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_POW, PW_NEW); }
static bool pw_kk_pow__Tensor_Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_POW, PW_NEW); }
static bool pw_kk_pow__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_POW, PW_NEW); }
static bool pw_kk_pow__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_POW, PW_OUT); }
static bool pw_kk_pow__Tensor_Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_POW, PW_OUT);
}
static bool pw_kk_pow__Tensor_Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_POW, PW_OUT);
}
static bool pw_kk_maximum(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MAXIMUM, PW_NEW); }
static bool pw_kk_maximum__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MAXIMUM, PW_OUT); }
static bool pw_kk_minimum(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MINIMUM, PW_NEW); }
static bool pw_kk_minimum__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_MINIMUM, PW_OUT); }
static bool pw_kk_atan2(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ATAN2, PW_NEW); }
static bool pw_kk_atan2__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_ATAN2, PW_OUT); }
static bool pw_kk_floor_divide(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV_FLOOR, PW_NEW); }
static bool pw_kk_floor_divide__Scalar(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_DIV_FLOOR, PW_NEW);
}
static bool pw_kk_floor_divide__out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_DIV_FLOOR, PW_OUT);
}
static bool pw_kk_rsub__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_RSUB, PW_NEW); }
static bool pw_kk_rsub__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_RSUB, PW_NEW); }
static bool pw_kk_rsub__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_RSUB, PW_OUTCOPY); }
static bool pw_kk_rsub__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_RSUB, PW_OUTCOPY); }
static bool pw_kk_true_divide__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_NEW); }
static bool pw_kk_true_divide__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_NEW); }
static bool pw_kk_true_divide__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_DIV, PW_OUT); }
static bool pw_kk_bitwise_and__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BAND, PW_NEW); }
static bool pw_kk_bitwise_and__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BAND, PW_NEW); }
static bool pw_kk_bitwise_and__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BAND, PW_OUT);
}
static bool pw_kk_bitwise_and__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BAND, PW_OUT);
}
static bool pw_kk_bitwise_and__Scalar_Tensor(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BAND, PW_NEW);
}
static bool pw_kk_bitwise_and__Scalar_Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BAND, PW_OUTCOPY);
}
static bool pw_kk_gcd(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GCD, PW_NEW); }
static bool pw_kk_gcd__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GCD, PW_OUT); }
static bool pw_kk_gcd_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GCD, PW_INPLACE); }
static bool pw_kk_bitwise_or__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BOR, PW_NEW); }
static bool pw_kk_bitwise_or__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BOR, PW_NEW); }
static bool pw_kk_bitwise_or__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BOR, PW_OUT);
}
static bool pw_kk_bitwise_or__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BOR, PW_OUT);
}
static bool pw_kk_bitwise_or__Scalar_Tensor(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BOR, PW_NEW);
}
static bool pw_kk_bitwise_or__Scalar_Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BOR, PW_OUTCOPY);
}
static bool pw_kk_bitwise_xor__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BXOR, PW_NEW); }
static bool pw_kk_bitwise_xor__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BXOR, PW_NEW); }
static bool pw_kk_bitwise_xor__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BXOR, PW_OUT);
}
static bool pw_kk_bitwise_xor__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BXOR, PW_OUT);
}
static bool pw_kk_bitwise_xor__Scalar_Tensor(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BXOR, PW_NEW);
}
static bool pw_kk_bitwise_xor__Scalar_Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_binary(c, call, PW_BXOR, PW_OUTCOPY);
}
static bool pw_kk___and____Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BAND, PW_NEW); }
static bool pw_kk___and____Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BAND, PW_NEW); }
static bool pw_kk___or____Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BOR, PW_NEW); }
static bool pw_kk___or____Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BOR, PW_NEW); }
static bool pw_kk___xor____Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BXOR, PW_NEW); }
static bool pw_kk___xor____Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_BXOR, PW_NEW); }
static bool pw_kk_logical_and(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LAND, PW_NEW); }
static bool pw_kk_logical_and__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LAND, PW_OUT); }
static bool pw_kk_logical_or(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LOR, PW_NEW); }
static bool pw_kk_logical_or__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LOR, PW_OUT); }
static bool pw_kk_logical_xor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LXOR, PW_NEW); }
static bool pw_kk_logical_xor__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LXOR, PW_OUT); }
static bool pw_kk_eq__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_EQ, PW_NEW); }
static bool pw_kk_eq__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_EQ, PW_NEW); }
static bool pw_kk_eq__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_EQ, PW_OUT); }
static bool pw_kk_eq__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_EQ, PW_OUT); }
static bool pw_kk_ne__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_NE, PW_NEW); }
static bool pw_kk_ne__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_NE, PW_NEW); }
static bool pw_kk_ne__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_NE, PW_OUT); }
static bool pw_kk_ne__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_NE, PW_OUT); }
static bool pw_kk_lt__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LT, PW_NEW); }
static bool pw_kk_lt__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LT, PW_NEW); }
static bool pw_kk_lt__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LT, PW_OUT); }
static bool pw_kk_lt__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LT, PW_OUT); }
static bool pw_kk_le__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LE, PW_NEW); }
static bool pw_kk_le__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LE, PW_NEW); }
static bool pw_kk_le__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LE, PW_OUT); }
static bool pw_kk_le__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_LE, PW_OUT); }
static bool pw_kk_gt__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GT, PW_NEW); }
static bool pw_kk_gt__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GT, PW_NEW); }
static bool pw_kk_gt__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GT, PW_OUT); }
static bool pw_kk_gt__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GT, PW_OUT); }
static bool pw_kk_ge__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GE, PW_NEW); }
static bool pw_kk_ge__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GE, PW_NEW); }
static bool pw_kk_ge__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GE, PW_OUT); }
static bool pw_kk_ge__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_binary(c, call, PW_GE, PW_OUT); }
static bool pw_kk_where__self(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_where(c, call, PW_NEW); }
static bool pw_kk_where__ScalarOther(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_where(c, call, PW_NEW); }
static bool pw_kk_where__ScalarSelf(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_where(c, call, PW_NEW); }
static bool pw_kk_where__self_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_where(c, call, PW_OUT); }
static bool pw_kk_where__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_where(c, call, PW_NEW); }
static bool pw_kk_masked_fill__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_masked_fill(c, call, PW_NEW); }
static bool pw_kk_masked_fill__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_masked_fill(c, call, PW_NEW); }
static bool pw_kk_masked_fill__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_masked_fill(c, call, PW_OUTCOPY);
}
static bool pw_kk_masked_fill__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) {
  return pw_k_masked_fill(c, call, PW_OUTCOPY);
}
static bool pw_kk_masked_fill___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_masked_fill(c, call, PW_INPLACE); }
static bool pw_kk_masked_fill___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_masked_fill(c, call, PW_INPLACE); }
static bool pw_kk_lerp__Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_lerp(c, call, PW_NEW); }
static bool pw_kk_lerp__Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_lerp(c, call, PW_NEW); }
static bool pw_kk_lerp__Scalar_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_lerp(c, call, PW_OUT); }
static bool pw_kk_lerp__Tensor_out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_lerp(c, call, PW_OUT); }
static bool pw_kk_addcmul(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_addc(c, call, PW_ADDCMUL, PW_NEW); }
static bool pw_kk_addcmul__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_addc(c, call, PW_ADDCMUL, PW_OUT); }
static bool pw_kk_addcdiv(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_addc(c, call, PW_ADDCDIV, PW_NEW); }
static bool pw_kk_addcdiv__out(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_addc(c, call, PW_ADDCDIV, PW_OUT); }
static bool pw_kk_fill___Scalar(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_fill(c, call); }
static bool pw_kk_fill___Tensor(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_fill(c, call); }
static bool pw_kk_zero_(ts_rt_ctx *c, ts_rt_call *call) { return pw_k_zero(c, call); }

const ts_rt_kernel_def ts_rt_kernels_pointwise[] = {
    {"aten::abs", pw_kk_abs},
    {"aten::abs.out", pw_kk_abs__out},
    {"aten::abs_", pw_kk_abs_},
    {"aten::neg", pw_kk_neg},
    {"aten::neg.out", pw_kk_neg__out},
    {"aten::neg_", pw_kk_neg_},
    {"aten::exp", pw_kk_exp},
    {"aten::exp.out", pw_kk_exp__out},
    {"aten::exp_", pw_kk_exp_},
    {"aten::log", pw_kk_log},
    {"aten::log.out", pw_kk_log__out},
    {"aten::log_", pw_kk_log_},
    {"aten::log2", pw_kk_log2},
    {"aten::log2.out", pw_kk_log2__out},
    {"aten::log10", pw_kk_log10},
    {"aten::log10.out", pw_kk_log10__out},
    {"aten::log1p", pw_kk_log1p},
    {"aten::log1p.out", pw_kk_log1p__out},
    {"aten::expm1", pw_kk_expm1},
    {"aten::expm1.out", pw_kk_expm1__out},
    {"aten::sqrt", pw_kk_sqrt},
    {"aten::sqrt.out", pw_kk_sqrt__out},
    {"aten::sqrt_", pw_kk_sqrt_},
    {"aten::rsqrt", pw_kk_rsqrt},
    {"aten::rsqrt.out", pw_kk_rsqrt__out},
    {"aten::sin", pw_kk_sin},
    {"aten::sin.out", pw_kk_sin__out},
    {"aten::cos", pw_kk_cos},
    {"aten::cos.out", pw_kk_cos__out},
    {"aten::tan", pw_kk_tan},
    {"aten::tan.out", pw_kk_tan__out},
    {"aten::asin", pw_kk_asin},
    {"aten::asin.out", pw_kk_asin__out},
    {"aten::acos", pw_kk_acos},
    {"aten::acos.out", pw_kk_acos__out},
    {"aten::atan", pw_kk_atan},
    {"aten::atan.out", pw_kk_atan__out},
    {"aten::sinh", pw_kk_sinh},
    {"aten::sinh.out", pw_kk_sinh__out},
    {"aten::cosh", pw_kk_cosh},
    {"aten::cosh.out", pw_kk_cosh__out},
    {"aten::tanh", pw_kk_tanh},
    {"aten::tanh.out", pw_kk_tanh__out},
    {"aten::tanh_", pw_kk_tanh_},
    {"aten::sigmoid", pw_kk_sigmoid},
    {"aten::sigmoid.out", pw_kk_sigmoid__out},
    {"aten::sigmoid_", pw_kk_sigmoid_},
    {"aten::relu", pw_kk_relu},
    {"aten::relu.out", pw_kk_relu__out},
    {"aten::relu_", pw_kk_relu_},
    {"aten::relu6", pw_kk_relu6},
    {"aten::gelu", pw_kk_gelu},
    {"aten::gelu.out", pw_kk_gelu__out},
    {"aten::silu", pw_kk_silu},
    {"aten::silu.out", pw_kk_silu__out},
    {"aten::silu_", pw_kk_silu_},
    {"aten::mish", pw_kk_mish},
    {"aten::mish.out", pw_kk_mish__out},
    {"aten::hardswish", pw_kk_hardswish},
    {"aten::hardswish.out", pw_kk_hardswish__out},
    {"aten::hardswish_", pw_kk_hardswish_},
    {"aten::hardsigmoid", pw_kk_hardsigmoid},
    {"aten::hardsigmoid.out", pw_kk_hardsigmoid__out},
    {"aten::hardsigmoid_", pw_kk_hardsigmoid_},
    {"aten::hardtanh", pw_kk_hardtanh},
    {"aten::hardtanh.out", pw_kk_hardtanh__out},
    {"aten::hardtanh_", pw_kk_hardtanh_},
    {"aten::elu", pw_kk_elu},
    {"aten::elu.out", pw_kk_elu__out},
    {"aten::elu_", pw_kk_elu_},
    {"aten::selu", pw_kk_selu},
    {"aten::leaky_relu", pw_kk_leaky_relu},
    {"aten::leaky_relu.out", pw_kk_leaky_relu__out},
    {"aten::leaky_relu_", pw_kk_leaky_relu_},
    {"aten::softplus", pw_kk_softplus},
    {"aten::softplus.out", pw_kk_softplus__out},
    {"aten::erf", pw_kk_erf},
    {"aten::erf.out", pw_kk_erf__out},
    {"aten::floor", pw_kk_floor},
    {"aten::floor.out", pw_kk_floor__out},
    {"aten::ceil", pw_kk_ceil},
    {"aten::ceil.out", pw_kk_ceil__out},
    {"aten::round", pw_kk_round},
    {"aten::round.decimals", pw_kk_round__decimals},
    {"aten::round.out", pw_kk_round__out},
    {"aten::round.decimals_out", pw_kk_round__decimals_out},
    {"aten::trunc", pw_kk_trunc},
    {"aten::trunc.out", pw_kk_trunc__out},
    {"aten::frac", pw_kk_frac},
    {"aten::frac.out", pw_kk_frac__out},
    {"aten::sign", pw_kk_sign},
    {"aten::sign.out", pw_kk_sign__out},
    {"aten::reciprocal", pw_kk_reciprocal},
    {"aten::reciprocal.out", pw_kk_reciprocal__out},
    {"aten::square", pw_kk_square},
    {"aten::square.out", pw_kk_square__out},
    {"aten::logical_not", pw_kk_logical_not},
    {"aten::logical_not.out", pw_kk_logical_not__out},
    {"aten::bitwise_not", pw_kk_bitwise_not},
    {"aten::bitwise_not.out", pw_kk_bitwise_not__out},
    {"aten::isnan", pw_kk_isnan},
    {"aten::isnan.out", pw_kk_isnan__out},
    {"aten::isinf", pw_kk_isinf},
    {"aten::isinf.out", pw_kk_isinf__out},
    {"aten::isfinite", pw_kk_isfinite},
    {"aten::threshold", pw_kk_threshold},
    {"aten::threshold.out", pw_kk_threshold__out},
    {"aten::threshold_", pw_kk_threshold_},
    {"aten::clamp", pw_kk_clamp},
    {"aten::clamp.Tensor", pw_kk_clamp__Tensor},
    {"aten::clamp.out", pw_kk_clamp__out},
    {"aten::clamp.Tensor_out", pw_kk_clamp__Tensor_out},
    {"aten::clamp_", pw_kk_clamp_},
    {"aten::clamp_.Tensor", pw_kk_clamp___Tensor},
    {"aten::clamp_min", pw_kk_clamp_min},
    {"aten::clamp_min.Tensor", pw_kk_clamp_min__Tensor},
    {"aten::clamp_min.out", pw_kk_clamp_min__out},
    {"aten::clamp_min.Tensor_out", pw_kk_clamp_min__Tensor_out},
    {"aten::clamp_max", pw_kk_clamp_max},
    {"aten::clamp_max.Tensor", pw_kk_clamp_max__Tensor},
    {"aten::clamp_max.out", pw_kk_clamp_max__out},
    {"aten::clamp_max.Tensor_out", pw_kk_clamp_max__Tensor_out},
    {"aten::add.Tensor", pw_kk_add__Tensor},
    {"aten::add.Scalar", pw_kk_add__Scalar},
    {"aten::add.out", pw_kk_add__out},
    {"aten::add.Scalar_out", pw_kk_add__Scalar_out},
    {"aten::add_.Tensor", pw_kk_add___Tensor},
    {"aten::add_.Scalar", pw_kk_add___Scalar},
    {"aten::sub.Tensor", pw_kk_sub__Tensor},
    {"aten::sub.Scalar", pw_kk_sub__Scalar},
    {"aten::sub.out", pw_kk_sub__out},
    {"aten::sub.Scalar_out", pw_kk_sub__Scalar_out},
    {"aten::sub_.Tensor", pw_kk_sub___Tensor},
    {"aten::sub_.Scalar", pw_kk_sub___Scalar},
    {"aten::mul.Tensor", pw_kk_mul__Tensor},
    {"aten::mul.Scalar", pw_kk_mul__Scalar},
    {"aten::mul.out", pw_kk_mul__out},
    {"aten::mul.Scalar_out", pw_kk_mul__Scalar_out},
    {"aten::mul_.Tensor", pw_kk_mul___Tensor},
    {"aten::mul_.Scalar", pw_kk_mul___Scalar},
    {"aten::div.Tensor", pw_kk_div__Tensor},
    {"aten::div.Scalar", pw_kk_div__Scalar},
    {"aten::div.Tensor_mode", pw_kk_div__Tensor_mode},
    {"aten::div.Scalar_mode", pw_kk_div__Scalar_mode},
    {"aten::div.out", pw_kk_div__out},
    {"aten::div.out_mode", pw_kk_div__out_mode},
    {"aten::div.Scalar_out", pw_kk_div__Scalar_out},
    {"aten::div.Scalar_mode_out", pw_kk_div__Scalar_mode_out},
    {"aten::div_.Tensor", pw_kk_div___Tensor},
    {"aten::div_.Scalar", pw_kk_div___Scalar},
    {"aten::div_.Tensor_mode", pw_kk_div___Tensor_mode},
    {"aten::div_.Scalar_mode", pw_kk_div___Scalar_mode},
    {"aten::remainder.Tensor", pw_kk_remainder__Tensor},
    {"aten::remainder.Scalar", pw_kk_remainder__Scalar},
    {"aten::remainder.Scalar_Tensor", pw_kk_remainder__Scalar_Tensor},
    {"aten::remainder.Tensor_out", pw_kk_remainder__Tensor_out},
    {"aten::remainder.Scalar_out", pw_kk_remainder__Scalar_out},
    {"aten::remainder.Scalar_Tensor_out", pw_kk_remainder__Scalar_Tensor_out},
    {"aten::fmod.Tensor", pw_kk_fmod__Tensor},
    {"aten::fmod.Scalar", pw_kk_fmod__Scalar},
    {"aten::fmod.Tensor_out", pw_kk_fmod__Tensor_out},
    {"aten::fmod.Scalar_out", pw_kk_fmod__Scalar_out},
    {"aten::pow.Tensor_Tensor", pw_kk_pow__Tensor_Tensor},
    {"aten::pow.Tensor_Scalar", pw_kk_pow__Tensor_Scalar},
    {"aten::pow.Scalar", pw_kk_pow__Scalar},
    {"aten::pow.Scalar_out", pw_kk_pow__Scalar_out},
    {"aten::pow.Tensor_Scalar_out", pw_kk_pow__Tensor_Scalar_out},
    {"aten::pow.Tensor_Tensor_out", pw_kk_pow__Tensor_Tensor_out},
    {"aten::maximum", pw_kk_maximum},
    {"aten::maximum.out", pw_kk_maximum__out},
    {"aten::minimum", pw_kk_minimum},
    {"aten::minimum.out", pw_kk_minimum__out},
    {"aten::atan2", pw_kk_atan2},
    {"aten::atan2.out", pw_kk_atan2__out},
    {"aten::floor_divide", pw_kk_floor_divide},
    {"aten::floor_divide.Scalar", pw_kk_floor_divide__Scalar},
    {"aten::floor_divide.out", pw_kk_floor_divide__out},
    {"aten::rsub.Tensor", pw_kk_rsub__Tensor},
    {"aten::rsub.Scalar", pw_kk_rsub__Scalar},
    {"aten::rsub.Tensor_out", pw_kk_rsub__Tensor_out},
    {"aten::rsub.Scalar_out", pw_kk_rsub__Scalar_out},
    {"aten::true_divide.Tensor", pw_kk_true_divide__Tensor},
    {"aten::true_divide.Scalar", pw_kk_true_divide__Scalar},
    {"aten::true_divide.out", pw_kk_true_divide__out},
    {"aten::bitwise_and.Tensor", pw_kk_bitwise_and__Tensor},
    {"aten::bitwise_and.Scalar", pw_kk_bitwise_and__Scalar},
    {"aten::bitwise_and.Tensor_out", pw_kk_bitwise_and__Tensor_out},
    {"aten::bitwise_and.Scalar_out", pw_kk_bitwise_and__Scalar_out},
    {"aten::bitwise_and.Scalar_Tensor", pw_kk_bitwise_and__Scalar_Tensor},
    {"aten::bitwise_and.Scalar_Tensor_out", pw_kk_bitwise_and__Scalar_Tensor_out},
    {"aten::bitwise_or.Tensor", pw_kk_bitwise_or__Tensor},
    {"aten::bitwise_or.Scalar", pw_kk_bitwise_or__Scalar},
    {"aten::bitwise_or.Tensor_out", pw_kk_bitwise_or__Tensor_out},
    {"aten::bitwise_or.Scalar_out", pw_kk_bitwise_or__Scalar_out},
    {"aten::bitwise_or.Scalar_Tensor", pw_kk_bitwise_or__Scalar_Tensor},
    {"aten::bitwise_or.Scalar_Tensor_out", pw_kk_bitwise_or__Scalar_Tensor_out},
    {"aten::gcd", pw_kk_gcd},
    {"aten::gcd.out", pw_kk_gcd__out},
    {"aten::gcd_", pw_kk_gcd_},
    {"aten::bitwise_xor.Tensor", pw_kk_bitwise_xor__Tensor},
    {"aten::bitwise_xor.Scalar", pw_kk_bitwise_xor__Scalar},
    {"aten::bitwise_xor.Tensor_out", pw_kk_bitwise_xor__Tensor_out},
    {"aten::bitwise_xor.Scalar_out", pw_kk_bitwise_xor__Scalar_out},
    {"aten::bitwise_xor.Scalar_Tensor", pw_kk_bitwise_xor__Scalar_Tensor},
    {"aten::bitwise_xor.Scalar_Tensor_out", pw_kk_bitwise_xor__Scalar_Tensor_out},
    {"aten::__and__.Scalar", pw_kk___and____Scalar},
    {"aten::__and__.Tensor", pw_kk___and____Tensor},
    {"aten::__or__.Tensor", pw_kk___or____Tensor},
    {"aten::__or__.Scalar", pw_kk___or____Scalar},
    {"aten::__xor__.Tensor", pw_kk___xor____Tensor},
    {"aten::__xor__.Scalar", pw_kk___xor____Scalar},
    {"aten::logical_and", pw_kk_logical_and},
    {"aten::logical_and.out", pw_kk_logical_and__out},
    {"aten::logical_or", pw_kk_logical_or},
    {"aten::logical_or.out", pw_kk_logical_or__out},
    {"aten::logical_xor", pw_kk_logical_xor},
    {"aten::logical_xor.out", pw_kk_logical_xor__out},
    {"aten::eq.Tensor", pw_kk_eq__Tensor},
    {"aten::eq.Scalar", pw_kk_eq__Scalar},
    {"aten::eq.Scalar_out", pw_kk_eq__Scalar_out},
    {"aten::eq.Tensor_out", pw_kk_eq__Tensor_out},
    {"aten::ne.Tensor", pw_kk_ne__Tensor},
    {"aten::ne.Scalar", pw_kk_ne__Scalar},
    {"aten::ne.Scalar_out", pw_kk_ne__Scalar_out},
    {"aten::ne.Tensor_out", pw_kk_ne__Tensor_out},
    {"aten::lt.Tensor", pw_kk_lt__Tensor},
    {"aten::lt.Scalar", pw_kk_lt__Scalar},
    {"aten::lt.Scalar_out", pw_kk_lt__Scalar_out},
    {"aten::lt.Tensor_out", pw_kk_lt__Tensor_out},
    {"aten::le.Tensor", pw_kk_le__Tensor},
    {"aten::le.Scalar", pw_kk_le__Scalar},
    {"aten::le.Scalar_out", pw_kk_le__Scalar_out},
    {"aten::le.Tensor_out", pw_kk_le__Tensor_out},
    {"aten::gt.Tensor", pw_kk_gt__Tensor},
    {"aten::gt.Scalar", pw_kk_gt__Scalar},
    {"aten::gt.Scalar_out", pw_kk_gt__Scalar_out},
    {"aten::gt.Tensor_out", pw_kk_gt__Tensor_out},
    {"aten::ge.Tensor", pw_kk_ge__Tensor},
    {"aten::ge.Scalar", pw_kk_ge__Scalar},
    {"aten::ge.Scalar_out", pw_kk_ge__Scalar_out},
    {"aten::ge.Tensor_out", pw_kk_ge__Tensor_out},
    {"aten::where.self", pw_kk_where__self},
    {"aten::where.ScalarOther", pw_kk_where__ScalarOther},
    {"aten::where.ScalarSelf", pw_kk_where__ScalarSelf},
    {"aten::where.self_out", pw_kk_where__self_out},
    {"aten::where.Scalar", pw_kk_where__Scalar},
    {"aten::masked_fill.Scalar", pw_kk_masked_fill__Scalar},
    {"aten::masked_fill.Tensor", pw_kk_masked_fill__Tensor},
    {"aten::masked_fill.Scalar_out", pw_kk_masked_fill__Scalar_out},
    {"aten::masked_fill.Tensor_out", pw_kk_masked_fill__Tensor_out},
    {"aten::masked_fill_.Scalar", pw_kk_masked_fill___Scalar},
    {"aten::masked_fill_.Tensor", pw_kk_masked_fill___Tensor},
    {"aten::lerp.Scalar", pw_kk_lerp__Scalar},
    {"aten::lerp.Tensor", pw_kk_lerp__Tensor},
    {"aten::lerp.Scalar_out", pw_kk_lerp__Scalar_out},
    {"aten::lerp.Tensor_out", pw_kk_lerp__Tensor_out},
    {"aten::addcmul", pw_kk_addcmul},
    {"aten::addcmul.out", pw_kk_addcmul__out},
    {"aten::addcdiv", pw_kk_addcdiv},
    {"aten::addcdiv.out", pw_kk_addcdiv__out},
    {"aten::fill_.Scalar", pw_kk_fill___Scalar},
    {"aten::fill_.Tensor", pw_kk_fill___Tensor},
    {"aten::zero_", pw_kk_zero_},
    {NULL, NULL},
};

