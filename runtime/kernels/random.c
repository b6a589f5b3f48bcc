/* runtime/kernels/random.c: the random ops (rand, randn, randint, randperm,
 * normal, uniform_, bernoulli, multinomial, exponential_, geometric_,
 * log_normal_, cauchy_, random_, their _like forms), the dropouts (dropout,
 * feature_dropout, alpha_dropout, feature_alpha_dropout: ts_rt_dropout, which
 * nn.c's kernels call too), rrelu, and manual_seed, drawing
 * from the run's generator (ctx->gen) as PyTorch 1.13's CPU generator does,
 * so that a run seeded as a PyTorch process is gives PyTorch's values.
 *
 * The generator (ATen's CPUGeneratorImpl): an mt19937 engine seeded with
 * the low 32 bits of the seed; 64-bit draws are two 32-bit ones, the first
 * the high half. A uniform double is 53 bits of a 64-bit draw times 2^-53, a
 * float 24 bits of a 32-bit draw times 2^-24 (11 for float16, 8 for
 * bfloat16), scaled to [from, to) in double. A standard normal double is
 * Box-Muller over two uniform doubles, r = sqrt(-2 log(1 - u2)), theta =
 * 2 pi u1: r cos(theta) is returned, r sin(theta) kept for the next draw
 * (manual_seed drops it). normal_ on a contiguous tensor of 16 or more
 * elements fills it with uniforms first and transforms them 16 at a time
 * (8 pairs, the last 16 redrawn when the size is not a multiple of 16):
 * for float32 in Cephes' single-precision log and sincos with fused
 * multiply-adds where GCC fuses them in PyTorch's AVX2 build (the build
 * Debian ships and x86-64 machines with AVX2 run), so float32 values are
 * bit-exact there too; other dtypes use the C library's log, sin and cos
 * as PyTorch's scalar path does.
 *
 * Elements are drawn in the order TensorIterator visits a lone output: a
 * new tensor's in order, an in-place self's in memory order.
 *
 * Each run starts from PyTorch's default seed (runtime.h, ts_rt_ctx.gen);
 * explicit Generator objects are refused.
 *
 * Also fractional_max_pool2d/3d, deterministic given their random_samples
 * (F.fractional_max_pool2d draws them with torch.rand in the model). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define RD_N 624
#define RD_M 397

/* ------------------------------------------------------------- generator */

void ts_rt_gen_seed(ts_rt_ctx *c, uint64_t seed) {
  ts_rt_gen *g = &c->gen;
  g->seed = seed;
  g->mt[0] = (uint32_t)(seed & 0xffffffffu);
  for (uint32_t j = 1; j < RD_N; j++) g->mt[j] = 1812433253u * (g->mt[j - 1] ^ (g->mt[j - 1] >> 30)) + j;
  g->pos = RD_N;
  g->seeded = true;
  g->have_normal = false;
}

/* The next RD_N words of the engine (mt19937's twist). */
static void rd_twist(ts_rt_gen *g) {
  for (uint32_t k = 0; k < RD_N; k++) {
    uint32_t y = (g->mt[k] & 0x80000000u) | (g->mt[(k + 1) % RD_N] & 0x7fffffffu);
    g->mt[k] = g->mt[(k + RD_M) % RD_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
  g->pos = 0;
}

uint32_t ts_rt_gen_u32(ts_rt_ctx *c) {
  ts_rt_gen *g = &c->gen;
  if (!g->seeded) ts_rt_gen_seed(c, TS_RT_DEFAULT_SEED);
  if (g->pos >= RD_N) rd_twist(g);
  uint32_t y = g->mt[g->pos++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t ts_rt_gen_u64(ts_rt_ctx *c) {
  uint64_t hi = ts_rt_gen_u32(c);
  uint64_t lo = ts_rt_gen_u32(c);
  return (hi << 32) | lo;
}

double ts_rt_gen_uniform(ts_rt_ctx *c) {
  return (double)(ts_rt_gen_u64(c) & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

float ts_rt_gen_uniform_f(ts_rt_ctx *c) {
  return (float)((double)(ts_rt_gen_u32(c) & ((1u << 24) - 1)) * (1.0 / 16777216.0));
}

double ts_rt_gen_normal(ts_rt_ctx *c) {
  if (c->gen.seeded && c->gen.have_normal) {
    c->gen.have_normal = false;
    return c->gen.normal;
  }
  double u1 = ts_rt_gen_uniform(c);
  double u2 = ts_rt_gen_uniform(c);
  double r = sqrt(-2.0 * log(1.0 - u2));
  double theta = 2.0 * 3.14159265358979323846 * u1;
  c->gen.normal = r * sin(theta);
  c->gen.have_normal = true;
  return r * cos(theta);
}

/* The mantissa bits PyTorch's uniform_real_distribution takes for a
 * floating dtype (std::numeric_limits<T>::digits). */
static int rd_digits(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT64: return 53;
  case TS_DT_FLOAT16: return 11;
  case TS_DT_BFLOAT16: return 8;
  default: return 24;
  }
}

/* A uniform in [0, 1) as uniform_real_distribution<dt> draws it (double
 * from a 64-bit draw, the narrower types from a 32-bit one). */
static double rd_uniform01(ts_rt_ctx *c, ts_dtype dt) {
  if (dt == TS_DT_FLOAT64) return ts_rt_gen_uniform(c);
  int d = rd_digits(dt);
  return (double)(ts_rt_gen_u32(c) & ((1u << d) - 1)) / (double)(1u << d);
}

/* v rounded to dt's precision (a floating dtype), as a store would. */
static double rd_round(ts_dtype dt, double v) {
  switch (dt) {
  case TS_DT_FLOAT32: return (float)v;
  case TS_DT_FLOAT16: return ts_rt_half_to_float(ts_rt_float_to_half((float)v));
  case TS_DT_BFLOAT16: return ts_rt_bf16_to_float(ts_rt_float_to_bf16((float)v));
  default: return v;
  }
}

/* ------------------------------------------------------------- iteration */

/* fn(c, arg, element) for each element of t in the order TensorIterator
 * visits a lone output: contiguous ones in order, else the dimensions from
 * the largest stride to the smallest (ties keep their order). */
typedef void (*rd_elem_fn)(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt);
static void rd_each(ts_rt_ctx *c, ts_rt_tensor *t, rd_elem_fn fn, void *arg) {
  int64_t n = ts_rt_tensor_numel(t);
  if (n == 0) return;
  ts_dtype dt = (ts_dtype)t->dtype;
  size_t es = ts_dtype_size(dt);
  char *base = ts_rt_tensor_data(t);
  if (ts_rt_tensor_is_contiguous(t)) {
    for (int64_t k = 0; k < n; k++) fn(c, arg, base + (size_t)k * es, dt);
    return;
  }
  int32_t nd = 0;
  int64_t sz[TS_RT_MAX_DIMS], st[TS_RT_MAX_DIMS], idx[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] == 1) continue;
    /* insertion keeps equal strides in their order */
    int32_t at = nd;
    while (at > 0 && st[at - 1] < t->strides[d]) {
      sz[at] = sz[at - 1];
      st[at] = st[at - 1];
      at--;
    }
    sz[at] = t->sizes[d];
    st[at] = t->strides[d];
    idx[nd++] = 0;
  }
  char *p = base;
  for (int64_t k = 0; k < n; k++) {
    fn(c, arg, p, dt);
    for (int32_t d = nd - 1; d >= 0; d--) {
      p += st[d] * (int64_t)es;
      if (++idx[d] < sz[d]) break;
      p -= sz[d] * st[d] * (int64_t)es;
      idx[d] = 0;
    }
  }
}

/* ------------------------------------------------------- distributions */

typedef struct rd_params {
  double a, b; /* from/to, mean/std, p, lambda, median/sigma */
  uint64_t range;
  int64_t base;
} rd_params;

static void rd_el_uniform(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  /* from and to in dt (uniform_real_distribution<scalar_t>), the rest in
   * double */
  double from = rd_round(dt, q->a), to = rd_round(dt, q->b);
  ts_rt_store_f64(p, dt, rd_uniform01(c, dt) * rd_round(dt, to - from) + from);
}

static void rd_el_normal(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  ts_rt_store_f64(p, dt, ts_rt_gen_normal(c) * q->b + q->a);
}

static void rd_el_bernoulli(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  ts_rt_store_i64(p, dt, ts_rt_gen_uniform(c) < q->a);
}

static void rd_el_exponential(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  ts_rt_store_f64(p, dt, -1.0 / q->a * log(1.0 - ts_rt_gen_uniform(c)));
}

static void rd_el_geometric(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  double v = ceil(log(ts_rt_gen_uniform(c)) / log1p(-q->a));
  if (ts_rt_dtype_is_float(dt)) ts_rt_store_f64(p, dt, v);
  else ts_rt_store_i64(p, dt, v >= 9.2e18 ? INT64_MAX : (int64_t)v);
}

static void rd_el_cauchy(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  ts_rt_store_f64(p, dt, q->a + q->b * tan(3.14159265358979323846 * (ts_rt_gen_uniform(c) - 0.5)));
}

static void rd_el_log_normal(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  ts_rt_store_f64(p, dt, exp(ts_rt_gen_normal(c) * q->b + q->a));
}

/* random_(from, to): (draw % range) + from, a 64-bit draw when the range
 * needs it and the dtype can hold it. */
static void rd_el_from_to(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  const rd_params *q = arg;
  bool wide = q->range >= (1ull << 32) &&
              (dt == TS_DT_INT64 || dt == TS_DT_FLOAT64 || dt == TS_DT_FLOAT32 || dt == TS_DT_BFLOAT16);
  uint64_t v = wide ? ts_rt_gen_u64(c) : ts_rt_gen_u32(c);
  int64_t r = (int64_t)(v % q->range + (uint64_t)q->base);
  if (ts_rt_dtype_is_float(dt)) ts_rt_store_f64(p, dt, (double)r);
  else ts_rt_store_i64(p, dt, r);
}

/* random_(from=-2^63, None): every int64 value. */
static void rd_el_full64(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  (void)arg;
  int64_t v = (int64_t)ts_rt_gen_u64(c);
  if (dt == TS_DT_INT64) ts_rt_store_i64(p, dt, v);
  else ts_rt_store_f64(p, dt, (double)v);
}

/* random_(): uniform over [0, 2^digits] for floating dtypes, over the
 * non-negative values for integers, a bit for bool. */
static void rd_el_random(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  (void)arg;
  switch (dt) {
  case TS_DT_BOOL: ts_rt_store_i64(p, dt, ts_rt_gen_u32(c) & 1); break;
  case TS_DT_INT64: ts_rt_store_i64(p, dt, (int64_t)(ts_rt_gen_u64(c) % (1ull << 63))); break;
  case TS_DT_FLOAT64: ts_rt_store_f64(p, dt, (double)(ts_rt_gen_u64(c) % ((1ull << 53) + 1))); break;
  case TS_DT_FLOAT32: case TS_DT_FLOAT16: case TS_DT_BFLOAT16:
    ts_rt_store_f64(p, dt, (double)(ts_rt_gen_u32(c) % ((1ull << rd_digits(dt)) + 1)));
    break;
  case TS_DT_INT32: ts_rt_store_i64(p, dt, (int64_t)(ts_rt_gen_u32(c) % (1ull << 31))); break;
  case TS_DT_INT16: ts_rt_store_i64(p, dt, (int64_t)(ts_rt_gen_u32(c) % (1ull << 15))); break;
  case TS_DT_INT8: ts_rt_store_i64(p, dt, (int64_t)(ts_rt_gen_u32(c) % (1ull << 7))); break;
  default: ts_rt_store_i64(p, dt, (int64_t)(ts_rt_gen_u32(c) % (1ull << 8))); break;
  }
}

/* Cephes' single-precision logarithm as PyTorch's AVX2 build evaluates it
 * (avx_mathfun.h's log256_ps compiled with GCC's default contraction of a
 * multiply feeding an add into one fused multiply-add): x in (0, 1]. */
static float rd_cephes_logf(float x) {
  uint32_t bits;
  memcpy(&bits, &x, 4);
  float e = (float)((int32_t)(bits >> 23) - 0x7f) + 1.0f;
  bits = (bits & ~0x7f800000u) | 0x3f000000u; /* the mantissa in [0.5, 1) */
  float m;
  memcpy(&m, &bits, 4);
  if (m < 0.707106781186547524f) {
    e -= 1.0f;
    m = (m - 1.0f) + m;
  } else {
    m = m - 1.0f;
  }
  float z = m * m;
  float y = fmaf(7.0376836292E-2f, m, -1.1514610310E-1f);
  y = fmaf(y, m, 1.1676998740E-1f);
  y = fmaf(y, m, -1.2420140846E-1f);
  y = fmaf(y, m, 1.4249322787E-1f);
  y = fmaf(y, m, -1.6668057665E-1f);
  y = fmaf(y, m, 2.0000714765E-1f);
  y = fmaf(y, m, -2.4999993993E-1f);
  y = fmaf(y, m, 3.3333331174E-1f);
  y = y * m;
  y = fmaf(y, z, e * -2.12194440e-4f);
  y = fmaf(-z, 0.5f, y);
  return fmaf(e, 0.693359375f, m + y);
}

/* Cephes' single-precision sine and cosine together (avx_mathfun.h's
 * sincos256_ps, contracted the same way), for x >= 0. */
static void rd_cephes_sincosf(float x, float *s, float *c) {
  int32_t j = (int32_t)(x * 1.27323954473516f);
  j = (j + 1) & ~1;
  float y = (float)j;
  bool sin_neg = (j & 4) != 0, cos_neg = ((j - 2) & 4) == 0, swap = (j & 2) != 0;
  x = fmaf(y, -0.78515625f, x);
  x = fmaf(y, -2.4187564849853515625e-4f, x);
  x = fmaf(y, -3.77489497744594108e-8f, x);
  float z = x * x;
  float yc = fmaf(2.443315711809948E-005f, z, -1.388731625493765E-003f);
  yc = fmaf(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = fmaf(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = fmaf(-1.9515295891E-4f, z, 8.3321608736E-3f);
  ys = fmaf(ys, z, -1.6666654611E-1f);
  ys = ys * z;
  ys = fmaf(ys, x, x);
  float sv = swap ? yc : ys, cv = swap ? ys : yc;
  *s = sin_neg ? -sv : sv;
  *c = cos_neg ? -cv : cv;
}

/* normal_fill's transform of 16 uniforms at p (8 Box-Muller pairs: element
 * j and j + 8), in dt's arithmetic as PyTorch's scalar normal_fill_16. */
static void rd_normal16(char *p, ts_dtype dt, double mean, double std) {
  if (dt == TS_DT_FLOAT32) {
    /* PyTorch's AVX2 kernel (normal_fill_16_AVX2), lane by lane */
    float *f = (float *)p, fm = (float)mean, fs = (float)std;
    for (int j = 0; j < 8; j++) {
      float radius = sqrtf(-2.0f * rd_cephes_logf(1.0f - f[j]));
      float sn, cs;
      rd_cephes_sincosf((float)(2.0 * 3.14159265358979323846) * f[j + 8], &sn, &cs);
      f[j] = fmaf(radius * cs, fs, fm);
      f[j + 8] = fmaf(radius * sn, fs, fm);
    }
    return;
  }
  size_t es = ts_dtype_size(dt);
  for (int j = 0; j < 8; j++) {
    double u2 = ts_rt_load_f64(p + (size_t)(j + 8) * es, dt);
    if (dt == TS_DT_FLOAT64) {
      double radius = sqrt(-2.0 * log(1.0 - ts_rt_load_f64(p + (size_t)j * 8, dt)));
      double theta = 2.0 * 3.14159265358979323846 * u2;
      ts_rt_store_f64(p + (size_t)j * 8, dt, radius * cos(theta) * std + mean);
      ts_rt_store_f64(p + (size_t)(j + 8) * 8, dt, radius * sin(theta) * std + mean);
    } else if (dt == TS_DT_FLOAT16) {
      /* u1, radius and theta rounded to half, the rest in float (c10::Half
       * converts to float for std::log, std::cos and mixed arithmetic) */
      float u1 = (float)rd_round(dt, 1.0 - ts_rt_load_f64(p + (size_t)j * es, dt));
      float radius = (float)rd_round(dt, sqrtf(-2.0f * logf(u1)));
      float theta = (float)rd_round(dt, 2.0 * 3.14159265358979323846 * u2);
      ts_rt_store_f64(p + (size_t)j * es, dt, radius * cosf(theta) * (float)std + (float)mean);
      ts_rt_store_f64(p + (size_t)(j + 8) * es, dt, radius * sinf(theta) * (float)std + (float)mean);
    } else {
      /* bfloat16: c10's BFloat16 math returns BFloat16, so every step is
       * rounded */
      double u1 = rd_round(dt, 1.0 - ts_rt_load_f64(p + (size_t)j * es, dt));
      double radius = rd_round(dt, sqrtf((float)rd_round(dt, -2.0 * rd_round(dt, logf((float)u1)))));
      double theta = rd_round(dt, 2.0 * 3.14159265358979323846 * u2);
      double cs = rd_round(dt, cosf((float)theta)), sn = rd_round(dt, sinf((float)theta));
      ts_rt_store_f64(p + (size_t)j * es, dt, rd_round(dt, rd_round(dt, radius * cs) * std) + mean);
      ts_rt_store_f64(p + (size_t)(j + 8) * es, dt, rd_round(dt, rd_round(dt, radius * sn) * std) + mean);
    }
  }
}

/* self.normal_(mean, std) for a floating self (checked by the caller). */
static void rd_normal_fill(ts_rt_ctx *c, ts_rt_tensor *t, double mean, double std) {
  int64_t n = ts_rt_tensor_numel(t);
  ts_dtype dt = (ts_dtype)t->dtype;
  if (n >= 16 && ts_rt_tensor_is_contiguous(t)) {
    char *d = ts_rt_tensor_data(t);
    size_t es = ts_dtype_size(dt);
    /* float32: mean and std as float (normal_fill<float>) */
    if (dt != TS_DT_FLOAT64) mean = rd_round(dt, mean), std = rd_round(dt, std);
    for (int64_t i = 0; i < n; i++) ts_rt_store_f64(d + (size_t)i * es, dt, rd_uniform01(c, dt));
    for (int64_t i = 0; i + 16 <= n; i += 16) rd_normal16(d + (size_t)i * es, dt, mean, std);
    if (n % 16) {
      char *tail = d + (size_t)(n - 16) * es;
      for (int i = 0; i < 16; i++) ts_rt_store_f64(tail + (size_t)i * es, dt, rd_uniform01(c, dt));
      rd_normal16(tail, dt, mean, std);
    }
    return;
  }
  rd_params q = {.a = mean, .b = std};
  rd_each(c, t, rd_el_normal, &q);
}

void ts_rt_bernoulli_fill(ts_rt_ctx *c, ts_rt_tensor *self, double p) {
  rd_params q = {.a = p};
  rd_each(c, self, rd_el_bernoulli, &q);
}

/* ------------------------------------------------------------ arguments */

/* Generator? : only None (the run's generator). */
static bool rd_no_generator(ts_rt_ctx *c, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag == TS_IV_NONE) return true;
  return ts_rt_fail(c, "tsaot supports only the default generator: pass generator=None (seed with torch.manual_seed)");
}

/* The factory keywords from position i (dtype, layout, device,
 * pin_memory): dtype TS_DT_NONE when not given. */
static bool rd_factory(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_dtype *dt) {
  if (!ts_rt_arg_opt_dtype(c, call, i, dt) || !ts_rt_arg_check(c, call, i + 2)) return false;
  ts_iv layout = call->in[i + 1], dev = call->in[i + 2];
  if (!(layout.tag == TS_IV_NONE || (layout.tag == TS_IV_INT && layout.u.i == 0)))
    return ts_rt_fail(c, "tsaot supports only strided (dense) tensors");
  if (!(dev.tag == TS_IV_NONE || (dev.tag == TS_IV_DEVICE && dev.u.dev.type == TS_DEV_CPU)))
    return ts_rt_fail(c, "tsaot runs on CPU: cannot create a tensor on another device");
  return true;
}

/* names: must be None. */
static bool rd_no_names(ts_rt_ctx *c, ts_rt_call *call, uint32_t i) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  if (call->in[i].tag == TS_IV_NONE) return true;
  return ts_rt_fail(c, "tsaot does not support named tensors");
}

/* A new contiguous tensor of the sizes of int[] argument i. */
static ts_rt_tensor *rd_new_sized(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_dtype dt) {
  int64_t sizes[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ts_rt_arg_ints(c, call, i, sizes, TS_RT_MAX_DIMS, &n, 0)) return NULL;
  for (uint32_t k = 0; k < n; k++)
    if (sizes[k] < 0) {
      ts_buf b = {0};
      for (uint32_t j = 0; j < n; j++) ts_buf_printf(&b, "%s%lld", j ? ", " : "", (long long)sizes[j]);
      ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: [%s]", (long long)sizes[k],
                 b.data ? b.data : "");
      ts_buf_free(&b);
      return NULL;
    }
  return ts_rt_tensor_new(c, dt, (int32_t)n, sizes, false);
}

/* A new contiguous tensor shaped as a. */
static ts_rt_tensor *rd_new_like(ts_rt_ctx *c, const ts_rt_tensor *a, ts_dtype dt) {
  return ts_rt_tensor_new(c, dt == TS_DT_NONE ? (ts_dtype)a->dtype : dt, a->ndim, a->sizes, false);
}

/* empty_like(a) with the preserve format: a's strides when a is
 * non-overlapping and dense (a transposed or permuted tensor), else
 * contiguous. */
static ts_rt_tensor *rd_new_preserve(ts_rt_ctx *c, const ts_rt_tensor *a, ts_dtype dt) {
  int32_t nd = a->ndim, perm[TS_RT_MAX_DIMS];
  if (ts_rt_tensor_is_contiguous(a) || nd < 2) return rd_new_like(c, a, dt);
  /* dims from the largest stride to the smallest (ties: in order) */
  for (int32_t d = 0; d < nd; d++) {
    int32_t at = d;
    while (at > 0 && a->strides[perm[at - 1]] < a->strides[d]) {
      perm[at] = perm[at - 1];
      at--;
    }
    perm[at] = d;
  }
  int64_t psz[TS_RT_MAX_DIMS], expect = 1;
  for (int32_t k = nd - 1; k >= 0; k--) {
    int32_t d = perm[k];
    psz[k] = a->sizes[d];
    if (a->sizes[d] != 1 && a->strides[d] != expect) return rd_new_like(c, a, dt);
    expect *= a->sizes[d];
  }
  ts_rt_tensor *base = ts_rt_tensor_new(c, dt == TS_DT_NONE ? (ts_dtype)a->dtype : dt, nd, psz, false);
  if (!base) return NULL;
  int64_t st[TS_RT_MAX_DIMS];
  for (int32_t k = 0; k < nd; k++) st[perm[k]] = base->strides[k];
  ts_rt_tensor *v = ts_rt_tensor_view(c, base, base->offset, nd, a->sizes, st);
  ts_rt_tensor_release(base);
  return v;
}

/* The memory_format argument i: true for None or preserve_format. */
static bool rd_preserve_arg(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, bool *preserve) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  *preserve = v.tag == TS_IV_NONE || (v.tag == TS_IV_INT && v.u.i == 1);
  if (v.tag == TS_IV_NONE || (v.tag == TS_IV_INT && (v.u.i == 0 || v.u.i == 1))) return true;
  return ts_rt_fail(c, "tsaot supports only the contiguous and preserve memory formats here");
}

static bool rd_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* An in-place op's result: self, retained. */
static bool rd_put_self(ts_rt_call *call, ts_rt_tensor *self) {
  ts_rt_tensor_retain(self);
  call->out[0] = ts_iv_tensor(self);
  return true;
}

static bool rd_not_impl(ts_rt_ctx *c, const char *what, ts_dtype dt) {
  return ts_rt_fail(c, "\"%s\" not implemented for '%s'", what, ts_rt_dtype_name(dt));
}

/* ------------------------------------------------------------- the fills */

static bool rd_uniform_(ts_rt_ctx *c, ts_rt_tensor *t, double from, double to) {
  ts_dtype dt = (ts_dtype)t->dtype;
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, "check_uniform_bounds", dt);
  if (from > to)
    return ts_rt_fail(c, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
  rd_params q = {.a = from, .b = to};
  rd_each(c, t, rd_el_uniform, &q);
  return true;
}

static bool rd_normal_(ts_rt_ctx *c, ts_rt_tensor *t, double mean, double std) {
  ts_dtype dt = (ts_dtype)t->dtype;
  if (!(std >= 0.0)) return ts_rt_fail(c, "normal expects std >= 0.0, but found std %g", std);
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, "normal_kernel_cpu", dt);
  rd_normal_fill(c, t, mean, std);
  return true;
}

/* random_(from, to) with to > from, checked against the dtype's range. */
static bool rd_random_from_to(ts_rt_ctx *c, ts_rt_tensor *t, int64_t from, int64_t to) {
  ts_dtype dt = (ts_dtype)t->dtype;
  if (from >= to)
    return ts_rt_fail(c, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld", (long long)from,
                      (long long)to);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  const char *name = NULL;
  switch (dt) {
  case TS_DT_BOOL: lo = 0, hi = 1, name = "bool"; break;
  case TS_DT_UINT8: lo = 0, hi = 255, name = "unsigned char"; break;
  case TS_DT_INT8: lo = -128, hi = 127, name = "signed char"; break;
  case TS_DT_INT16: lo = INT16_MIN, hi = INT16_MAX, name = "short"; break;
  case TS_DT_INT32: lo = INT32_MIN, hi = INT32_MAX, name = "int"; break;
  case TS_DT_FLOAT32: lo = -(1ll << 24), hi = 1ll << 24, name = "float"; break;
  case TS_DT_FLOAT64: lo = -(1ll << 53), hi = 1ll << 53, name = "double"; break;
  case TS_DT_FLOAT16: lo = -(1ll << 11), hi = 1ll << 11, name = "c10::Half"; break;
  case TS_DT_BFLOAT16: lo = -(1ll << 8), hi = 1ll << 8, name = "c10::BFloat16"; break;
  default: break;
  }
  if (from < lo || from > hi) return ts_rt_fail(c, "from is out of bounds for %s", name);
  if (to - 1 < lo || to - 1 > hi) return ts_rt_fail(c, "to - 1 is out of bounds for %s", name);
  rd_params q = {.range = (uint64_t)to - (uint64_t)from, .base = from};
  rd_each(c, t, rd_el_from_to, &q);
  return true;
}

/* ------------------------------------------------------------- factories */

/* rand / randn (size, [generator], [names], dtype, layout, device,
 * pin_memory): g, nm the positions of generator and names (0: absent). */
static bool rd_rand_common(ts_rt_ctx *c, ts_rt_call *call, uint32_t g, uint32_t nm, bool normal) {
  uint32_t f = 1 + (g ? 1 : 0) + (nm ? 1 : 0);
  ts_dtype dt;
  if ((g && !rd_no_generator(c, call, g)) || (nm && !rd_no_names(c, call, nm)) || !rd_factory(c, call, f, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, normal ? "normal_kernel_cpu" : "check_uniform_bounds", dt);
  ts_rt_tensor *t = rd_new_sized(c, call, 0, dt);
  if (!t) return false;
  if (normal) rd_normal_fill(c, t, 0.0, 1.0);
  else rd_uniform_(c, t, 0.0, 1.0);
  return rd_put(call, t);
}

static bool rd_k_rand(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 0, 0, false); }
static bool rd_k_rand_g(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 1, 0, false); }
static bool rd_k_rand_n(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 0, 1, false); }
static bool rd_k_rand_gn(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 1, 2, false); }
static bool rd_k_randn(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 0, 0, true); }
static bool rd_k_randn_g(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 1, 0, true); }
static bool rd_k_randn_n(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 0, 1, true); }
static bool rd_k_randn_gn(ts_rt_ctx *c, ts_rt_call *call) { return rd_rand_common(c, call, 1, 2, true); }

/* rand_like / randn_like (self, dtype, layout, device, pin_memory,
 * memory_format): a contiguous tensor of self's sizes. */
static bool rd_like_common(ts_rt_ctx *c, ts_rt_call *call, bool normal) {
  ts_rt_tensor *a;
  ts_dtype dt;
  bool preserve;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_factory(c, call, 1, &dt) || !rd_preserve_arg(c, call, 5, &preserve))
    return false;
  if (dt == TS_DT_NONE) dt = (ts_dtype)a->dtype;
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, normal ? "normal_kernel_cpu" : "check_uniform_bounds", dt);
  ts_rt_tensor *t = preserve ? rd_new_preserve(c, a, dt) : rd_new_like(c, a, dt);
  if (!t) return false;
  if (normal) rd_normal_fill(c, t, 0.0, 1.0);
  else rd_uniform_(c, t, 0.0, 1.0);
  return rd_put(call, t);
}

static bool rd_k_rand_like(ts_rt_ctx *c, ts_rt_call *call) { return rd_like_common(c, call, false); }
static bool rd_k_randn_like(ts_rt_ctx *c, ts_rt_call *call) { return rd_like_common(c, call, true); }

/* randint([low,] high, size, [generator], dtype=int64, ...) */
static bool rd_randint_common(ts_rt_ctx *c, ts_rt_call *call, bool low, bool gen) {
  int64_t lo = 0, hi;
  uint32_t i = 0;
  if (low && !ts_rt_arg_int(c, call, i++, &lo)) return false;
  if (!ts_rt_arg_int(c, call, i++, &hi)) return false;
  uint32_t size_i = i++;
  ts_dtype dt;
  if ((gen && !rd_no_generator(c, call, i++)) || !rd_factory(c, call, i, &dt)) return false;
  if (dt == TS_DT_NONE) dt = TS_DT_INT64;
  ts_rt_tensor *t = rd_new_sized(c, call, size_i, dt);
  if (!t) return false;
  if (!rd_random_from_to(c, t, lo, hi)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

static bool rd_k_randint(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_common(c, call, false, false); }
static bool rd_k_randint_g(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_common(c, call, false, true); }
static bool rd_k_randint_low(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_common(c, call, true, false); }
static bool rd_k_randint_low_g(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_common(c, call, true, true); }

/* randint_like(self, [low,] high, dtype, ...) */
static bool rd_randint_like_common(ts_rt_ctx *c, ts_rt_call *call, bool low) {
  ts_rt_tensor *a;
  int64_t lo = 0, hi;
  uint32_t i = 1;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || (low && !ts_rt_arg_int(c, call, i++, &lo)) ||
      !ts_rt_arg_int(c, call, i++, &hi))
    return false;
  ts_dtype dt;
  bool preserve;
  if (!rd_factory(c, call, i, &dt) || !rd_preserve_arg(c, call, i + 4, &preserve)) return false;
  ts_rt_tensor *t = preserve ? rd_new_preserve(c, a, dt) : rd_new_like(c, a, dt);
  if (!t) return false;
  if (!rd_random_from_to(c, t, lo, hi)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

static bool rd_k_randint_like(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_like_common(c, call, false); }
static bool rd_k_randint_like_low(ts_rt_ctx *c, ts_rt_call *call) { return rd_randint_like_common(c, call, true); }

/* randperm(n, [generator], dtype=int64, ...): Fisher-Yates over 0..n-1,
 * each swap partner a 32-bit draw modulo what is left (PyTorch's order;
 * a 64-bit draw per element, the inside-out form, for n from 2^32 / 20). */
static bool rd_randperm_common(ts_rt_ctx *c, ts_rt_call *call, bool gen) {
  int64_t n;
  ts_dtype dt;
  if (!ts_rt_arg_int(c, call, 0, &n) || (gen && !rd_no_generator(c, call, 1)) || !rd_factory(c, call, gen ? 2 : 1, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_INT64;
  if (n < 0) return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)n,
                               (long long)n);
  if (dt == TS_DT_BOOL) return rd_not_impl(c, "randperm", dt);
  ts_rt_tensor *t = ts_rt_tensor_new(c, TS_DT_INT64, 1, &n, false);
  if (!t) return false;
  int64_t *r = ts_rt_tensor_data(t);
  if (n < (int64_t)(UINT32_MAX / 20)) {
    for (int64_t i = 0; i < n; i++) r[i] = i;
    for (int64_t i = 0; i < n - 1; i++) {
      int64_t z = (int64_t)(ts_rt_gen_u32(c) % (uint64_t)(n - i));
      int64_t s = r[i];
      r[i] = r[z + i];
      r[z + i] = s;
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      int64_t z = (int64_t)(ts_rt_gen_u64(c) % (uint64_t)(i + 1));
      r[i] = r[z];
      r[z] = i;
    }
  }
  if (dt != TS_DT_INT64) {
    ts_rt_tensor *u = ts_rt_tensor_to_dtype(c, t, dt);
    ts_rt_tensor_release(t);
    t = u;
  }
  return rd_put(call, t);
}

static bool rd_k_randperm(ts_rt_ctx *c, ts_rt_call *call) { return rd_randperm_common(c, call, false); }
static bool rd_k_randperm_g(ts_rt_ctx *c, ts_rt_call *call) { return rd_randperm_common(c, call, true); }

/* ---------------------------------------------------------------- normal */

/* A contiguous float64 copy of a broadcast to out's shape. */
static ts_rt_tensor *rd_expand_f64(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *out) {
  ts_rt_tensor *e = ts_rt_tensor_new(c, TS_DT_FLOAT64, out->ndim, out->sizes, false);
  if (e && !ts_rt_tensor_copy_(c, e, a)) {
    ts_rt_tensor_release(e);
    return NULL;
  }
  return e;
}

/* std >= 0 everywhere (CHECK_NORMAL_TENSOR_STD). */
static bool rd_std_ok(ts_rt_ctx *c, const ts_rt_tensor *std) {
  ts_rt_tensor *s = ts_rt_tensor_to_dtype(c, std, TS_DT_FLOAT64);
  if (!s) return false;
  const double *v = ts_rt_tensor_data(s);
  bool ok = true;
  for (int64_t i = 0, n = ts_rt_tensor_numel(s); i < n && ok; i++) ok = v[i] >= 0.0;
  ts_rt_tensor_release(s);
  return ok || ts_rt_fail(c, "normal expects all elements of std >= 0.0");
}

/* out = out * std + mean elementwise (either may be NULL: a number, the
 * identity), each step rounded to out's dtype as PyTorch's mul_ then add_. */
static bool rd_scale_shift(ts_rt_ctx *c, ts_rt_tensor *out, const ts_rt_tensor *std, const ts_rt_tensor *mean,
                           double mean_num) {
  ts_dtype dt = (ts_dtype)out->dtype;
  ts_rt_tensor *s = std ? rd_expand_f64(c, std, out) : NULL, *m = mean ? rd_expand_f64(c, mean, out) : NULL;
  if ((std && !s) || (mean && !m)) {
    if (s) ts_rt_tensor_release(s);
    if (m) ts_rt_tensor_release(m);
    return false;
  }
  char *o = ts_rt_tensor_data(out);
  size_t es = ts_dtype_size(dt);
  const double *sv = s ? ts_rt_tensor_data(s) : NULL, *mv = m ? ts_rt_tensor_data(m) : NULL;
  double mn = rd_round(dt, mean_num);
  for (int64_t i = 0, n = ts_rt_tensor_numel(out); i < n; i++) {
    double v = ts_rt_load_f64(o + (size_t)i * es, dt);
    if (sv) v = rd_round(dt, v * sv[i]);
    v = rd_round(dt, v + (mv ? mv[i] : mn));
    ts_rt_store_f64(o + (size_t)i * es, dt, v);
  }
  if (s) ts_rt_tensor_release(s);
  if (m) ts_rt_tensor_release(m);
  return true;
}

/* normal.Tensor_float(mean, std=1, *, generator): normal_(0, std) + mean */
static bool rd_k_normal_tf(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *mean;
  double std;
  if (!ts_rt_arg_tensor(c, call, 0, &mean) || !ts_rt_arg_double(c, call, 1, &std) || !rd_no_generator(c, call, 2))
    return false;
  if (!(std >= 0.0)) return ts_rt_fail(c, "normal expects std >= 0.0, but found std %g", std);
  ts_rt_tensor *t = rd_new_like(c, mean, TS_DT_NONE);
  if (!t) return false;
  if (!rd_normal_(c, t, 0.0, std) || !rd_scale_shift(c, t, NULL, mean, 0.0)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* normal.float_Tensor(mean, std, *, generator): normal_(0, 1) * std + mean */
static bool rd_k_normal_ft(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *std;
  double mean;
  if (!ts_rt_arg_double(c, call, 0, &mean) || !ts_rt_arg_tensor(c, call, 1, &std) || !rd_no_generator(c, call, 2))
    return false;
  if (!rd_std_ok(c, std)) return false;
  ts_rt_tensor *t = rd_new_like(c, std, TS_DT_NONE);
  if (!t) return false;
  if (!rd_normal_(c, t, 0.0, 1.0) || !rd_scale_shift(c, t, std, NULL, mean)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* normal.Tensor_Tensor(mean, std, *, generator): of the broadcast shape,
 * in mean's dtype. */
static bool rd_k_normal_tt(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *mean, *std;
  if (!ts_rt_arg_tensor(c, call, 0, &mean) || !ts_rt_arg_tensor(c, call, 1, &std) || !rd_no_generator(c, call, 2))
    return false;
  if (!rd_std_ok(c, std)) return false;
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd;
  if (!ts_rt_broadcast_shapes(c, mean->ndim, mean->sizes, std->ndim, std->sizes, &nd, shape)) return false;
  ts_rt_tensor *t = ts_rt_tensor_new(c, (ts_dtype)mean->dtype, nd, shape, false);
  if (!t) return false;
  if (!rd_normal_(c, t, 0.0, 1.0) || !rd_scale_shift(c, t, std, mean, 0.0)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* normal.float_float(mean, std, size, *, generator, dtype, ...) */
static bool rd_k_normal_ff(ts_rt_ctx *c, ts_rt_call *call) {
  double mean, std;
  ts_dtype dt;
  if (!ts_rt_arg_double(c, call, 0, &mean) || !ts_rt_arg_double(c, call, 1, &std) || !rd_no_generator(c, call, 3) ||
      !rd_factory(c, call, 4, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  ts_rt_tensor *t = rd_new_sized(c, call, 2, dt);
  if (!t) return false;
  if (!rd_normal_(c, t, mean, std)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* ------------------------------------------------- in place by nature */

static bool rd_k_normal_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double mean, std;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &mean) ||
      !ts_rt_arg_double(c, call, 2, &std) || !rd_no_generator(c, call, 3) || !rd_normal_(c, t, mean, std))
    return false;
  return rd_put_self(call, t);
}

static bool rd_k_uniform_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double from, to;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &from) ||
      !ts_rt_arg_double(c, call, 2, &to) || !rd_no_generator(c, call, 3) || !rd_uniform_(c, t, from, to))
    return false;
  return rd_put_self(call, t);
}

/* exponential_, geometric_, log_normal_, cauchy_: self and one or two
 * float parameters. */
static bool rd_k_exponential_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double l;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &l) || !rd_no_generator(c, call, 2))
    return false;
  if (!(l >= 0.0)) return ts_rt_fail(c, "exponential_ expects lambda >= 0.0, but found lambda=%g", l);
  if (!ts_rt_dtype_is_float((ts_dtype)t->dtype)) return rd_not_impl(c, "exponential_cpu", (ts_dtype)t->dtype);
  rd_params q = {.a = l};
  rd_each(c, t, rd_el_exponential, &q);
  return rd_put_self(call, t);
}

static bool rd_k_geometric_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double p;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &p) || !rd_no_generator(c, call, 2))
    return false;
  if (!(p > 0 && p < 1)) return ts_rt_fail(c, "geometric_ expects p to be in (0, 1), but got p=%g", p);
  if (t->dtype == TS_DT_BOOL) return rd_not_impl(c, "geometric_cpu", TS_DT_BOOL);
  rd_params q = {.a = p};
  rd_each(c, t, rd_el_geometric, &q);
  return rd_put_self(call, t);
}

static bool rd_k_log_normal_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double mean, std;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &mean) ||
      !ts_rt_arg_double(c, call, 2, &std) || !rd_no_generator(c, call, 3))
    return false;
  if (!(std > 0.0)) return ts_rt_fail(c, "log_normal_ expects std > 0.0, but found std=%g", std);
  if (!ts_rt_dtype_is_float((ts_dtype)t->dtype)) return rd_not_impl(c, "log_normal_cpu", (ts_dtype)t->dtype);
  rd_params q = {.a = mean, .b = std};
  rd_each(c, t, rd_el_log_normal, &q);
  return rd_put_self(call, t);
}

static bool rd_k_cauchy_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double median, sigma;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &median) ||
      !ts_rt_arg_double(c, call, 2, &sigma) || !rd_no_generator(c, call, 3))
    return false;
  if (!ts_rt_dtype_is_float((ts_dtype)t->dtype)) return rd_not_impl(c, "cauchy_cpu", (ts_dtype)t->dtype);
  rd_params q = {.a = median, .b = sigma};
  rd_each(c, t, rd_el_cauchy, &q);
  return rd_put_self(call, t);
}

/* random_.from(self, from, to?, *, generator); to None: up to the largest
 * value the dtype holds (2^digits for floating dtypes), inclusive. */
static bool rd_k_random_from(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  int64_t from, to = 0;
  bool have_to;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_int(c, call, 1, &from) ||
      !ts_rt_arg_opt_int(c, call, 2, &to, &have_to) || !rd_no_generator(c, call, 3))
    return false;
  if (have_to) {
    if (!rd_random_from_to(c, t, from, to)) return false;
    return rd_put_self(call, t);
  }
  ts_dtype dt = (ts_dtype)t->dtype;
  int64_t to_inc;
  switch (dt) {
  case TS_DT_BOOL: to_inc = 1; break;
  case TS_DT_UINT8: to_inc = 255; break;
  case TS_DT_INT8: to_inc = 127; break;
  case TS_DT_INT16: to_inc = INT16_MAX; break;
  case TS_DT_INT32: to_inc = INT32_MAX; break;
  case TS_DT_INT64: to_inc = INT64_MAX; break;
  default: to_inc = (int64_t)1 << rd_digits(dt); break;
  }
  if (from == INT64_MIN) {
    /* the full 64-bit range: a 64-bit draw as int64 */
    if (dt != TS_DT_INT64 && dt != TS_DT_FLOAT64 && dt != TS_DT_FLOAT32 && dt != TS_DT_BFLOAT16)
      return ts_rt_fail(c, "random_from_to_kernel_cpu handles only int64, double, float and bfloat16");
    rd_each(c, t, rd_el_full64, NULL);
    return rd_put_self(call, t);
  }
  if (!(from < to_inc))
    return ts_rt_fail(c, "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                         "dtype, but got from=%lld > to_inc=%lld",
                      (long long)from, (long long)to_inc);
  rd_params q = {.range = (uint64_t)to_inc - (uint64_t)from + 1, .base = from};
  rd_each(c, t, rd_el_from_to, &q);
  return rd_put_self(call, t);
}

static bool rd_k_random_to(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  int64_t to;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_int(c, call, 1, &to) || !rd_no_generator(c, call, 2) ||
      !rd_random_from_to(c, t, 0, to))
    return false;
  return rd_put_self(call, t);
}

static bool rd_k_random(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !rd_no_generator(c, call, 1)) return false;
  rd_each(c, t, rd_el_random, NULL);
  return rd_put_self(call, t);
}

/* ------------------------------------------------------------- bernoulli */

/* self.bernoulli_(p) with a tensor p broadcast to self: p's dtype picks the
 * draw (float64: a 53-bit uniform, else a 24-bit one). */
typedef struct rd_bern_t {
  const double *p;
  int64_t k;
  bool wide;
} rd_bern_t;

static void rd_el_bern_t(ts_rt_ctx *c, void *arg, char *p, ts_dtype dt) {
  rd_bern_t *b = arg;
  double u = b->wide ? ts_rt_gen_uniform(c) : (double)ts_rt_gen_uniform_f(c);
  ts_rt_store_i64(p, dt, u < b->p[b->k++]);
}

static bool rd_bernoulli_tensor_(ts_rt_ctx *c, ts_rt_tensor *self, const ts_rt_tensor *p) {
  ts_dtype dt = (ts_dtype)self->dtype;
  if (dt == TS_DT_FLOAT16) return rd_not_impl(c, "bernoulli_tensor_cpu_self_", dt);
  if (!ts_rt_dtype_is_float((ts_dtype)p->dtype)) return rd_not_impl(c, "bernoulli_tensor_cpu_p_", (ts_dtype)p->dtype);
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd;
  if (!ts_rt_broadcast_shapes(c, self->ndim, self->sizes, p->ndim, p->sizes, &nd, shape)) return false;
  if (nd != self->ndim || memcmp(shape, self->sizes, (size_t)nd * sizeof *shape) != 0)
    return ts_rt_fail(c, "output with shape of self can't be broadcast to p's shape");
  ts_rt_tensor *pe = rd_expand_f64(c, p, self);
  if (!pe) return false;
  const double *pv = ts_rt_tensor_data(pe);
  bool ok = true;
  for (int64_t i = 0, n = ts_rt_tensor_numel(pe); i < n && ok; i++) ok = pv[i] >= 0 && pv[i] <= 1;
  if (!ok) {
    ts_rt_tensor_release(pe);
    return ts_rt_fail(c, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                         "improved?  If so, please report an enhancement request to PyTorch.)");
  }
  /* p is read in self's order: a contiguous self walks it in order; else
   * visit through a contiguous result copied back */
  ts_rt_tensor *dst = self;
  if (!ts_rt_tensor_is_contiguous(self) && !(dst = ts_rt_tensor_new(c, dt, self->ndim, self->sizes, false))) {
    ts_rt_tensor_release(pe);
    return false;
  }
  rd_bern_t b = {.p = pv, .k = 0, .wide = p->dtype == TS_DT_FLOAT64};
  rd_each(c, dst, rd_el_bern_t, &b);
  ts_rt_tensor_release(pe);
  if (dst != self) {
    ok = ts_rt_tensor_copy_(c, self, dst);
    ts_rt_tensor_release(dst);
  }
  return ok;
}

static bool rd_bernoulli_float_(ts_rt_ctx *c, ts_rt_tensor *self, double p) {
  if (!(p >= 0 && p <= 1)) return ts_rt_fail(c, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
  if (self->dtype == TS_DT_FLOAT16) return rd_not_impl(c, "bernoulli_scalar_cpu_", TS_DT_FLOAT16);
  ts_rt_bernoulli_fill(c, self, p);
  return true;
}

/* bernoulli(self, *, generator): self holds the probabilities */
static bool rd_k_bernoulli(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !rd_no_generator(c, call, 1)) return false;
  ts_rt_tensor *t = rd_new_like(c, a, TS_DT_NONE);
  if (!t) return false;
  if (!rd_bernoulli_tensor_(c, t, a)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* bernoulli.p(self, p, *, generator) */
static bool rd_k_bernoulli_p(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  double p;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_double(c, call, 1, &p) || !rd_no_generator(c, call, 2))
    return false;
  ts_rt_tensor *t = rd_new_like(c, a, TS_DT_NONE);
  if (!t) return false;
  if (!rd_bernoulli_float_(c, t, p)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

/* bernoulli.Tensor(self, p, *, generator) */
static bool rd_k_bernoulli_t(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *p;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &p) || !rd_no_generator(c, call, 2))
    return false;
  ts_rt_tensor *t = rd_new_like(c, a, TS_DT_NONE);
  if (!t) return false;
  if (!rd_bernoulli_tensor_(c, t, p)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return rd_put(call, t);
}

static bool rd_k_bernoulli_t_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t, *p;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_tensor(c, call, 1, &p) || !rd_no_generator(c, call, 2) ||
      !rd_bernoulli_tensor_(c, t, p))
    return false;
  return rd_put_self(call, t);
}

static bool rd_k_bernoulli_f_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *t;
  double p;
  if (!ts_rt_arg_tensor(c, call, 0, &t) || !ts_rt_arg_double(c, call, 1, &p) || !rd_no_generator(c, call, 2) ||
      !rd_bernoulli_float_(c, t, p))
    return false;
  return rd_put_self(call, t);
}

/* ----------------------------------------------------------- multinomial */

/* One row with replacement: the cumulative distribution in the
 * probabilities' dtype, normalised, a binary search per 53-bit uniform. */
static void rd_multi_replace(ts_rt_ctx *c, const double *p, int64_t n, ts_dtype dt, int64_t k, int64_t *out,
                             double *cum) {
  double sum = 0;
  for (int64_t j = 0; j < n; j++) {
    sum = rd_round(dt, sum + p[j]);
    cum[j] = sum;
  }
  for (int64_t j = 0; j < n; j++) cum[j] = rd_round(dt, cum[j] / sum);
  cum[n - 1] = 1;
  for (int64_t s = 0; s < k; s++) {
    double u = ts_rt_gen_uniform(c);
    int64_t lo = 0, hi = n;
    while (hi - lo > 0) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cum[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    out[s] = lo;
  }
}

/* multinomial(self, num_samples, replacement=False, *, generator) */
static bool rd_k_multinomial(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a;
  int64_t k;
  bool repl;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_int(c, call, 1, &k) || !ts_rt_arg_bool(c, call, 2, &repl) ||
      !rd_no_generator(c, call, 3))
    return false;
  ts_dtype dt = (ts_dtype)a->dtype;
  if (a->ndim != 1 && a->ndim != 2) return ts_rt_fail(c, "prob_dist must be 1 or 2 dim");
  if (!ts_rt_dtype_is_float(dt))
    return ts_rt_fail(c, "multinomial only supports floating-point dtypes for input, got: %s", ts_rt_dtype_name(dt));
  if (k <= 0) return ts_rt_fail(c, "cannot sample n_sample <= 0 samples");
  int64_t n = a->sizes[a->ndim - 1], rows = a->ndim == 2 ? a->sizes[0] : 1;
  if (!repl && k > n) return ts_rt_fail(c, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  if (n > (1 << 24)) return ts_rt_fail(c, "number of categories cannot exceed 2^24");
  ts_rt_tensor *pf = ts_rt_tensor_to_dtype(c, a, TS_DT_FLOAT64);
  if (!pf) return false;
  const double *p = ts_rt_tensor_data(pf);
  int64_t total = rows * n;
  bool fast = !repl;
  /* the checks PyTorch makes before it draws (the fast path's over the
   * whole tensor, the other row by row) */
  const char *bad = NULL;
  for (int64_t r = 0; r < rows && !bad; r++) {
    double sum = 0;
    for (int64_t j = 0; j < n && !bad; j++) {
      double v = p[r * n + j];
      if (fast) {
        if (!(v >= 0) || v == INFINITY) bad = "probability tensor contains either `inf`, `nan` or element < 0";
      } else if (!(v >= 0)) {
        bad = v != v ? "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
                     : "invalid multinomial distribution (encountering probability entry < 0)";
      } else if (v == INFINITY) {
        bad = "invalid multinomial distribution (encountering probability entry = infinity or NaN)";
      }
      sum += v;
    }
    if (!bad && !(sum > 0)) bad = "invalid multinomial distribution (sum of probabilities <= 0)";
  }
  if (fast && bad && total > 0 && strncmp(bad, "invalid", 7) == 0) {
    /* the fast path reports a bad entry anywhere before a zero row */
    for (int64_t i = 0; i < total; i++)
      if (!(p[i] >= 0) || p[i] == INFINITY) bad = "probability tensor contains either `inf`, `nan` or element < 0";
  }
  if (bad) {
    ts_rt_tensor_release(pf);
    return ts_rt_fail(c, "%s", bad);
  }
  int64_t osz[2] = {rows, k};
  ts_rt_tensor *t = a->ndim == 2 ? ts_rt_tensor_new(c, TS_DT_INT64, 2, osz, false)
                                 : ts_rt_tensor_new(c, TS_DT_INT64, 1, &k, false);
  double *scratch = t ? ts_rt_malloc((size_t)(n ? n : 1) * sizeof *scratch) : NULL;
  if (!scratch) {
    if (t) ts_rt_tensor_release(t);
    ts_rt_tensor_release(pf);
    return t ? ts_rt_oom(c) : false;
  }
  int64_t *o = ts_rt_tensor_data(t);
  if (fast) {
    /* PyTorch draws the exponentials for the whole tensor first */
    double *q = ts_rt_malloc((size_t)(total ? total : 1) * sizeof *q);
    if (!q) {
      ts_rt_free(scratch);
      ts_rt_tensor_release(t);
      ts_rt_tensor_release(pf);
      return ts_rt_oom(c);
    }
    for (int64_t i = 0; i < total; i++) q[i] = rd_round(dt, -1.0 * log(1.0 - ts_rt_gen_uniform(c)));
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t j = 0; j < n; j++) scratch[j] = rd_round(dt, p[r * n + j] / q[r * n + j]);
      for (int64_t s = 0; s < k; s++) {
        int64_t best = -1;
        for (int64_t j = 0; j < n; j++)
          if (best < 0 || scratch[j] > scratch[best]) best = j;
        o[r * k + s] = best;
        scratch[best] = -INFINITY;
      }
    }
    ts_rt_free(q);
  } else {
    for (int64_t r = 0; r < rows; r++) rd_multi_replace(c, p + r * n, n, dt, k, o + r * k, scratch);
  }
  ts_rt_free(scratch);
  ts_rt_tensor_release(pf);
  return rd_put(call, t);
}

/* --------------------------------------------------------------- dropout */

ts_rt_tensor *ts_rt_dropout(ts_rt_ctx *c, ts_rt_tensor *x, double p, bool train, bool feature, bool alpha,
                            bool inplace) {
  if (!(p >= 0 && p <= 1)) return ts_rt_fail(c, "dropout probability has to be between 0 and 1, but got %g", p), NULL;
  int64_t n = ts_rt_tensor_numel(x);
  if (p == 0 || !train || n == 0) {
    ts_rt_tensor_retain(x);
    return x;
  }
  ts_dtype dt = (ts_dtype)x->dtype;
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, "bernoulli_scalar_cpu_", dt), NULL;
  if (feature && x->ndim < 2) return ts_rt_fail(c, "Feature dropout requires at least 2 dimensions in the input"), NULL;
  /* the noise: per element, or per (sample, channel) for feature dropout;
   * bernoulli_(1 - p) in x's dtype, then scaled as ATen's _dropout_impl */
  int64_t inner = 1;
  if (feature)
    for (int32_t d = 2; d < x->ndim; d++) inner *= x->sizes[d];
  int64_t nn = n / inner;
  double *noise = ts_rt_malloc((size_t)nn * sizeof *noise);
  ts_rt_tensor *xc = noise ? ts_rt_tensor_contiguous(c, x) : NULL;
  ts_rt_tensor *out = xc ? ts_rt_tensor_new(c, dt, x->ndim, x->sizes, false) : NULL;
  if (!out) {
    if (xc) ts_rt_tensor_release(xc);
    ts_rt_free(noise);
    return noise ? NULL : (ts_rt_oom(c), NULL);
  }
  const char *xv = ts_rt_tensor_data(xc);
  char *ov = ts_rt_tensor_data(out);
  size_t es = ts_dtype_size(dt);
  if (p == 1) {
    for (int64_t i = 0; i < n; i++) ts_rt_store_f64(ov + (size_t)i * es, dt, ts_rt_load_f64(xv + (size_t)i * es, dt) * 0.0);
  } else {
    double keep = 1.0 - p;
    for (int64_t i = 0; i < nn; i++) noise[i] = ts_rt_gen_uniform(c) < keep ? 1.0 : 0.0;
    /* the scalars as a float tensor's ops take them: rounded to dt */
    double aa = 0, sc = 0, shift = 0;
    if (alpha) {
      const double a_const = 1.7580993408473766;
      double a = 1.0 / sqrt((a_const * a_const * p + 1) * (1 - p));
      aa = rd_round(dt, a_const * a);
      shift = rd_round(dt, a_const * a * p);
      sc = rd_round(dt, a);
    } else {
      sc = rd_round(dt, 1.0 / rd_round(dt, keep));
    }
    for (int64_t i = 0; i < n; i++) {
      double v = ts_rt_load_f64(xv + (size_t)i * es, dt), m = noise[i / inner], r;
      if (alpha) {
        double b = rd_round(dt, rd_round(dt, (m - 1) * aa) + shift);
        r = rd_round(dt, rd_round(dt, v * rd_round(dt, m * sc)) + b);
      } else {
        r = rd_round(dt, v * (m * sc));
      }
      ts_rt_store_f64(ov + (size_t)i * es, dt, r);
    }
  }
  ts_rt_free(noise);
  ts_rt_tensor_release(xc);
  if (!inplace) return out;
  bool ok = ts_rt_tensor_copy_(c, x, out);
  ts_rt_tensor_release(out);
  if (!ok) return NULL;
  ts_rt_tensor_retain(x);
  return x;
}

/* alpha_dropout(_) and feature_alpha_dropout(_) (input, p, train) */
static bool rd_alpha_dropout_common(ts_rt_ctx *c, ts_rt_call *call, bool feature, bool inplace) {
  ts_rt_tensor *x;
  double p;
  bool train;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_double(c, call, 1, &p) || !ts_rt_arg_bool(c, call, 2, &train))
    return false;
  return rd_put(call, ts_rt_dropout(c, x, p, train, feature, true, inplace));
}

static bool rd_k_alpha_dropout(ts_rt_ctx *c, ts_rt_call *call) { return rd_alpha_dropout_common(c, call, false, false); }
static bool rd_k_alpha_dropout_(ts_rt_ctx *c, ts_rt_call *call) { return rd_alpha_dropout_common(c, call, false, true); }
static bool rd_k_feature_alpha_dropout(ts_rt_ctx *c, ts_rt_call *call) {
  return rd_alpha_dropout_common(c, call, true, false);
}
static bool rd_k_feature_alpha_dropout_(ts_rt_ctx *c, ts_rt_call *call) {
  return rd_alpha_dropout_common(c, call, true, true);
}

/* ----------------------------------------------------------------- rrelu */

/* rrelu(self, lower, upper, training, generator): in training a slope
 * drawn per non-positive element (a 53-bit uniform in [lower, upper), the
 * bounds and the slope rounded to self's dtype's opmath type), in order;
 * else leaky_relu with the mean slope. */
static bool rd_k_rrelu(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x;
  double lo, hi;
  bool train;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_double(c, call, 1, &lo) || !ts_rt_arg_double(c, call, 2, &hi) ||
      !ts_rt_arg_bool(c, call, 3, &train) || !rd_no_generator(c, call, 4))
    return false;
  ts_dtype dt = (ts_dtype)x->dtype;
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, train ? "rrelu_with_noise_out_cpu" : "leaky_relu_cpu", dt);
  if (train && !(lo <= hi))
    return ts_rt_fail(c, "Lower bound should be less than or equal to the upper bound");
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  ts_rt_tensor *out = xc ? ts_rt_tensor_new(c, dt, x->ndim, x->sizes, false) : NULL;
  if (!out) {
    if (xc) ts_rt_tensor_release(xc);
    return false;
  }
  const char *xv = ts_rt_tensor_data(xc);
  char *ov = ts_rt_tensor_data(out);
  size_t es = ts_dtype_size(dt);
  double slope = rd_round(dt, (lo + hi) / 2);
  /* training draws between the bounds as opmath_t (float below float64) */
  double flo = dt == TS_DT_FLOAT64 ? lo : (float)lo, fhi = dt == TS_DT_FLOAT64 ? hi : (float)hi;
  for (int64_t i = 0, n = ts_rt_tensor_numel(xc); i < n; i++) {
    double v = ts_rt_load_f64(xv + (size_t)i * es, dt);
    if (train && v <= 0) v *= rd_round(dt, ts_rt_gen_uniform(c) * (fhi - flo) + flo);
    else if (!train && !(v > 0)) v *= slope;
    ts_rt_store_f64(ov + (size_t)i * es, dt, v);
  }
  ts_rt_tensor_release(xc);
  return rd_put(call, out);
}

/* ------------------------------------------------- fractional max pool */

/* The window starts of one dimension (ATen's generate_intervals): from
 * the plane's sample u in [0, 1), in the input's dtype's arithmetic. */
static int64_t rd_trunc_int(double v) { return v > -2147483648.0 && v < 2147483648.0 ? (int64_t)(int32_t)v : -1; }

/* False if a window would leave the input (samples outside [0, 1)). */
static bool rd_frac_intervals(ts_dtype dt, double u, int64_t in, int64_t out, int64_t pool, int64_t *seq) {
  if (out > 1) {
    double alpha = rd_round(dt, rd_round(dt, (double)(in - pool)) / rd_round(dt, (double)(out - 1)));
    for (int64_t i = 0; i < out - 1; i++)
      seq[i] = rd_trunc_int(rd_round(dt, rd_round(dt, (double)i + u) * alpha)) - rd_trunc_int(rd_round(dt, u * alpha));
  }
  if (out > 0) seq[out - 1] = in - pool;
  for (int64_t i = 0; i < out; i++)
    if (seq[i] < 0 || seq[i] > in - pool) return false;
  return true;
}

/* fractional_max_pool2d/3d(self, kernel_size, output_size, random_samples):
 * per plane, windows placed by its samples ([N, C, nd]: the last spatial
 * dimension's first for 2-d, in order for 3-d), the maximum (NaN wins) and
 * its index within the plane. */
static bool rd_fractional_max_pool(ts_rt_ctx *c, ts_rt_call *call, int nd) {
  const char *name = nd == 2 ? "fractional_max_pool2d" : "fractional_max_pool3d";
  ts_rt_tensor *x, *rs;
  int64_t ks[3], os[3];
  uint32_t nk = 0, no = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, ks, 3, &nk, (uint32_t)nd) ||
      !ts_rt_arg_ints(c, call, 2, os, 3, &no, (uint32_t)nd) || !ts_rt_arg_tensor(c, call, 3, &rs))
    return false;
  if ((int)nk != nd)
    return ts_rt_fail(c, "%s: kernel_size must either be a single Int or tuple of %s Ints", name, nd == 2 ? "two" : "three");
  if ((int)no != nd)
    return ts_rt_fail(c, "%s: output_size must either be a single Int or tuple of %s Ints", name, nd == 2 ? "two" : "three");
  ts_dtype dt = (ts_dtype)x->dtype;
  if (x->ndim != nd + 1 && x->ndim != nd + 2) {
    ts_buf b = {0};
    for (int32_t d = 0; d < x->ndim; d++) ts_buf_printf(&b, "%s%lld", d ? ", " : "", (long long)x->sizes[d]);
    ts_rt_fail(c, "%s(): Expected %dD or %dD tensor, but got: [%s]", name, nd + 1, nd + 2, b.data ? b.data : "");
    ts_buf_free(&b);
    return false;
  }
  if (!ts_rt_dtype_is_float(dt)) return rd_not_impl(c, name, dt);
  bool batched = x->ndim == nd + 2;
  int64_t nb = batched ? x->sizes[0] : 1, planes = x->sizes[batched ? 1 : 0], in[3], inplane = 1, outplane = 1;
  for (int d = 0; d < nd; d++) {
    in[d] = x->sizes[x->ndim - nd + d];
    if (in[d] <= 0 || planes <= 0)
      return ts_rt_fail(c, "%s(): Expected input to have non-zero size for non-batch dimensions", name);
    if (ks[d] <= 0 || os[d] < 0) return ts_rt_fail(c, "%s(): kernel_size and output_size must be positive", name);
    inplane *= in[d];
  }
  static const char *const dim_names[3][3] = {{"height", "width", ""}, {"time", "height", "width"}};
  /* ATen's 3-d check is strict (a window must not end at the last element) */
  for (int d = 0; d < nd; d++) {
    if (ks[d] > in[d] || os[d] > in[d] || (nd == 2 ? os[d] + ks[d] - 1 > in[d] : os[d] + ks[d] - 1 >= in[d]))
      return ts_rt_fail(c, "%s(): pool %s %lld too large relative to input %s %lld",
                        nd == 2 ? name : "fractional_max_pool3d_out", dim_names[nd - 2][d], (long long)ks[d],
                        dim_names[nd - 2][d], (long long)in[d]);
    outplane *= os[d];
  }
  if (rs->ndim != 3 || rs->sizes[0] < nb || rs->sizes[1] < planes || rs->sizes[2] < nd)
    return ts_rt_fail(c, "%s(): random_samples must be of shape [%lld, %lld, %d]", name, (long long)nb,
                      (long long)planes, nd);
  int64_t osz[5];
  int32_t ond = x->ndim;
  for (int32_t d = 0; d < ond - nd; d++) osz[d] = x->sizes[d];
  for (int d = 0; d < nd; d++) osz[ond - nd + d] = os[d];
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x), *sc = xc ? ts_rt_tensor_to_dtype(c, rs, TS_DT_FLOAT64) : NULL;
  ts_rt_tensor *out = sc ? ts_rt_tensor_new(c, dt, ond, osz, false) : NULL;
  ts_rt_tensor *idx = out ? ts_rt_tensor_new(c, TS_DT_INT64, ond, osz, false) : NULL;
  int64_t maxo = os[0] > os[1] ? os[0] : os[1];
  if (nd == 3 && os[2] > maxo) maxo = os[2];
  int64_t *seq = idx ? ts_rt_malloc((size_t)(3 * (maxo ? maxo : 1)) * sizeof *seq) : NULL;
  if (!seq) {
    if (idx) ts_rt_tensor_release(idx);
    if (out) ts_rt_tensor_release(out);
    if (sc) ts_rt_tensor_release(sc);
    if (xc) ts_rt_tensor_release(xc);
    return idx ? ts_rt_oom(c) : false;
  }
  const char *xv = ts_rt_tensor_data(xc);
  const double *sv = ts_rt_tensor_data(sc);
  char *ov = ts_rt_tensor_data(out);
  int64_t *iv = ts_rt_tensor_data(idx);
  size_t es = ts_dtype_size(dt);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t pl = 0; pl < planes; pl++) {
      const double *u = sv + (b * rs->sizes[1] + pl) * rs->sizes[2];
      int64_t *sq[3] = {seq, seq + maxo, seq + 2 * maxo};
      bool ok = true;
      for (int d = 0; d < nd && ok; d++) {
        /* 2-d: sample 0 places the width's windows, 1 the height's */
        double ud = nd == 2 ? u[1 - d] : u[d];
        ok = rd_frac_intervals(dt, rd_round(dt, ud), in[d], os[d], ks[d], sq[d]);
      }
      if (!ok) {
        ts_rt_free(seq);
        ts_rt_tensor_release(idx);
        ts_rt_tensor_release(out);
        ts_rt_tensor_release(sc);
        ts_rt_tensor_release(xc);
        return ts_rt_fail(c, "%s(): random_samples must lie in [0, 1)", name);
      }
      const char *xp = xv + (size_t)((b * planes + pl) * inplane) * es;
      int64_t obase = (b * planes + pl) * outplane;
      int64_t o0 = nd == 3 ? os[0] : 1, o1 = os[nd - 2], o2 = os[nd - 1];
      for (int64_t a = 0; a < o0; a++)
        for (int64_t h = 0; h < o1; h++)
          for (int64_t w = 0; w < o2; w++) {
            int64_t s0 = nd == 3 ? sq[0][a] : 0, s1 = sq[nd - 2][h], s2 = sq[nd - 1][w];
            int64_t k0 = nd == 3 ? ks[0] : 1, k1 = ks[nd - 2], k2 = ks[nd - 1];
            int64_t i1 = in[nd - 2], i2 = in[nd - 1];
            double best = -INFINITY;
            int64_t bi = (s0 * i1 + s1) * i2 + s2;
            for (int64_t t = s0; t < s0 + k0; t++)
              for (int64_t hh = s1; hh < s1 + k1; hh++)
                for (int64_t ww = s2; ww < s2 + k2; ww++) {
                  int64_t pi = (t * i1 + hh) * i2 + ww;
                  double v = ts_rt_load_f64(xp + (size_t)pi * es, dt);
                  if (v > best || v != v) {
                    best = v;
                    bi = pi;
                  }
                }
            int64_t oi = obase + (a * o1 + h) * o2 + w;
            ts_rt_store_f64(ov + (size_t)oi * es, dt, best);
            iv[oi] = bi;
          }
    }
  ts_rt_free(seq);
  ts_rt_tensor_release(sc);
  ts_rt_tensor_release(xc);
  call->out[0] = ts_iv_tensor(out);
  call->out[1] = ts_iv_tensor(idx);
  return true;
}

static bool rd_k_fractional_max_pool2d(ts_rt_ctx *c, ts_rt_call *call) { return rd_fractional_max_pool(c, call, 2); }
static bool rd_k_fractional_max_pool3d(ts_rt_ctx *c, ts_rt_call *call) { return rd_fractional_max_pool(c, call, 3); }

/* ----------------------------------------------------------- manual_seed */

static bool rd_k_manual_seed(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t seed;
  if (!ts_rt_arg_int(c, call, 0, &seed)) return false;
  ts_rt_gen_seed(c, (uint64_t)seed);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_random[] = {
    {"aten::alpha_dropout", rd_k_alpha_dropout},
    {"aten::alpha_dropout_", rd_k_alpha_dropout_},
    {"aten::bernoulli", rd_k_bernoulli},
    {"aten::bernoulli.p", rd_k_bernoulli_p},
    {"aten::bernoulli.Tensor", rd_k_bernoulli_t},
    {"aten::bernoulli_.Tensor", rd_k_bernoulli_t_},
    {"aten::bernoulli_.float", rd_k_bernoulli_f_},
    {"aten::cauchy_", rd_k_cauchy_},
    {"aten::exponential_", rd_k_exponential_},
    {"aten::feature_alpha_dropout", rd_k_feature_alpha_dropout},
    {"aten::feature_alpha_dropout_", rd_k_feature_alpha_dropout_},
    {"aten::fractional_max_pool2d", rd_k_fractional_max_pool2d},
    {"aten::fractional_max_pool3d", rd_k_fractional_max_pool3d},
    {"aten::geometric_", rd_k_geometric_},
    {"aten::log_normal_", rd_k_log_normal_},
    {"aten::manual_seed", rd_k_manual_seed},
    {"aten::multinomial", rd_k_multinomial},
    {"aten::normal.Tensor_float", rd_k_normal_tf},
    {"aten::normal.float_Tensor", rd_k_normal_ft},
    {"aten::normal.Tensor_Tensor", rd_k_normal_tt},
    {"aten::normal.float_float", rd_k_normal_ff},
    {"aten::normal_", rd_k_normal_},
    {"aten::rand", rd_k_rand},
    {"aten::rand.generator", rd_k_rand_g},
    {"aten::rand.names", rd_k_rand_n},
    {"aten::rand.generator_with_names", rd_k_rand_gn},
    {"aten::rand_like", rd_k_rand_like},
    {"aten::randint", rd_k_randint},
    {"aten::randint.generator", rd_k_randint_g},
    {"aten::randint.low", rd_k_randint_low},
    {"aten::randint.low_generator", rd_k_randint_low_g},
    {"aten::randint_like", rd_k_randint_like},
    {"aten::randint_like.low_dtype", rd_k_randint_like_low},
    {"aten::randn", rd_k_randn},
    {"aten::randn.generator", rd_k_randn_g},
    {"aten::randn.names", rd_k_randn_n},
    {"aten::randn.generator_with_names", rd_k_randn_gn},
    {"aten::randn_like", rd_k_randn_like},
    {"aten::random_.from", rd_k_random_from},
    {"aten::random_.to", rd_k_random_to},
    {"aten::random_", rd_k_random},
    {"aten::randperm", rd_k_randperm},
    {"aten::randperm.generator", rd_k_randperm_g},
    {"aten::rrelu", rd_k_rrelu},
    {"aten::uniform_", rd_k_uniform_},
    {NULL, NULL},
};
