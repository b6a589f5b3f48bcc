/* runtime/kernels/norm.c: batch_norm (running or batch statistics),
 * instance_norm, group_norm and layer_norm. Statistics are accumulated in
 * double; the normalisation y = x * scale + shift runs in float (double for
 * float64). */
#include <math.h>

#include "nn_util.h"

typedef struct nm_job {
  const void *x;
  void *y;
  const double *scale, *shift; /* per channel (per_n false) or per (n, c) */
  int64_t C, S;
  bool per_n;
  /* statistics: block i starts at x + base(i), nblk runs of len elements
   * `step` apart */
  int64_t nblk, len, step;
  int64_t (*base)(const struct nm_job *j, int64_t i);
  int64_t bdiv; /* parameter of base() */
  double *mean, *var; /* per block: mean, biased variance */
  /* layer norm: per-column weight and bias (NULL: none), rows of S */
  const void *lw, *lb;
  double eps;
} nm_job;

/* The hot loops are built for AVX-512, AVX2 and plain x86-64, chosen when
 * the library loads, as in conv.c. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define NM_HOT __attribute__((optimize("O3")))
#else
#define NM_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define NM_HOT
#endif

/* lanes of the float row sums: one AVX-512 vector */
#define NM_LANES 16

/* Mean and biased variance of a float row of n > 0: the sum, then the sum
 * of squares of the centred values, each in NM_LANES float lanes (vector
 * adds, as PyTorch's float kernel sums; a double per element cost ~3% of a
 * small transformer's run) with the lanes added in double. */
NM_HOT static void nm_row_stats_f32(const float *x, int64_t n, double *mean, double *var) {
  float acc[NM_LANES] = {0};
  int64_t nv = n / NM_LANES * NM_LANES;
  for (int64_t t = 0; t < nv; t += NM_LANES)
    for (int k = 0; k < NM_LANES; k++) acc[k] += x[t + k];
  double s = 0;
  for (int k = 0; k < NM_LANES; k++) s += acc[k];
  for (int64_t t = nv; t < n; t++) s += x[t];
  double m = s / (double)n;
  float mf = (float)m, sq[NM_LANES] = {0};
  for (int64_t t = 0; t < nv; t += NM_LANES)
    for (int k = 0; k < NM_LANES; k++) {
      float d = x[t + k] - mf;
      sq[k] += d * d;
    }
  double q = 0;
  for (int k = 0; k < NM_LANES; k++) q += sq[k];
  for (int64_t t = nv; t < n; t++) q += ((double)x[t] - mf) * ((double)x[t] - mf);
  /* the centring used mf, not m: E[(x - mf)^2] - (m - mf)^2 is the variance about m */
  double dm = m - (double)mf;
  *mean = m;
  double v = q / (double)n - dm * dm;
  *var = v > 0 ? v : 0;
}

/* The same for a double row, one element at a time in double. */
static void nm_row_stats_f64(const double *x, int64_t n, double *mean, double *var) {
  double s = 0, q = 0;
  for (int64_t t = 0; t < n; t++) s += x[t];
  double m = s / (double)n;
  for (int64_t t = 0; t < n; t++) q += (x[t] - m) * (x[t] - m);
  *mean = m;
  *var = q / (double)n;
}

#define NM_DEFINE(T, S_)                                                                                               \
  static void nm_apply_##S_(void *arg, int64_t b, int64_t e) {                                                        \
    const nm_job *j = arg;                                                                                            \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      int64_t k = j->per_n ? p : p % j->C;                                                                            \
      T sc = (T)j->scale[k], sh = (T)j->shift[k];                                                                     \
      const T *x = (const T *)j->x + p * j->S;                                                                        \
      T *y = (T *)j->y + p * j->S;                                                                                     \
      for (int64_t s = 0; s < j->S; s++) y[s] = x[s] * sc + sh;                                                       \
    }                                                                                                                 \
  }                                                                                                                   \
  static void nm_stats_##S_(void *arg, int64_t b, int64_t e) {                                                        \
    const nm_job *j = arg;                                                                                            \
    for (int64_t i = b; i < e; i++) {                                                                                 \
      const T *x = (const T *)j->x + j->base(j, i);                                                                   \
      double s = 0, q = 0, n = (double)(j->nblk * j->len);                                                            \
      for (int64_t r = 0; r < j->nblk; r++)                                                                           \
        for (int64_t t = 0; t < j->len; t++) s += (double)x[r * j->step + t];                                         \
      double m = n > 0 ? s / n : NAN;                                                                                 \
      for (int64_t r = 0; r < j->nblk; r++)                                                                           \
        for (int64_t t = 0; t < j->len; t++) {                                                                        \
          double d = (double)x[r * j->step + t] - m;                                                                  \
          q += d * d;                                                                                                 \
        }                                                                                                             \
      j->mean[i] = m;                                                                                                 \
      j->var[i] = n > 0 ? q / n : NAN;                                                                                \
    }                                                                                                                 \
  }                                                                                                                   \
  /* layer norm rows [b, e) of length S */                                                                            \
  static void nm_layer_##S_(void *arg, int64_t b, int64_t e) {                                                        \
    const nm_job *j = arg;                                                                                            \
    for (int64_t r = b; r < e; r++) {                                                                                 \
      const T *x = (const T *)j->x + r * j->S;                                                                        \
      T *y = (T *)j->y + r * j->S;                                                                                    \
      double m, var;                                                                                                  \
      nm_row_stats_##S_(x, j->S, &m, &var);                                                                           \
      T rstd = (T)(1.0 / sqrt(var + j->eps)), mm = (T)m;                                                              \
      const T *w = j->lw, *bb = j->lb;                                                                                \
      for (int64_t t = 0; t < j->S; t++) {                                                                            \
        T v = (x[t] - mm) * rstd;                                                                                     \
        if (w) v *= w[t];                                                                                             \
        if (bb) v += bb[t];                                                                                           \
        y[t] = v;                                                                                                     \
      }                                                                                                               \
    }                                                                                                                 \
  }

NM_DEFINE(float, f32)
NM_DEFINE(double, f64)

/* Block bases: per channel across the batch (batch norm), or contiguous
 * blocks of bdiv elements (instance / group norm). */
static int64_t nm_base_channel(const nm_job *j, int64_t i) { return i * j->S; }
static int64_t nm_base_block(const nm_job *j, int64_t i) { return i * j->bdiv; }

/* Loads a per-channel vector (C elements, any dtype and strides) into
 * double; NULL t gives `dflt`. */
static bool nm_load_vec(ts_rt_ctx *c, const ts_rt_tensor *t, int64_t C, double dflt, const char *name, double *out) {
  if (!t) {
    for (int64_t i = 0; i < C; i++) out[i] = dflt;
    return true;
  }
  int64_t n = ts_rt_tensor_numel(t);
  if (n != C) return ts_rt_fail(c, "%s should contain %lld elements not %lld", name, (long long)C, (long long)n);
  ts_rt_tensor *tc = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)t);
  if (!tc) return false;
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  for (int64_t i = 0; i < C; i++)
    out[i] = ts_rt_load_f64((const char *)ts_rt_tensor_data(tc) + (size_t)i * es, (ts_dtype)t->dtype);
  ts_rt_tensor_release(tc);
  return true;
}

/* Writes back a running statistic: r = (1 - m) * r + m * v. */
static bool nm_update_running(ts_rt_ctx *c, ts_rt_tensor *r, const double *v, int64_t C, double momentum) {
  ts_rt_tensor *tmp = ts_rt_tensor_new(c, TS_DT_FLOAT64, 1, &C, false);
  if (!tmp) return false;
  double *d = ts_rt_tensor_data(tmp);
  size_t es = ts_dtype_size((ts_dtype)r->dtype);
  for (int64_t i = 0; i < C; i++) {
    double old =
        ts_rt_load_f64((const char *)ts_rt_tensor_data(r) + i * r->strides[0] * (int64_t)es, (ts_dtype)r->dtype);
    d[i] = (1 - momentum) * old + momentum * v[i];
  }
  ts_rt_tensor *shaped = ts_rt_reshape(c, tmp, r->ndim, r->sizes);
  bool ok = shaped && ts_rt_tensor_copy_(c, r, shaped);
  if (shaped) ts_rt_tensor_release(shaped);
  ts_rt_tensor_release(tmp);
  return ok;
}

/* y = x * scale[k] + shift[k] over (N, C, S) planes of x. */
static ts_rt_tensor *nm_apply(ts_rt_ctx *c, const ts_rt_tensor *x, const double *scale, const double *shift, int64_t C,
                              int64_t S, bool per_n) {
  ts_dtype dt = (ts_dtype)x->dtype, wdt = nnu_work_dtype(dt);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  if (!xc) return NULL;
  ts_rt_tensor *y = ts_rt_tensor_new(c, wdt, x->ndim, x->sizes, false);
  if (y) {
    nm_job j = {0};
    j.x = ts_rt_tensor_data(xc), j.y = ts_rt_tensor_data(y), j.scale = scale, j.shift = shift;
    j.C = C, j.S = S, j.per_n = per_n;
    int64_t planes = S ? ts_rt_tensor_numel(x) / S : 0;
    ts_rt_parallel_for(c, planes, 32768 / (S ? S : 1) + 1, wdt == TS_DT_FLOAT64 ? nm_apply_f64 : nm_apply_f32, &j);
  }
  ts_rt_tensor_release(xc);
  return nnu_cast_owned(c, y, dt);
}

/* Statistics of `nstat` blocks of contiguous work-dtype data. */
static bool nm_stats(ts_rt_ctx *c, const ts_rt_tensor *x, nm_job *j, int64_t nstat) {
  ts_dtype wdt = nnu_work_dtype((ts_dtype)x->dtype);
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  if (!xc) return false;
  j->x = ts_rt_tensor_data(xc);
  int64_t work = j->nblk * j->len;
  ts_rt_parallel_for(c, nstat, 32768 / (work ? work : 1) + 1, wdt == TS_DT_FLOAT64 ? nm_stats_f64 : nm_stats_f32, j);
  ts_rt_tensor_release(xc);
  return true;
}

static bool nm_float_only(ts_rt_ctx *c, const char *op, ts_dtype dt) {
  if (dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_BFLOAT16) return true;
  return nnu_not_impl(c, op, dt);
}

/* Batch norm over x [N, C, *]: with batch statistics (updating the running
 * ones when given) or with the running statistics. save_mean and
 * save_invstd (C each, may be NULL) receive the batch mean and 1 /
 * sqrt(var + eps) in training (native_batch_norm's saved outputs). */
static ts_rt_tensor *nm_batch_norm(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *b,
                                   ts_rt_tensor *rm, ts_rt_tensor *rv, bool training, double momentum, double eps,
                                   double *save_mean, double *save_invstd) {
  if (x->ndim < 2) {
    /* as aten::batch_norm: C is x.size(1) */
    int64_t d;
    if (!ts_rt_wrap_dim(c, 1, x->ndim, &d)) return NULL;
  }
  if (!nm_float_only(c, "batch_norm", (ts_dtype)x->dtype)) return NULL;
  int64_t N = x->sizes[0], C = x->sizes[1], S = 1;
  for (int32_t i = 2; i < x->ndim; i++) S *= x->sizes[i];
  if (!training && (!rm || !rv))
    return ts_rt_fail(c, "running_mean and running_var must be defined in evaluation mode"), NULL;
  double *buf = ts_rt_malloc((size_t)(C ? C : 1) * 6 * sizeof(double));
  if (!buf) return ts_rt_oom(c), NULL;
  double *wv = buf, *bv = buf + C, *mean = buf + 2 * C, *var = buf + 3 * C, *scale = buf + 4 * C, *shift = buf + 5 * C;
  ts_rt_tensor *y = NULL;
  if (!nm_load_vec(c, w, C, 1, "weight", wv) || !nm_load_vec(c, b, C, 0, "bias", bv)) goto done;
  if (training) {
    if (rm && ts_rt_tensor_numel(rm) != C) {
      ts_rt_fail(c, "running_mean should contain %lld elements not %lld", (long long)C,
                 (long long)ts_rt_tensor_numel(rm));
      goto done;
    }
    if (rv && ts_rt_tensor_numel(rv) != C) {
      ts_rt_fail(c, "running_var should contain %lld elements not %lld", (long long)C,
                 (long long)ts_rt_tensor_numel(rv));
      goto done;
    }
    nm_job j = {0};
    j.S = S, j.nblk = N, j.len = S, j.step = C * S, j.base = nm_base_channel, j.mean = mean, j.var = var;
    if (!nm_stats(c, x, &j, C)) goto done;
    int64_t n = N * S;
    if (rm && !nm_update_running(c, rm, mean, C, momentum)) goto done;
    if (rv) {
      for (int64_t i = 0; i < C; i++) scale[i] = n > 1 ? var[i] * (double)n / (double)(n - 1) : NAN;
      if (!nm_update_running(c, rv, scale, C, momentum)) goto done;
    }
  } else {
    if (!nm_load_vec(c, rm, C, 0, "running_mean", mean) || !nm_load_vec(c, rv, C, 1, "running_var", var)) goto done;
  }
  for (int64_t i = 0; i < C; i++) {
    double r = 1.0 / sqrt(var[i] + eps);
    if (training && save_mean) save_mean[i] = mean[i], save_invstd[i] = r;
    scale[i] = wv[i] * r;
    shift[i] = bv[i] - mean[i] * wv[i] * r;
  }
  y = nm_apply(c, x, scale, shift, C, S, false);
done:
  ts_rt_free(buf);
  return y;
}

bool ts_rt_k_batch_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL, *rm = NULL, *rv = NULL;
  bool training = false;
  double momentum = 0, eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_opt_tensor(c, call, 1, &w) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &b) || !ts_rt_arg_opt_tensor(c, call, 3, &rm) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &rv) || !ts_rt_arg_bool(c, call, 5, &training) ||
      !ts_rt_arg_double(c, call, 6, &momentum) || !ts_rt_arg_double(c, call, 7, &eps))
    return false;
  if (ts_rt_tensor_numel(x) == 0) {
    /* as ATen's _batch_norm_impl_index: an empty input gives a copy,
     * weight[0] and bias[0] read (they must exist) */
    for (int k = 0; k < 2; k++) {
      const ts_rt_tensor *t = k ? b : w;
      if (t && (t->ndim == 0 || t->sizes[0] == 0))
        return ts_rt_fail(c, t->ndim ? "select(): index 0 out of range for tensor of size [0] at dimension 0"
                                     : "select() cannot be applied to a 0-dim tensor.");
    }
    return nnu_ret(call, ts_rt_clone(c, x));
  }
  return nnu_ret(call, nm_batch_norm(c, x, w, b, rm, rv, training, momentum, eps, NULL, NULL));
}

/* native_batch_norm(input, weight, bias, running_mean, running_var,
 * training, momentum, eps): (output, save_mean, save_invstd), the saved
 * ones [C] in training and empty in evaluation, as ATen's CPU kernel. */
bool ts_rt_k_native_batch_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL, *rm = NULL, *rv = NULL;
  bool training = false;
  double momentum = 0, eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_opt_tensor(c, call, 1, &w) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &b) || !ts_rt_arg_opt_tensor(c, call, 3, &rm) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &rv) || !ts_rt_arg_bool(c, call, 5, &training) ||
      !ts_rt_arg_double(c, call, 6, &momentum) || !ts_rt_arg_double(c, call, 7, &eps))
    return false;
  int64_t C = x->ndim >= 2 ? x->sizes[1] : 0, ns = training ? C : 0;
  ts_dtype dt = (ts_dtype)x->dtype;
  ts_rt_tensor *sm = ts_rt_tensor_new(c, dt, 1, &ns, true);
  ts_rt_tensor *si = sm ? ts_rt_tensor_new(c, dt, 1, &ns, true) : NULL;
  double *buf = si ? ts_rt_malloc((size_t)(C ? 2 * C : 1) * sizeof(double)) : NULL;
  ts_rt_tensor *y = NULL;
  if (si && !buf) ts_rt_oom(c);
  if (buf) y = nm_batch_norm(c, x, w, b, rm, rv, training, momentum, eps, buf, buf + C);
  for (int64_t i = 0; y && i < ns; i++) {
    ts_rt_store_f64((char *)ts_rt_tensor_data(sm) + (size_t)i * ts_dtype_size(dt), dt, buf[i]);
    ts_rt_store_f64((char *)ts_rt_tensor_data(si) + (size_t)i * ts_dtype_size(dt), dt, buf[C + i]);
  }
  ts_rt_free(buf);
  if (!y) {
    if (sm) ts_rt_tensor_release(sm);
    if (si) ts_rt_tensor_release(si);
    return false;
  }
  call->out[0] = ts_iv_tensor(y);
  call->out[1] = ts_iv_tensor(sm);
  call->out[2] = ts_iv_tensor(si);
  return true;
}

/* Normalises blocks of x [N, C, *]: `groups` groups of channels per
 * sample (instance norm: groups == C), then the per-channel affine. Also
 * gives the per-block mean and biased variance when asked. */
static ts_rt_tensor *nm_group_norm(ts_rt_ctx *c, const ts_rt_tensor *x, int64_t groups, const ts_rt_tensor *w,
                                   const ts_rt_tensor *b, double eps, double *out_mean, double *out_var) {
  int64_t N = x->sizes[0], C = x->sizes[1], S = 1;
  for (int32_t i = 2; i < x->ndim; i++) S *= x->sizes[i];
  int64_t Cg = C / groups, nst = N * groups;
  double *buf = ts_rt_malloc((size_t)(2 * C + 2 * nst + 2 * N * C + 1) * sizeof(double));
  if (!buf) return ts_rt_oom(c), NULL;
  double *wv = buf, *bv = wv + C, *mean = bv + C, *var = mean + nst, *scale = var + nst, *shift = scale + N * C;
  ts_rt_tensor *y = NULL;
  if (!nm_load_vec(c, w, C, 1, "weight", wv) || !nm_load_vec(c, b, C, 0, "bias", bv)) goto done;
  nm_job j = {0};
  j.S = S, j.nblk = 1, j.len = Cg * S, j.step = 0, j.base = nm_base_block, j.bdiv = Cg * S, j.mean = mean, j.var = var;
  if (!nm_stats(c, x, &j, nst)) goto done;
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      int64_t k = n * groups + ch / (Cg ? Cg : 1);
      double r = 1.0 / sqrt(var[k] + eps);
      scale[n * C + ch] = wv[ch] * r;
      shift[n * C + ch] = bv[ch] - mean[k] * wv[ch] * r;
    }
  if (out_mean) memcpy(out_mean, mean, (size_t)nst * sizeof(double));
  if (out_var) memcpy(out_var, var, (size_t)nst * sizeof(double));
  y = nm_apply(c, x, scale, shift, C, S, true);
done:
  ts_rt_free(buf);
  return y;
}

bool ts_rt_k_group_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  int64_t G = 0;
  double eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &G) || !ts_rt_arg_opt_tensor(c, call, 2, &w) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &b) || !ts_rt_arg_double(c, call, 4, &eps))
    return false;
  char sh[256];
  nnu_shape_str(sh, sizeof sh, x->ndim, x->sizes);
  if (x->ndim < 2)
    return ts_rt_fail(c, "Expected at least 2 dimensions for input tensor but received %d", (int)x->ndim);
  if (G <= 0 || x->sizes[1] % G)
    return ts_rt_fail(c,
                      "Expected number of channels in input to be divisible by num_groups, but got input of shape %s "
                      "and num_groups=%lld",
                      sh, (long long)G);
  if (w && (w->ndim != 1 || w->sizes[0] != x->sizes[1]))
    return ts_rt_fail(c, "Expected weight to be a vector of size equal to the number of channels in input, but got "
                         "weight of shape [%lld] and input of shape %s",
                      (long long)ts_rt_tensor_numel(w), sh);
  if (b && (b->ndim != 1 || b->sizes[0] != x->sizes[1]))
    return ts_rt_fail(c, "Expected bias to be a vector of size equal to the number of channels in input, but got bias "
                         "of shape [%lld] and input of shape %s",
                      (long long)ts_rt_tensor_numel(b), sh);
  if (!nm_float_only(c, "GroupNormKernelImpl", (ts_dtype)x->dtype)) return false;
  return nnu_ret(call, nm_group_norm(c, x, G, w, b, eps, NULL, NULL));
}

bool ts_rt_k_instance_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL, *rm = NULL, *rv = NULL;
  bool use_input_stats = false;
  double momentum = 0, eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_opt_tensor(c, call, 1, &w) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &b) || !ts_rt_arg_opt_tensor(c, call, 3, &rm) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &rv) || !ts_rt_arg_bool(c, call, 5, &use_input_stats) ||
      !ts_rt_arg_double(c, call, 6, &momentum) || !ts_rt_arg_double(c, call, 7, &eps))
    return false;
  if (!use_input_stats && (!rm || !rv))
    return ts_rt_fail(c, "Expected running_mean and running_var to be defined when use_input_stats is false");
  if (x->ndim < 2) return ts_rt_fail(c, "instance_norm: expected at least 2-d input");
  if (!nm_float_only(c, "batch_norm", (ts_dtype)x->dtype)) return false;
  if (!use_input_stats) return nnu_ret(call, nm_batch_norm(c, x, w, b, rm, rv, false, momentum, eps, NULL, NULL));
  int64_t N = x->sizes[0], C = x->sizes[1], S = 1;
  for (int32_t i = 2; i < x->ndim; i++) S *= x->sizes[i];
  double *st = NULL;
  if (rm || rv) {
    if (!(st = ts_rt_malloc((size_t)(3 * N * C + C + 1) * sizeof(double)))) return ts_rt_oom(c);
  }
  ts_rt_tensor *y = nm_group_norm(c, x, C, w, b, eps, st, st ? st + N * C : NULL);
  if (y && st) {
    /* running stats take the batch average of the per-instance ones */
    double *avg = st + 2 * N * C;
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
      ts_rt_tensor *r = pass ? rv : rm;
      if (!r) continue;
      for (int64_t ch = 0; ch < C; ch++) {
        double s = 0;
        for (int64_t n = 0; n < N; n++) {
          double v = st[pass * N * C + n * C + ch];
          if (pass) v = S > 1 ? v * (double)S / (double)(S - 1) : NAN;
          s += v;
        }
        avg[ch] = s / (double)N;
      }
      ok = nm_update_running(c, r, avg, C, momentum);
    }
    if (!ok) {
      ts_rt_tensor_release(y);
      y = NULL;
    }
  }
  ts_rt_free(st);
  return nnu_ret(call, y);
}

ts_rt_tensor *ts_rt_layer_norm(ts_rt_ctx *c, const ts_rt_tensor *x, int32_t nnorm, const ts_rt_tensor *weight,
                               const ts_rt_tensor *bias, double eps) {
  if (nnorm < 0 || nnorm > x->ndim) return ts_rt_fail(c, "layer_norm: bad normalized_shape"), NULL;
  if (!nm_float_only(c, "LayerNormKernelImpl", (ts_dtype)x->dtype)) return NULL;
  int64_t S = 1;
  for (int32_t i = x->ndim - nnorm; i < x->ndim; i++) S *= x->sizes[i];
  ts_dtype dt = (ts_dtype)x->dtype, wdt = nnu_work_dtype(dt);
  if (weight && ts_rt_tensor_numel(weight) != S) return ts_rt_fail(c, "layer_norm: weight has the wrong size"), NULL;
  if (bias && ts_rt_tensor_numel(bias) != S) return ts_rt_fail(c, "layer_norm: bias has the wrong size"), NULL;
  ts_rt_tensor *xc = nnu_contig_as(c, x, wdt);
  ts_rt_tensor *wc = xc && weight ? nnu_contig_as(c, weight, wdt) : NULL;
  ts_rt_tensor *bc = xc && bias ? nnu_contig_as(c, bias, wdt) : NULL;
  ts_rt_tensor *y = NULL;
  if (xc && (!weight || wc) && (!bias || bc)) y = ts_rt_tensor_new(c, wdt, x->ndim, x->sizes, false);
  if (y) {
    nm_job j = {0};
    j.x = ts_rt_tensor_data(xc), j.y = ts_rt_tensor_data(y), j.S = S, j.eps = eps;
    j.lw = wc ? ts_rt_tensor_data(wc) : NULL, j.lb = bc ? ts_rt_tensor_data(bc) : NULL;
    int64_t rows = S ? ts_rt_tensor_numel(x) / S : 0;
    ts_rt_parallel_for(c, rows, 32768 / (S ? S : 1) + 1, wdt == TS_DT_FLOAT64 ? nm_layer_f64 : nm_layer_f32, &j);
  }
  if (xc) ts_rt_tensor_release(xc);
  if (wc) ts_rt_tensor_release(wc);
  if (bc) ts_rt_tensor_release(bc);
  return nnu_cast_owned(c, y, dt);
}

bool ts_rt_k_layer_norm(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x = NULL, *w = NULL, *b = NULL;
  int64_t shape[TS_RT_MAX_DIMS];
  uint32_t ns = 0;
  double eps = 0;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_ints(c, call, 1, shape, TS_RT_MAX_DIMS, &ns, 0) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_opt_tensor(c, call, 3, &b) ||
      !ts_rt_arg_double(c, call, 4, &eps))
    return false;
  /* the shapes as text only for an error: this runs once per layer norm of every run */
  char ns_s[256], xs[256];
  if (ns == 0) {
    nnu_shape_str(ns_s, sizeof ns_s, (int32_t)ns, shape);
    return ts_rt_fail(c, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                         "element, but got normalized_shape = %s",
                      ns_s);
  }
  bool ok = (int32_t)ns <= x->ndim;
  for (uint32_t i = 0; ok && i < ns; i++) ok = x->sizes[x->ndim - (int32_t)ns + (int32_t)i] == shape[i];
  if (!ok) {
    char ss[300];
    nnu_shape_str(ns_s, sizeof ns_s, (int32_t)ns, shape);
    nnu_shape_str(xs, sizeof xs, x->ndim, x->sizes);
    snprintf(ss, sizeof ss, "[*");
    for (uint32_t i = 0; i < ns; i++) snprintf(ss + strlen(ss), sizeof ss - strlen(ss), ", %lld", (long long)shape[i]);
    snprintf(ss + strlen(ss), sizeof ss - strlen(ss), "]");
    return ts_rt_fail(c, "Given normalized_shape=%s, expected input with shape %s, but got input of size%s", ns_s, ss,
                      xs);
  }
  for (int k = 0; k < 2; k++) {
    const ts_rt_tensor *t = k ? b : w;
    bool same = t && t->ndim == (int32_t)ns;
    for (uint32_t i = 0; same && i < ns; i++) same = t->sizes[i] == shape[i];
    if (t && !same) {
      char ts_[256];
      nnu_shape_str(ts_, sizeof ts_, t->ndim, t->sizes);
      nnu_shape_str(ns_s, sizeof ns_s, (int32_t)ns, shape);
      return ts_rt_fail(c, "Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
                           "normalized_shape = %s",
                        k ? "bias" : "weight", k ? "bias" : "weight", ts_, ns_s);
    }
  }
  return nnu_ret(call, ts_rt_layer_norm(c, x, (int32_t)ns, w, b, eps));
}

/* native_layer_norm(input, normalized_shape, weight, bias, eps): (output,
 * mean, rstd), the statistics of each normalised row in the input's dtype,
 * shaped as the input with the normalised dims 1 (ATen's CPU kernel). */
bool ts_rt_k_native_layer_norm(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_k_layer_norm(c, call)) return false;
  ts_rt_tensor *x = call->in[0].u.t, *y = call->out[0].u.t;
  uint32_t ns = call->in[1].tag == TS_IV_LIST ? call->in[1].u.l->n : 0;
  double eps = call->in[4].tag == TS_IV_DOUBLE ? call->in[4].u.d : 0;
  int32_t axis = x->ndim - (int32_t)ns;
  int64_t sz[TS_RT_MAX_DIMS], S = 1, rows = 1;
  for (int32_t i = 0; i < x->ndim; i++) {
    sz[i] = i < axis ? x->sizes[i] : 1;
    if (i < axis) rows *= x->sizes[i];
    else S *= x->sizes[i];
  }
  ts_dtype dt = (ts_dtype)x->dtype, wdt = nnu_work_dtype(dt);
  ts_rt_tensor *m = ts_rt_tensor_new(c, dt, x->ndim, sz, false);
  ts_rt_tensor *r = m ? ts_rt_tensor_new(c, dt, x->ndim, sz, false) : NULL;
  ts_rt_tensor *xc = r ? nnu_contig_as(c, x, wdt) : NULL;
  if (!xc) {
    if (m) ts_rt_tensor_release(m);
    if (r) ts_rt_tensor_release(r);
    ts_rt_tensor_release(y);
    return false;
  }
  size_t es = ts_dtype_size(dt);
  for (int64_t i = 0; i < rows; i++) {
    double mean = NAN, var = NAN;
    if (S > 0 && wdt == TS_DT_FLOAT32) nm_row_stats_f32((const float *)ts_rt_tensor_data(xc) + i * S, S, &mean, &var);
    else if (S > 0) nm_row_stats_f64((const double *)ts_rt_tensor_data(xc) + i * S, S, &mean, &var);
    double rs = 1.0 / sqrt(var + eps);
    if (wdt == TS_DT_FLOAT32) mean = (float)mean, rs = (float)rs;
    ts_rt_store_f64((char *)ts_rt_tensor_data(m) + (size_t)i * es, dt, mean);
    ts_rt_store_f64((char *)ts_rt_tensor_data(r) + (size_t)i * es, dt, rs);
  }
  ts_rt_tensor_release(xc);
  call->out[1] = ts_iv_tensor(m);
  call->out[2] = ts_iv_tensor(r);
  return true;
}
