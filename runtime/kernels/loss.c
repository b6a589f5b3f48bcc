/* runtime/kernels/loss.c: the loss functions (l1, mse, smooth_l1, huber,
 * binary_cross_entropy(_with_logits), nll_loss and its 2-d and n-d forms,
 * cross_entropy_loss, kl_div, the margin losses, poisson_nll_loss,
 * cosine_embedding_loss, triplet_margin_loss, ctc_loss and _ctc_loss), the
 * distances (pairwise_distance, pdist), bilinear, and _infer_size (which
 * F.binary_cross_entropy calls), as PyTorch 1.13's CPU kernels compute them
 * (aten/src/ATen/native/Loss*.cpp, Distance.cpp, Linear.cpp; checks in
 * ATen's order and words).
 *
 * Reductions (the `int reduction` of the schemas: 0 none, 1 mean, 2 sum)
 * run through tensor_ops.h's mean and sum on the unreduced loss in the
 * result dtype, as ATen's apply_loss_reduction does; l1_loss is composed of
 * sub and abs as ATen composes it. The elementwise formulas and nll's
 * weighted sums are evaluated in float64 and rounded to the result dtype
 * once (ATen computes in the dtype itself: last-bit differences). CTC's
 * forward (alpha) recursion is ATen's, in float64; a target label outside
 * [0, classes) fails (ATen reads out of bounds). bilinear is one GEMM
 * (x2 against the weight viewed as [O * I1, I2]) and a dot per output. */
#include <cblas.h>
#include <math.h>

#include "nn_util.h"

enum { LS_NONE = 0, LS_MEAN = 1, LS_SUM = 2 };

#define LS_PI 3.14159265358979323846

/* ------------------------------------------------------------- helpers */

/* Takes over `loss`; the kernel's output after the reduction. */
static bool ls_reduce_ret(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *loss, int64_t red) {
  if (!loss) return false;
  if (red != LS_MEAN && red != LS_SUM) return nnu_ret(call, loss);
  ts_rt_tensor *r = red == LS_MEAN ? ts_rt_mean(c, loss, NULL, 0, false, TS_DT_NONE)
                                   : ts_rt_sum(c, loss, NULL, 0, false, TS_DT_NONE);
  ts_rt_tensor_release(loss);
  return nnu_ret(call, r);
}

/* New: t broadcast to `sizes`, as a contiguous float64 tensor. */
static ts_rt_tensor *ls_f64(ts_rt_ctx *c, const ts_rt_tensor *t, int32_t ndim, const int64_t *sizes) {
  ts_rt_tensor *e = ts_rt_expand(c, t, ndim, sizes);
  if (!e) return NULL;
  ts_rt_tensor *r = ts_rt_tensor_to_dtype(c, e, TS_DT_FLOAT64);
  ts_rt_tensor_release(e);
  return r;
}

/* The result dtype of n tensors (PyTorch's result_type); fails with
 * `"kname" not implemented for 'Long'` unless it is a floating one, or (a
 * NULL kname) takes float32 for integral operands, as the losses ATen
 * composes of ops that promote (x + a float margin, exp(x)) do. */
static ts_dtype ls_float_dtype(ts_rt_ctx *c, const char *kname, ts_rt_tensor *const *in, uint32_t n) {
  ts_iv ops[4];
  for (uint32_t k = 0; k < n && k < 4; k++) ops[k] = ts_iv_tensor(in[k]);
  ts_dtype dt = ts_rt_result_type(ops, n);
  if (!kname && ts_dtype_is_integral(dt, true)) return TS_DT_FLOAT32;
  if (!ts_dtype_is_float(dt)) {
    nnu_not_impl(c, kname, dt);
    return TS_DT_NONE;
  }
  return dt;
}

typedef double (*ls_fn)(const double *v, const double *p);

/* New: f over the broadcast of in[0..n) (n <= 4), elementwise in float64
 * (p: f's parameters), as a tensor of dtype dt. */
static ts_rt_tensor *ls_map(ts_rt_ctx *c, ts_rt_tensor *const *in, uint32_t n, ts_dtype dt, ls_fn f,
                            const double *p) {
  int32_t nd = in[0]->ndim;
  int64_t sz[TS_RT_MAX_DIMS];
  memcpy(sz, in[0]->sizes, (size_t)nd * sizeof *sz);
  for (uint32_t k = 1; k < n; k++) {
    int32_t nd2;
    int64_t sz2[TS_RT_MAX_DIMS];
    if (!ts_rt_broadcast_shapes(c, nd, sz, in[k]->ndim, in[k]->sizes, &nd2, sz2)) return NULL;
    nd = nd2;
    memcpy(sz, sz2, (size_t)nd * sizeof *sz);
  }
  ts_rt_tensor *b[4] = {NULL, NULL, NULL, NULL}, *o = NULL, *r = NULL;
  for (uint32_t k = 0; k < n; k++)
    if (!(b[k] = ls_f64(c, in[k], nd, sz))) goto done;
  o = ts_rt_tensor_new(c, TS_DT_FLOAT64, nd, sz, false);
  if (!o) goto done;
  int64_t numel = ts_rt_tensor_numel(o);
  double *od = numel ? ts_rt_tensor_data(o) : NULL;
  const double *bd[4] = {NULL, NULL, NULL, NULL};
  for (uint32_t k = 0; k < n; k++) bd[k] = numel ? ts_rt_tensor_data(b[k]) : NULL;
  for (int64_t i = 0; i < numel; i++) {
    double v[4];
    for (uint32_t k = 0; k < n; k++) v[k] = bd[k][i];
    od[i] = f(v, p);
  }
  r = dt == TS_DT_FLOAT64 ? (ts_rt_tensor_retain(o), o) : ts_rt_tensor_to_dtype(c, o, dt);
done:
  for (uint32_t k = 0; k < n; k++)
    if (b[k]) ts_rt_tensor_release(b[k]);
  if (o) ts_rt_tensor_release(o);
  return r;
}

/* The arguments (self, target, int reduction). */
static bool ls_args2(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **x, ts_rt_tensor **y, int64_t *red) {
  return ts_rt_arg_tensor(c, call, 0, x) && ts_rt_arg_tensor(c, call, 1, y) && ts_rt_arg_int(c, call, 2, red);
}

/* --------------------------------------------------- elementwise losses */

static double ls_f_sq(const double *v, const double *p) {
  (void)p;
  double d = v[0] - v[1];
  return d * d;
}
static double ls_f_smooth_l1(const double *v, const double *p) {
  double z = fabs(v[0] - v[1]);
  return z < p[0] ? 0.5 * z * z / p[0] : z - 0.5 * p[0];
}
static double ls_f_huber(const double *v, const double *p) {
  double z = fabs(v[0] - v[1]);
  return z < p[0] ? 0.5 * z * z : p[0] * (z - 0.5 * p[0]);
}
static double ls_f_soft_margin(const double *v, const double *p) {
  (void)p;
  return log1p(exp(-v[0] * v[1]));
}
static double ls_f_hinge(const double *v, const double *p) {
  double m = v[1] != 1 ? fmax(p[0] - v[0], 0) : 0;
  if (isnan(p[0] - v[0]) && v[1] != 1) m = NAN;
  return m + (v[1] != -1 ? v[0] : 0);
}
static double ls_f_margin_ranking(const double *v, const double *p) {
  double r = -v[2] * (v[0] - v[1]) + p[0];
  return isnan(r) ? r : fmax(r, 0);
}
static double ls_xlogy(double x, double y) {
  if (isnan(y)) return NAN;
  if (x == 0) return 0;
  return x * log(y);
}
static double ls_f_kl_div(const double *v, const double *p) {
  return p[0] != 0 ? exp(v[1]) * (v[1] - v[0]) : ls_xlogy(v[1], v[1]) - v[1] * v[0];
}
static double ls_f_poisson(const double *v, const double *p) {
  double x = v[0], t = v[1];
  double l = p[0] != 0 ? exp(x) - t * x : x - t * log(x + p[2]);
  if (p[1] != 0 && t > 1) l += t * log(t) - t + 0.5 * log(2 * LS_PI * t);
  return l;
}
static double ls_f_bce(const double *v, const double *p) {
  (void)p;
  double x = v[0], t = v[1];
  return (t - 1) * fmax(log1p(-x), -100) - t * fmax(log(x), -100);
}
static double ls_f_bce_logits(const double *v, const double *p) {
  double x = v[0], t = v[1];
  double lw = p[0] != 0 ? 1 + (v[2] - 1) * t : 1;
  /* -log_sigmoid(x) = max(-x, 0) + log1p(exp(-|x|)) */
  double nls = fmax(-x, 0) + log1p(exp(-fabs(x)));
  return (1 - t) * x + lw * nls;
}

/* aten::l1_loss: (self - target).abs(), reduced (ATen's composition). */
static bool ls_k_l1(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *y;
  int64_t red;
  if (!ls_args2(c, call, &x, &y, &red)) return false;
  ts_rt_tensor *d = ts_rt_binary_op(c, TS_PW_sub, x, y);
  if (!d) return false;
  ts_rt_tensor *a = ts_rt_unary_op(c, TS_PW_abs, d);
  ts_rt_tensor_release(d);
  return ls_reduce_ret(c, call, a, red);
}

/* The two-operand losses: self and target broadcast, one float parameter
 * at argument `parg` (-1: none). */
static bool ls_binary(ts_rt_ctx *c, ts_rt_call *call, const char *kname, ls_fn f, int parg, int red_arg) {
  ts_rt_tensor *in[2];
  int64_t red = LS_MEAN;
  double p[1] = {0};
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_int(c, call, (uint32_t)red_arg, &red) || (parg >= 0 && !ts_rt_arg_double(c, call, (uint32_t)parg, p)))
    return false;
  ts_dtype dt = ls_float_dtype(c, kname, in, 2);
  if (dt == TS_DT_NONE) return false;
  return ls_reduce_ret(c, call, ls_map(c, in, 2, dt, f, p), red);
}

/* ATen's in-place steps on an integral self (exp_, mul_) refuse */
static bool ls_int_self(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x;
  if (!ts_rt_arg_tensor(c, call, 0, &x)) return true;
  if (!ts_dtype_is_integral((ts_dtype)x->dtype, true)) return false;
  ts_rt_fail(c, "result type Float can't be cast to the desired output type %s", ts_rt_dtype_name(x->dtype));
  return true;
}

static bool ls_k_mse(ts_rt_ctx *c, ts_rt_call *call) { return ls_binary(c, call, "mse_cpu", ls_f_sq, -1, 2); }
static bool ls_k_soft_margin(ts_rt_ctx *c, ts_rt_call *call) {
  if (ls_int_self(c, call)) return false;
  return ls_binary(c, call, "exp_vml_cpu", ls_f_soft_margin, -1, 2);
}
/* hinge_embedding_loss(self, target, margin, reduction). An integral self
 * stays integral, the margin truncated: ATen's `margin - self` fills a
 * tensor like self with it. */
static bool ls_k_hinge(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[2];
  double p[1];
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_double(c, call, 2, p) || !ts_rt_arg_int(c, call, 3, &red))
    return false;
  ts_dtype sd = (ts_dtype)in[0]->dtype, dt;
  if (ts_dtype_is_integral(sd, false)) {
    dt = sd;
    p[0] = trunc(p[0]);
  } else if (ts_dtype_is_float(sd)) {
    dt = sd;
  } else {
    return nnu_not_impl(c, "clamp_min_scalar_cpu", sd);
  }
  return ls_reduce_ret(c, call, ls_map(c, in, 2, dt, ls_f_hinge, p), red);
}

static bool ls_k_smooth_l1(ts_rt_ctx *c, ts_rt_call *call) {
  double beta = 1;
  if (!ts_rt_arg_double(c, call, 3, &beta)) return false;
  if (beta < 0) return ts_rt_fail(c, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return ls_k_l1(c, call);
  return ls_binary(c, call, "smooth_l1_cpu", ls_f_smooth_l1, 3, 2);
}

static bool ls_k_huber(ts_rt_ctx *c, ts_rt_call *call) {
  double delta = 1;
  if (!ts_rt_arg_double(c, call, 3, &delta)) return false;
  if (!(delta > 0)) return ts_rt_fail(c, "huber_loss does not support non-positive values for delta.");
  return ls_binary(c, call, "huber_cpu", ls_f_huber, 3, 2);
}

/* kl_div(self, target, reduction, *, log_target) */
static bool ls_k_kl_div(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[2];
  int64_t red;
  bool log_target = false;
  if (!ls_args2(c, call, &in[0], &in[1], &red) || !ts_rt_arg_bool(c, call, 3, &log_target)) return false;
  if (ts_dtype_is_integral((ts_dtype)in[0]->dtype, true) || ts_dtype_is_integral((ts_dtype)in[1]->dtype, true))
    return ts_rt_fail(c, "kl_div: Integral inputs not supported.");
  ts_dtype dt = ls_float_dtype(c, log_target ? "exp_vml_cpu" : "xlogy_cpu", in, 2);
  if (dt == TS_DT_NONE) return false;
  double p[1] = {log_target ? 1 : 0};
  return ls_reduce_ret(c, call, ls_map(c, in, 2, dt, ls_f_kl_div, p), red);
}

/* poisson_nll_loss(input, target, log_input, full, eps, reduction) */
static bool ls_k_poisson(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[2];
  bool log_input = false, full = false;
  double eps = 0;
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_bool(c, call, 2, &log_input) || !ts_rt_arg_bool(c, call, 3, &full) ||
      !ts_rt_arg_double(c, call, 4, &eps) || !ts_rt_arg_int(c, call, 5, &red))
    return false;
  ts_dtype dt = ls_float_dtype(c, NULL, in, 2);
  if (dt == TS_DT_NONE) return false;
  double p[3] = {log_input, full, eps};
  return ls_reduce_ret(c, call, ls_map(c, in, 2, dt, ls_f_poisson, p), red);
}

/* margin_ranking_loss(input1, input2, target, margin, reduction) */
static bool ls_k_margin_ranking(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[3];
  double p[1];
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_tensor(c, call, 2, &in[2]) || !ts_rt_arg_double(c, call, 3, p) || !ts_rt_arg_int(c, call, 4, &red))
    return false;
  ts_dtype dt = ls_float_dtype(c, NULL, in, 3);
  if (dt == TS_DT_NONE) return false;
  return ls_reduce_ret(c, call, ls_map(c, in, 3, dt, ls_f_margin_ranking, p), red);
}

/* Takes over loss; loss * weight (broadcast to loss's shape, in loss's
 * dtype as an in-place mul_ leaves it). */
static ts_rt_tensor *ls_mul_weight(ts_rt_ctx *c, ts_rt_tensor *loss, const ts_rt_tensor *w) {
  if (!loss || !w) return loss;
  ts_dtype dt = (ts_dtype)loss->dtype;
  ts_rt_tensor *r = ts_rt_binary_op(c, TS_PW_mul, loss, w);
  ts_rt_tensor_release(loss);
  return nnu_cast_owned(c, r, dt);
}

/* binary_cross_entropy(self, target, weight, reduction) */
static bool ls_k_bce(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[2], *w;
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_int(c, call, 3, &red))
    return false;
  if (!ts_dtype_is_float((ts_dtype)in[0]->dtype)) return nnu_not_impl(c, "binary_cross_entropy", in[0]->dtype);
  if (in[1]->dtype != in[0]->dtype)
    return ts_rt_fail(c, "Found dtype %s but expected %s", ts_rt_dtype_name(in[1]->dtype),
                      ts_rt_dtype_name(in[0]->dtype));
  /* ATen's iterator writes a loss shaped like self */
  if (ts_rt_tensor_numel(in[0]) != ts_rt_tensor_numel(in[1]))
    return ts_rt_fail(c, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension 0",
                      (long long)ts_rt_tensor_numel(in[0]), (long long)ts_rt_tensor_numel(in[1]));
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, in[0], TS_DT_FLOAT64);
  if (!xd) return false;
  const double *v = ts_rt_tensor_numel(xd) ? ts_rt_tensor_data(xd) : NULL;
  for (int64_t i = 0; i < ts_rt_tensor_numel(xd); i++)
    if (!(v[i] >= 0 && v[i] <= 1)) {
      ts_rt_tensor_release(xd);
      return ts_rt_fail(c, "all elements of input should be between 0 and 1");
    }
  ts_rt_tensor_release(xd);
  double p[1] = {0};
  ts_rt_tensor *loss = ls_map(c, in, 2, (ts_dtype)in[0]->dtype, ls_f_bce, p);
  return ls_reduce_ret(c, call, ls_mul_weight(c, loss, w), red);
}

/* binary_cross_entropy_with_logits(self, target, weight, pos_weight,
 * reduction) */
static bool ls_k_bce_logits(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *in[3], *w;
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &in[0]) || !ts_rt_arg_tensor(c, call, 1, &in[1]) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_opt_tensor(c, call, 3, &in[2]) ||
      !ts_rt_arg_int(c, call, 4, &red))
    return false;
  uint32_t n = in[2] ? 3 : 2;
  if (ls_int_self(c, call)) return false;
  ts_dtype dt = ls_float_dtype(c, "log_sigmoid_cpu", in, n);
  if (dt == TS_DT_NONE) return false;
  double p[1] = {in[2] ? 1 : 0};
  ts_rt_tensor *loss = ls_map(c, in, n, dt, ls_f_bce_logits, p);
  return ls_reduce_ret(c, call, ls_mul_weight(c, loss, w), red);
}

/* ------------------------------------------------------ nll and friends */

/* Writes "[2, 3]" of t's sizes. */
static const char *ls_shape(const ts_rt_tensor *t, char *buf, size_t cap) {
  nnu_shape_str(buf, cap, t->ndim, t->sizes);
  return buf;
}

/* The core of nll_loss and nll_loss2d: x viewed as [N, C, K] (x contiguous
 * in that order), target's N*K class indices, out the unreduced loss's
 * shape. New: the result in x's dtype. */
static ts_rt_tensor *ls_nll_core(ts_rt_ctx *c, const ts_rt_tensor *x, int64_t N, int64_t C, int64_t K,
                                 const ts_rt_tensor *target, const ts_rt_tensor *weight, int64_t red, int64_t ignore,
                                 int32_t out_nd, const int64_t *out_sizes) {
  if (target->dtype != TS_DT_INT64 && target->dtype != TS_DT_UINT8) {
    ts_rt_fail(c, "expected scalar type Long but found %s", ts_rt_dtype_name(target->dtype));
    return NULL;
  }
  if (!ts_dtype_is_float((ts_dtype)x->dtype)) {
    nnu_not_impl(c, "nll_loss_out_frame", x->dtype);
    return NULL;
  }
  if (weight && weight->dtype != x->dtype) {
    ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(x->dtype), ts_rt_dtype_name(weight->dtype));
    return NULL;
  }
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64);
  ts_rt_tensor *td = xd ? ts_rt_tensor_to_dtype(c, target, TS_DT_INT64) : NULL;
  ts_rt_tensor *wd = td && weight ? ts_rt_tensor_to_dtype(c, weight, TS_DT_FLOAT64) : NULL;
  ts_rt_tensor *o = NULL, *r = NULL;
  if (!td || (weight && !wd)) goto done;
  bool none = red != LS_MEAN && red != LS_SUM;
  o = none ? ts_rt_tensor_new(c, TS_DT_FLOAT64, out_nd, out_sizes, false)
           : ts_rt_tensor_new(c, TS_DT_FLOAT64, 0, NULL, false);
  if (!o) goto done;
  int64_t M = N * K;
  const double *xv = M && C ? ts_rt_tensor_data(xd) : NULL;
  const int64_t *tv = M ? ts_rt_tensor_data(td) : NULL;
  const double *wv = wd && C ? ts_rt_tensor_data(wd) : NULL;
  double *ov = ts_rt_tensor_numel(o) ? ts_rt_tensor_data(o) : NULL;
  double total = 0, wsum = 0;
  for (int64_t i = 0; i < M; i++) {
    int64_t n = i / K, k = i % K, t = tv[i];
    double l = 0;
    if (t != ignore) {
      if (t < 0 || t >= C) {
        ts_rt_fail(c, "Target %lld is out of bounds.", (long long)t);
        goto done;
      }
      double w = wv ? wv[t] : 1;
      l = -w * xv[(n * C + t) * K + k];
      wsum += w;
    }
    if (none) ov[i] = l;
    else total += l;
  }
  if (!none) ov[0] = red == LS_MEAN ? total / wsum : total;
  r = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
done:
  if (xd) ts_rt_tensor_release(xd);
  if (td) ts_rt_tensor_release(td);
  if (wd) ts_rt_tensor_release(wd);
  if (o) ts_rt_tensor_release(o);
  return r;
}

static bool ls_check_weight(ts_rt_ctx *c, const ts_rt_tensor *w, int64_t C, const char *prefix) {
  if (!w || (w->ndim == 1 && w->sizes[0] == C)) return true;
  char buf[128];
  return ts_rt_fail(c,
                    "%sweight tensor should be defined either for all %lld classes or no classes but got weight tensor "
                    "of shape: %s",
                    prefix, (long long)C, ls_shape(w, buf, sizeof buf));
}

/* New: nll_loss of a 1-d or 2-d input. */
static ts_rt_tensor *ls_nll(ts_rt_ctx *c, ts_rt_tensor *x, ts_rt_tensor *t, ts_rt_tensor *w, int64_t red,
                            int64_t ignore) {
  char b1[128], b2[128];
  if (x->ndim < 1 || x->ndim > 2) return ts_rt_fail(c, "input tensor should be 1D or 2D"), NULL;
  if (t->ndim > 1) return ts_rt_fail(c, "0D or 1D target tensor expected, multi-target not supported"), NULL;
  bool no_batch = x->ndim == 1 && t->ndim == 0;
  if (!no_batch && (t->ndim == 0 || x->sizes[0] != t->sizes[0]))
    return ts_rt_fail(c, "size mismatch (got input: %s, target: %s)", ls_shape(x, b1, sizeof b1),
                      ls_shape(t, b2, sizeof b2)),
           NULL;
  int64_t C = x->sizes[x->ndim - 1], N = x->ndim == 2 ? x->sizes[0] : 1;
  if (!ls_check_weight(c, w, C, "")) return NULL;
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  if (!xc) return NULL;
  int64_t osz[1] = {N};
  ts_rt_tensor *r = ls_nll_core(c, xc, N, C, 1, t, w, red, ignore, x->ndim == 2 ? 1 : 0, osz);
  ts_rt_tensor_release(xc);
  return r;
}

/* New: nll_loss2d of a [N, C, H, W] input and [N, H, W] target. */
static ts_rt_tensor *ls_nll2d(ts_rt_ctx *c, ts_rt_tensor *x, ts_rt_tensor *t, ts_rt_tensor *w, int64_t red,
                              int64_t ignore) {
  char b1[128], b2[128];
  if (t->ndim != 3)
    return ts_rt_fail(c, "only batches of spatial targets supported (3D tensors) but got targets of dimension: %d",
                      (int)t->ndim),
           NULL;
  if (x->ndim != 4)
    return ts_rt_fail(c, "only batches of spatial inputs supported (4D tensors), but got input of dimension: %d",
                      (int)x->ndim),
           NULL;
  if (w && ts_rt_tensor_numel(w) != x->sizes[1])
    return ts_rt_fail(c, "weight tensor should be defined either for all or no classes"), NULL;
  if (x->sizes[0] != t->sizes[0] || x->sizes[2] != t->sizes[1] || x->sizes[3] != t->sizes[2])
    return ts_rt_fail(c, "size mismatch (got input: %s , target: %s", ls_shape(x, b1, sizeof b1),
                      ls_shape(t, b2, sizeof b2)),
           NULL;
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  if (!xc) return NULL;
  int64_t osz[3] = {x->sizes[0], x->sizes[2], x->sizes[3]};
  ts_rt_tensor *r = ls_nll_core(c, xc, x->sizes[0], x->sizes[1], x->sizes[2] * x->sizes[3], t, w, red, ignore, 3, osz);
  ts_rt_tensor_release(xc);
  return r;
}

/* New: nll_loss_nd (any rank: 1-d and 2-d as nll_loss, 4-d as nll_loss2d,
 * others through nll_loss2d on [N, C, 1, -1]). */
static ts_rt_tensor *ls_nll_nd(ts_rt_ctx *c, ts_rt_tensor *x, ts_rt_tensor *t, ts_rt_tensor *w, int64_t red,
                               int64_t ignore) {
  char b1[128], b2[128];
  if (x->ndim < 1) return ts_rt_fail(c, "Expected 1 or more dimensions (got %d)", (int)x->ndim), NULL;
  if (x->ndim != 1 && (t->ndim < 1 || x->sizes[0] != t->sizes[0]))
    return ts_rt_fail(c, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                      (long long)x->sizes[0], (long long)(t->ndim ? t->sizes[0] : 0)),
           NULL;
  if (x->ndim <= 2) return ls_nll(c, x, t, w, red, ignore);
  if (x->ndim == 4) return ls_nll2d(c, x, t, w, red, ignore);
  bool same = t->ndim == x->ndim - 1;
  for (int32_t i = 1; same && i < t->ndim; i++) same = t->sizes[i] == x->sizes[i + 1];
  if (!same) {
    int64_t os[TS_RT_MAX_DIMS];
    os[0] = x->sizes[0];
    for (int32_t i = 2; i < x->ndim; i++) os[i - 1] = x->sizes[i];
    nnu_shape_str(b1, sizeof b1, x->ndim - 1, os);
    return ts_rt_fail(c, "Expected target size %s, got %s", b1, ls_shape(t, b2, sizeof b2)), NULL;
  }
  int64_t C = x->sizes[1], N = x->sizes[0], K = 1;
  for (int32_t i = 2; i < x->ndim; i++) K *= x->sizes[i];
  if (w && ts_rt_tensor_numel(w) != C)
    return ts_rt_fail(c, "weight tensor should be defined either for all or no classes"), NULL;
  ts_rt_tensor *xc = ts_rt_tensor_contiguous(c, x);
  if (!xc) return NULL;
  int64_t os[TS_RT_MAX_DIMS];
  os[0] = N;
  for (int32_t i = 2; i < x->ndim; i++) os[i - 1] = x->sizes[i];
  ts_rt_tensor *r = ls_nll_core(c, xc, N, C, K, t, w, red, ignore, x->ndim - 1, os);
  ts_rt_tensor_release(xc);
  return r;
}

typedef ts_rt_tensor *(*ls_nll_fn)(ts_rt_ctx *, ts_rt_tensor *, ts_rt_tensor *, ts_rt_tensor *, int64_t, int64_t);

/* (self, target, weight, reduction, ignore_index) */
static bool ls_nll_kernel(ts_rt_ctx *c, ts_rt_call *call, ls_nll_fn fn) {
  ts_rt_tensor *x, *t, *w;
  int64_t red, ignore;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &t) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_int(c, call, 3, &red) ||
      !ts_rt_arg_int(c, call, 4, &ignore))
    return false;
  return nnu_ret(call, fn(c, x, t, w, red, ignore));
}
static bool ls_k_nll(ts_rt_ctx *c, ts_rt_call *call) { return ls_nll_kernel(c, call, ls_nll); }
static bool ls_k_nll2d(ts_rt_ctx *c, ts_rt_call *call) { return ls_nll_kernel(c, call, ls_nll2d); }
static bool ls_k_nll_nd(ts_rt_ctx *c, ts_rt_call *call) { return ls_nll_kernel(c, call, ls_nll_nd); }

/* cross_entropy_loss(self, target, weight, reduction, ignore_index,
 * label_smoothing): class indices through log_softmax and nll_loss_nd
 * (plus the smoothing term), class probabilities when the shapes agree. */
static bool ls_k_cross_entropy(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *t, *w;
  int64_t red, ignore;
  double ls;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &t) ||
      !ts_rt_arg_opt_tensor(c, call, 2, &w) || !ts_rt_arg_int(c, call, 3, &red) ||
      !ts_rt_arg_int(c, call, 4, &ignore) || !ts_rt_arg_double(c, call, 5, &ls))
    return false;
  bool probs = x->ndim == t->ndim && !memcmp(x->sizes, t->sizes, (size_t)x->ndim * sizeof *x->sizes);
  if (probs) {
    if (!ts_dtype_is_float((ts_dtype)t->dtype))
      return ts_rt_fail(c, "Expected floating point type for target with class probabilities, got %s",
                        ts_rt_dtype_name(t->dtype));
    if (ignore >= 0) return ts_rt_fail(c, "ignore_index is not supported for floating point target");
  }
  if (x->ndim < 1) return ts_rt_fail(c, "Dimension specified as 1 but tensor has no dimensions");
  int64_t cdim = x->ndim == 1 ? 0 : 1, C = x->sizes[cdim];
  if (probs && !ls_check_weight(c, w, C, "cross_entropy: ")) return false;
  if ((probs || ls > 0) && ls > 1)
    return ts_rt_fail(c, "label_smoothing must be between 0.0 and 1.0. Got: %g", ls);
  ts_rt_tensor *lp = ts_rt_softmax(c, x, cdim, (ts_dtype)x->dtype, true);
  if (!lp) return false;
  if (!probs && !(ls > 0)) {
    ts_rt_tensor *r = ls_nll_nd(c, lp, t, w, red, ignore);
    ts_rt_tensor_release(lp);
    return nnu_ret(call, r);
  }
  ts_rt_tensor *nll = probs ? NULL : ls_nll_nd(c, lp, t, w, red, ignore);
  if (!probs && !nll) {
    ts_rt_tensor_release(lp);
    return false;
  }
  /* The per-position sums over classes, in float64: -sum_c lp * q_c where
   * q is the (smoothed) target probability times the weight. */
  int64_t N = cdim ? x->sizes[0] : 1, K = 1;
  for (int32_t i = 2; i < x->ndim; i++) K *= x->sizes[i];
  ts_rt_tensor *lpd = ts_rt_tensor_to_dtype(c, lp, TS_DT_FLOAT64);
  ts_rt_tensor_release(lp);
  ts_rt_tensor *td = lpd ? ts_rt_tensor_to_dtype(c, t, probs ? TS_DT_FLOAT64 : TS_DT_INT64) : NULL;
  ts_rt_tensor *wd = td && w ? ts_rt_tensor_to_dtype(c, w, TS_DT_FLOAT64) : NULL;
  int64_t osz[TS_RT_MAX_DIMS];
  int32_t ond = 0;
  if (cdim) {
    osz[ond++] = N;
    for (int32_t i = 2; i < x->ndim; i++) osz[ond++] = x->sizes[i];
  }
  ts_rt_tensor *o = td && (!w || wd) ? ts_rt_tensor_new(c, TS_DT_FLOAT64, ond, osz, false) : NULL;
  ts_rt_tensor *res = NULL;
  bool ok = false;
  if (!o) goto done;
  int64_t M = N * K;
  const double *lv = M && C ? ts_rt_tensor_data(lpd) : NULL;
  const double *wv = wd && C ? ts_rt_tensor_data(wd) : NULL;
  double *ov = M ? ts_rt_tensor_data(o) : NULL;
  double total = 0, denom = 0;
  for (int64_t i = 0; i < M; i++) {
    int64_t n = i / K, k = i % K;
    double s = 0;
    if (probs) {
      const double *tv = ts_rt_tensor_data(td);
      for (int64_t cl = 0; cl < C; cl++) {
        double q = tv[(n * C + cl) * K + k];
        if (ls > 0) q = q * (1 - ls) + ls / (double)C;
        s += lv[(n * C + cl) * K + k] * q * (wv ? wv[cl] : 1);
      }
    } else {
      int64_t tg = ((const int64_t *)ts_rt_tensor_data(td))[i];
      if (tg != ignore) {
        for (int64_t cl = 0; cl < C; cl++) s += lv[(n * C + cl) * K + k] * (wv ? wv[cl] : 1);
        denom += wv ? wv[tg] : 1; /* tg is in range: nll checked it */
      }
    }
    ov[i] = -s;
    total += -s;
  }
  if (red == LS_MEAN || red == LS_SUM) {
    ts_rt_tensor_release(o);
    if (!(o = ts_rt_tensor_new(c, TS_DT_FLOAT64, 0, NULL, false))) goto done;
    double v = total;
    if (red == LS_MEAN) v = probs ? (M == 0 ? NAN : total / (double)M) : total / denom;
    *(double *)ts_rt_tensor_data(o) = v;
  }
  if (probs) {
    res = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
  } else {
    /* (1 - ls) * nll + smooth * (ls / C), in the dtype as ATen's ops are */
    ts_rt_tensor *sm = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
    ts_rt_tensor *a = sm ? ts_rt_mul_scalar(c, nll, 1 - ls) : NULL;
    ts_rt_tensor *b = a ? ts_rt_mul_scalar(c, sm, ls / (double)C) : NULL;
    res = b ? ts_rt_add(c, a, b, 1) : NULL;
    ts_rt_tensor *tmp[3] = {sm, a, b};
    for (int k = 0; k < 3; k++)
      if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  }
  ok = res != NULL;
done:;
  ts_rt_tensor *tmp[5] = {lpd, td, wd, o, nll};
  for (int k = 0; k < 5; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  return ok && nnu_ret(call, res);
}

/* --------------------------------------------------- per-sample losses */

/* multi_margin_loss(self, target, p, margin, weight, reduction) */
static bool ls_k_multi_margin(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *t, *w;
  double p, margin;
  int64_t red;
  char buf[128];
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &t) || !ts_rt_arg_double(c, call, 2, &p) ||
      !ts_rt_arg_double(c, call, 3, &margin) || !ts_rt_arg_opt_tensor(c, call, 4, &w) ||
      !ts_rt_arg_int(c, call, 5, &red))
    return false;
  if (p != 1 && p != 2) return ts_rt_fail(c, "only p == 1 and p == 2 supported");
  if (w && w->ndim > 1) return ts_rt_fail(c, "weight must either be undefined or 1D");
  int32_t nd = x->ndim;
  if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
    return ts_rt_fail(c, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                      ls_shape(x, buf, sizeof buf));
  int64_t nframe = nd <= 1 ? 1 : x->sizes[0], dim = nd == 0 ? 1 : x->sizes[nd - 1];
  if (!(t->ndim <= 1 && ts_rt_tensor_numel(t) == nframe))
    return ts_rt_fail(c, "inconsistent target size, got: %s", ls_shape(t, buf, sizeof buf));
  if (w && ts_rt_tensor_numel(w) != dim)
    return ts_rt_fail(c, "inconsistent weight size, expected %lld but got %s", (long long)dim,
                      ls_shape(w, buf, sizeof buf));
  if (!ts_dtype_is_float((ts_dtype)x->dtype)) return nnu_not_impl(c, "multi_margin_loss_cpu_forward", x->dtype);
  if (t->dtype != TS_DT_INT64)
    return ts_rt_fail(c, "expected scalar type Long but found %s", ts_rt_dtype_name(t->dtype));
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64);
  ts_rt_tensor *td = xd ? ts_rt_tensor_to_dtype(c, t, TS_DT_INT64) : NULL;
  ts_rt_tensor *wd = td && w ? ts_rt_tensor_to_dtype(c, w, TS_DT_FLOAT64) : NULL;
  bool none = red != LS_MEAN && red != LS_SUM;
  int64_t osz[1] = {nframe};
  ts_rt_tensor *o = td && (!w || wd) ? ts_rt_tensor_new(c, TS_DT_FLOAT64, none && t->ndim > 0 ? 1 : 0, osz, false)
                                     : NULL;
  ts_rt_tensor *r = NULL;
  if (!o) goto done;
  const double *xv = ts_rt_tensor_data(xd);
  const int64_t *tv = ts_rt_tensor_data(td);
  const double *wv = wd ? ts_rt_tensor_data(wd) : NULL;
  double *ov = ts_rt_tensor_numel(o) ? ts_rt_tensor_data(o) : NULL, total = 0;
  for (int64_t n = 0; n < nframe; n++) {
    int64_t y = tv[n];
    if (y < 0 || y >= dim) {
      ts_rt_fail(c, "target out of range");
      goto done;
    }
    const double *row = xv + n * dim;
    double s = 0;
    for (int64_t j = 0; j < dim; j++) {
      if (j == y) continue;
      double z = margin - row[y] + row[j];
      if (z > 0) {
        double h = p == 1 ? z : z * z;
        s += wv ? h * wv[y] : h;
      }
    }
    s /= (double)dim;
    if (none) ov[n] = s;
    else total += s;
  }
  if (!none) ov[0] = red == LS_MEAN ? total / (double)nframe : total;
  r = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
done:;
  ts_rt_tensor *tmp[4] = {xd, td, wd, o};
  for (int k = 0; k < 4; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  return nnu_ret(call, r);
}

/* multilabel_margin_loss(self, target, reduction) */
static bool ls_k_multilabel_margin(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *t;
  int64_t red;
  char b1[128], b2[128];
  if (!ls_args2(c, call, &x, &t, &red)) return false;
  int32_t nd = x->ndim;
  if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
    return ts_rt_fail(c, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                      ls_shape(x, b1, sizeof b1));
  int64_t nframe = nd <= 1 ? 1 : x->sizes[0], dim = nd == 0 ? 1 : x->sizes[nd - 1];
  bool tok = nd <= 1 ? (t->ndim <= 1 && ts_rt_tensor_numel(t) == dim)
                     : (t->ndim == 2 && t->sizes[0] == nframe && t->sizes[1] == dim);
  if (!tok)
    return ts_rt_fail(c, "inconsistent target size: %s for input of size: %s", ls_shape(t, b1, sizeof b1),
                      ls_shape(x, b2, sizeof b2));
  if (!ts_dtype_is_float((ts_dtype)x->dtype))
    return nnu_not_impl(c, "multilabel_margin_loss_forward_out_frame", x->dtype);
  if (t->dtype != TS_DT_INT64)
    return ts_rt_fail(c, "expected scalar type Long but found %s", ts_rt_dtype_name(t->dtype));
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64);
  ts_rt_tensor *td = xd ? ts_rt_tensor_to_dtype(c, t, TS_DT_INT64) : NULL;
  bool none = red != LS_MEAN && red != LS_SUM;
  int64_t osz[1] = {nframe};
  ts_rt_tensor *o = td ? ts_rt_tensor_new(c, TS_DT_FLOAT64, none && nd == 2 ? 1 : 0, osz, false) : NULL;
  char *is_target = o ? ts_rt_malloc((size_t)dim) : NULL;
  ts_rt_tensor *r = NULL;
  if (!is_target) {
    if (o) ts_rt_oom(c);
    goto done;
  }
  const double *xv = ts_rt_tensor_data(xd);
  const int64_t *tv = ts_rt_tensor_data(td);
  double *ov = ts_rt_tensor_data(o), total = 0;
  for (int64_t n = 0; n < nframe; n++) {
    const double *row = xv + n * dim;
    const int64_t *tr = tv + n * dim;
    memset(is_target, 0, (size_t)dim);
    for (int64_t k = 0; k < dim && tr[k] >= 0; k++) {
      if (tr[k] >= dim) {
        ts_rt_fail(c, "target index is out of bounds");
        goto done;
      }
      is_target[tr[k]] = 1;
    }
    double s = 0;
    for (int64_t k = 0; k < dim && tr[k] >= 0; k++) {
      double xt = row[tr[k]];
      for (int64_t j = 0; j < dim; j++) {
        if (is_target[j]) continue;
        double z = 1 - xt + row[j];
        if (z > 0) s += z;
      }
    }
    s /= (double)dim;
    if (none) ov[n] = s;
    else total += s;
  }
  if (!none) ov[0] = red == LS_MEAN ? total / (double)nframe : total;
  r = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
done:
  ts_rt_free(is_target);
  ts_rt_tensor *tmp[3] = {xd, td, o};
  for (int k = 0; k < 3; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  return nnu_ret(call, r);
}

/* ----------------------------------------------------------- distances */

/* The p-norm of n values (ATen's norm: 0 counts non-zeros, inf is the
 * largest magnitude, -inf the smallest). */
static double ls_pnorm(const double *v, int64_t n, int64_t stride, double p) {
  double acc = p == -INFINITY ? INFINITY : 0;
  for (int64_t i = 0; i < n; i++) {
    double a = fabs(v[i * stride]);
    if (p == 0) acc += a != 0;
    else if (p == 1) acc += a;
    else if (p == 2) acc += a * a;
    else if (p == INFINITY) acc = isnan(a) || a > acc ? a : acc;
    else if (p == -INFINITY) acc = isnan(a) || a < acc ? a : acc;
    else acc += pow(a, p);
  }
  if (p == 2) return sqrt(acc);
  if (p == 0 || p == 1 || isinf(p)) return acc;
  return pow(acc, 1 / p);
}

/* New: pairwise_distance: norm(x1 - x2 + eps, p, last dim, keepdim). */
static ts_rt_tensor *ls_pairwise(ts_rt_ctx *c, ts_rt_tensor *x1, ts_rt_tensor *x2, double p, double eps,
                                 bool keepdim) {
  ts_rt_tensor *d = ts_rt_binary_op(c, TS_PW_sub, x1, x2);
  if (!d) return NULL;
  ts_rt_tensor *dd = ts_rt_tensor_to_dtype(c, d, TS_DT_FLOAT64);
  /* an integral difference plus the float eps is float32 */
  ts_dtype dt = ts_dtype_is_integral((ts_dtype)d->dtype, true) ? TS_DT_FLOAT32 : (ts_dtype)d->dtype;
  int32_t nd = d->ndim;
  int64_t sz[TS_RT_MAX_DIMS];
  memcpy(sz, d->sizes, (size_t)nd * sizeof *sz);
  ts_rt_tensor_release(d);
  if (!dd) return NULL;
  int64_t D = nd ? sz[nd - 1] : 1;
  if (nd) {
    if (keepdim) sz[nd - 1] = 1;
    else nd--;
  }
  ts_rt_tensor *o = ts_rt_tensor_new(c, TS_DT_FLOAT64, nd, sz, false), *r = NULL;
  if (o) {
    double *v = ts_rt_tensor_numel(dd) ? ts_rt_tensor_data(dd) : NULL;
    double *ov = ts_rt_tensor_numel(o) ? ts_rt_tensor_data(o) : NULL;
    for (int64_t i = 0; i < ts_rt_tensor_numel(dd); i++) v[i] += eps;
    for (int64_t rI = 0; rI < ts_rt_tensor_numel(o); rI++) ov[rI] = D ? ls_pnorm(v + rI * D, D, 1, p) : 0;
    r = ts_rt_tensor_to_dtype(c, o, dt);
    ts_rt_tensor_release(o);
  }
  ts_rt_tensor_release(dd);
  return r;
}

static bool ls_k_pairwise(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x1, *x2;
  double p, eps;
  bool keepdim;
  if (!ts_rt_arg_tensor(c, call, 0, &x1) || !ts_rt_arg_tensor(c, call, 1, &x2) || !ts_rt_arg_double(c, call, 2, &p) ||
      !ts_rt_arg_double(c, call, 3, &eps) || !ts_rt_arg_bool(c, call, 4, &keepdim))
    return false;
  return nnu_ret(call, ls_pairwise(c, x1, x2, p, eps, keepdim));
}

/* clamp_min(margin + d_pos - min(d_neg, d_swap), 0), NaN kept */
static double ls_f_triplet(const double *v, const double *p) {
  double m = isnan(v[1]) || isnan(v[2]) ? NAN : fmin(v[1], v[2]);
  double r = p[0] + v[0] - m;
  return isnan(r) ? r : fmax(r, 0);
}

/* triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
 * reduction) */
static bool ls_k_triplet(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *a, *pos, *neg;
  double margin, p, eps;
  bool swap;
  int64_t red;
  if (!ts_rt_arg_tensor(c, call, 0, &a) || !ts_rt_arg_tensor(c, call, 1, &pos) ||
      !ts_rt_arg_tensor(c, call, 2, &neg) || !ts_rt_arg_double(c, call, 3, &margin) ||
      !ts_rt_arg_double(c, call, 4, &p) || !ts_rt_arg_double(c, call, 5, &eps) || !ts_rt_arg_bool(c, call, 6, &swap) ||
      !ts_rt_arg_int(c, call, 7, &red))
    return false;
  if (a->ndim != pos->ndim || pos->ndim != neg->ndim)
    return ts_rt_fail(c, "All inputs should have same dimension but got %dD, %dD and %dD inputs.", (int)a->ndim,
                      (int)pos->ndim, (int)neg->ndim);
  ts_rt_tensor *dp = ls_pairwise(c, a, pos, p, eps, false);
  ts_rt_tensor *dn = dp ? ls_pairwise(c, a, neg, p, eps, false) : NULL;
  ts_rt_tensor *ds = dn && swap ? ls_pairwise(c, pos, neg, p, eps, false) : NULL;
  ts_rt_tensor *loss = NULL;
  if (dn && (!swap || ds)) {
    ts_rt_tensor *in[3] = {dp, dn, ds ? ds : dn};
    double pm[1] = {margin};
    ts_iv ops[2] = {ts_iv_tensor(dp), ts_iv_tensor(dn)};
    loss = ls_map(c, in, 3, ts_rt_result_type(ops, 2), ls_f_triplet, pm);
  }
  ts_rt_tensor *tmp[3] = {dp, dn, ds};
  for (int k = 0; k < 3; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  if (!loss) return false;
  return ls_reduce_ret(c, call, loss, red);
}

/* New: pdist of a [N, M] tensor: the p-norm distance of every pair of rows
 * i < j, in that order. */
static ts_rt_tensor *ls_pdist(ts_rt_ctx *c, ts_rt_tensor *x, double p) {
  if (x->ndim != 2) return ts_rt_fail(c, "pdist only supports 2D tensors, got: %dD", (int)x->ndim), NULL;
  if (!ts_dtype_is_float((ts_dtype)x->dtype))
    return ts_rt_fail(c, "pdist only supports floating-point dtypes"), NULL;
  if (!(p >= 0)) return ts_rt_fail(c, "pdist only supports non-negative p values"), NULL;
  int64_t N = x->sizes[0], M = x->sizes[1];
  int64_t np = N > 1 ? N * (N - 1) / 2 : 0;
  ts_rt_tensor *xd = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64);
  int64_t osz[1] = {np};
  ts_rt_tensor *o = xd ? ts_rt_tensor_new(c, TS_DT_FLOAT64, 1, osz, false) : NULL, *r = NULL;
  double *row = o && M ? ts_rt_malloc((size_t)M * sizeof(double)) : NULL;
  if (o && (row || !M)) {
    const double *v = N && M ? ts_rt_tensor_data(xd) : NULL;
    double *ov = np ? ts_rt_tensor_data(o) : NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < N; i++)
      for (int64_t j = i + 1; j < N; j++) {
        for (int64_t m = 0; m < M; m++) row[m] = v[i * M + m] - v[j * M + m];
        ov[k++] = M ? ls_pnorm(row, M, 1, p) : 0;
      }
    r = ts_rt_tensor_to_dtype(c, o, (ts_dtype)x->dtype);
  } else if (o) {
    ts_rt_oom(c);
  }
  ts_rt_free(row);
  if (xd) ts_rt_tensor_release(xd);
  if (o) ts_rt_tensor_release(o);
  return r;
}

static bool ls_k_pdist(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x;
  double p;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_double(c, call, 1, &p)) return false;
  return nnu_ret(call, ls_pdist(c, x, p));
}

/* cosine_embedding_loss(input1, input2, target, margin, reduction) */
static bool ls_k_cosine_embedding(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x1, *x2, *t;
  double margin;
  int64_t red;
  char b1[128], b2[128];
  if (!ts_rt_arg_tensor(c, call, 0, &x1) || !ts_rt_arg_tensor(c, call, 1, &x2) || !ts_rt_arg_tensor(c, call, 2, &t) ||
      !ts_rt_arg_double(c, call, 3, &margin) || !ts_rt_arg_int(c, call, 4, &red))
    return false;
  if (t->ndim > 1) return ts_rt_fail(c, "0D or 1D target tensor expected, multi-target not supported");
  if (t->ndim == 1 && (x1->ndim != 2 || x2->ndim != 2))
    return ts_rt_fail(c, "1D target tensor expects 2D input tensors, but found inputs with sizes %s and %s.",
                      ls_shape(x1, b1, sizeof b1), ls_shape(x2, b2, sizeof b2));
  if (t->ndim == 0 && (x1->ndim != 1 || x2->ndim != 1))
    return ts_rt_fail(c, "0D target tensor expects 1D input tensors, but found inputs with sizes %s and %s.",
                      ls_shape(x1, b1, sizeof b1), ls_shape(x2, b2, sizeof b2));
  ts_rt_tensor *in[3] = {x1, x2, t};
  ts_dtype dt = ls_float_dtype(c, NULL, in, 2);
  if (dt == TS_DT_NONE) return false;
  /* x1 * x2 broadcast: rows of the last dimension */
  int32_t nd;
  int64_t sz[2];
  if (!ts_rt_broadcast_shapes(c, x1->ndim, x1->sizes, x2->ndim, x2->sizes, &nd, sz)) return false;
  int64_t B = nd == 2 ? sz[0] : 1, D = sz[nd - 1];
  if (t->ndim == 1 && t->sizes[0] != B && t->sizes[0] != 1 && B != 1)
    return ts_rt_fail(c, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                         "dimension 0",
                      (long long)B, (long long)t->sizes[0]);
  int64_t rows = t->ndim == 1 && B == 1 ? t->sizes[0] : B;
  ts_rt_tensor *a = ls_f64(c, x1, nd, sz), *b = a ? ls_f64(c, x2, nd, sz) : NULL;
  int64_t tsz[1] = {rows};
  ts_rt_tensor *tt = b ? ls_f64(c, t, t->ndim, t->ndim ? tsz : NULL) : NULL;
  ts_rt_tensor *o = tt ? ts_rt_tensor_new(c, TS_DT_FLOAT64, t->ndim, tsz, false) : NULL, *r = NULL;
  if (o) {
    const double *av = B && D ? ts_rt_tensor_data(a) : NULL, *bv = B && D ? ts_rt_tensor_data(b) : NULL;
    const double *tv = rows ? ts_rt_tensor_data(tt) : NULL;
    double *ov = rows ? ts_rt_tensor_data(o) : NULL;
    for (int64_t i = 0; i < rows; i++) {
      int64_t bi = B == 1 ? 0 : i;
      double s12 = 0, s1 = 0, s2 = 0;
      for (int64_t k = 0; k < D; k++) {
        double u = av[bi * D + k], v = bv[bi * D + k];
        s12 += u * v, s1 += u * u, s2 += v * v;
      }
      double cs = s12 / sqrt((s1 + 1e-12) * (s2 + 1e-12));
      double neg = cs - margin;
      neg = isnan(neg) ? neg : fmax(neg, 0);
      ov[i] = (tv[i] == 1 ? 1 - cs : 0) + (tv[i] == -1 ? neg : 0);
    }
    r = ts_rt_tensor_to_dtype(c, o, dt);
  }
  ts_rt_tensor *tmp[4] = {a, b, tt, o};
  for (int k = 0; k < 4; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  if (!r) return false;
  return ls_reduce_ret(c, call, r, red);
}

/* -------------------------------------------------------------- bilinear */

/* bilinear(input1, input2, weight, bias): y[..., o] = x1 W[o] x2 + b[o]:
 * u = x2 @ W.view(O * I1, I2)^T (one GEMM), then y[n, o] = u[n, o, :] . x1[n]. */
static bool ls_k_bilinear(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x1, *x2, *w, *bias;
  if (!ts_rt_arg_tensor(c, call, 0, &x1) || !ts_rt_arg_tensor(c, call, 1, &x2) || !ts_rt_arg_tensor(c, call, 2, &w) ||
      !ts_rt_arg_opt_tensor(c, call, 3, &bias))
    return false;
  if (x1->ndim != x2->ndim)
    return ts_rt_fail(c, "bilinear(): input dimensions do not match: got %d and %d", (int)x1->ndim, (int)x2->ndim);
  if (x1->ndim < 1 || w->ndim != 3)
    return ts_rt_fail(c, "bilinear(): expected a 3-D weight and inputs of at least one dimension");
  int32_t nd = x1->ndim;
  for (int32_t i = 0; i + 1 < nd; i++)
    if (x1->sizes[i] != x2->sizes[i])
      return ts_rt_fail(c, "bilinear(): input batch dimensions do not match at dim %d: got %lld and %lld", (int)i,
                        (long long)x1->sizes[i], (long long)x2->sizes[i]);
  int64_t I1 = x1->sizes[nd - 1], I2 = x2->sizes[nd - 1], O = w->sizes[0];
  if (I1 != w->sizes[1])
    return ts_rt_fail(c, "bilinear(): input1 size does not match weight size: got %lld but expected %lld",
                      (long long)I1, (long long)w->sizes[1]);
  if (I2 != w->sizes[2])
    return ts_rt_fail(c, "bilinear(): input2 size does not match weight size: got %lld but expected %lld",
                      (long long)I2, (long long)w->sizes[2]);
  if (bias && (bias->ndim < 1 || bias->sizes[0] != O))
    return ts_rt_fail(c, "bilinear(): bias size does not match weight size: got %lld but expected %lld",
                      (long long)(bias->ndim ? bias->sizes[0] : 0), (long long)O);
  ts_dtype dt = (ts_dtype)x1->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64) return nnu_not_impl(c, "addmm_impl_cpu_", dt);
  if (x2->dtype != dt || w->dtype != dt || (bias && bias->dtype != dt))
    return ts_rt_fail(c, "expected scalar type %s but found %s", ts_rt_dtype_name(dt),
                      ts_rt_dtype_name(x2->dtype != dt ? x2->dtype : w->dtype != dt ? w->dtype : bias->dtype));
  int64_t N = 1, OI1;
  for (int32_t i = 0; i + 1 < nd; i++) N *= x1->sizes[i];
  if (__builtin_mul_overflow(O, I1, &OI1) || N > INT32_MAX || OI1 > INT32_MAX || I2 > INT32_MAX) return ts_rt_oom(c);
  int64_t osz[TS_RT_MAX_DIMS], usz[2] = {N, OI1};
  memcpy(osz, x1->sizes, (size_t)nd * sizeof *osz);
  osz[nd - 1] = O;
  bool f64 = dt == TS_DT_FLOAT64;
  ts_rt_tensor *a = nnu_contig_as(c, x1, dt), *b = a ? nnu_contig_as(c, x2, dt) : NULL;
  ts_rt_tensor *wc = b ? nnu_contig_as(c, w, dt) : NULL, *bc = wc && bias ? nnu_contig_as(c, bias, dt) : NULL;
  ts_rt_tensor *u = wc && (!bias || bc) ? ts_rt_tensor_new(c, dt, 2, usz, false) : NULL;
  ts_rt_tensor *y = u ? ts_rt_tensor_new(c, dt, nd, osz, false) : NULL;
  if (y && N && O) {
    void *ud = ts_rt_tensor_data(u);
    if (OI1 && I2) {
      if (f64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)OI1, (int)I2, 1.0, ts_rt_tensor_data(b),
                    (int)I2, ts_rt_tensor_data(wc), (int)I2, 0.0, ud, (int)OI1);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)OI1, (int)I2, 1.0f, ts_rt_tensor_data(b),
                    (int)I2, ts_rt_tensor_data(wc), (int)I2, 0.0f, ud, (int)OI1);
    } else if (OI1) {
      memset(ud, 0, (size_t)(N * OI1) * (f64 ? 8 : 4));
    }
    for (int64_t n = 0; n < N; n++)
      for (int64_t o = 0; o < O; o++) {
        double s = 0;
        if (f64) {
          const double *ur = (const double *)ud + n * OI1 + o * I1, *xr = (const double *)ts_rt_tensor_data(a) + n * I1;
          for (int64_t i = 0; i < I1; i++) s += ur[i] * xr[i];
          if (bc) s += ((const double *)ts_rt_tensor_data(bc))[o];
          ((double *)ts_rt_tensor_data(y))[n * O + o] = s;
        } else {
          const float *ur = (const float *)ud + n * OI1 + o * I1, *xr = (const float *)ts_rt_tensor_data(a) + n * I1;
          for (int64_t i = 0; i < I1; i++) s += (double)ur[i] * xr[i];
          if (bc) s += ((const float *)ts_rt_tensor_data(bc))[o];
          ((float *)ts_rt_tensor_data(y))[n * O + o] = (float)s;
        }
      }
  }
  ts_rt_tensor *tmp[5] = {a, b, wc, bc, u};
  for (int k = 0; k < 5; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  return nnu_ret(call, y);
}

/* ------------------------------------------------------------ ctc_loss */

/* int[] lengths, or a 1-d integral tensor of them (the .Tensor overloads);
 * *n of them, at most max. New buffer in *out (ts_rt_free). */
static bool ls_lengths(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, const char *name, int64_t **out, int64_t *n) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag == TS_IV_TENSOR) {
    ts_rt_tensor *t = v.u.t;
    if (!ts_dtype_is_integral((ts_dtype)t->dtype, false)) return ts_rt_fail(c, "%s must be integral", name);
    ts_rt_tensor *tc = ts_rt_tensor_to_dtype(c, t, TS_DT_INT64);
    if (!tc) return false;
    *n = ts_rt_tensor_numel(tc);
    *out = ts_rt_malloc((size_t)(*n ? *n : 1) * sizeof **out);
    if (*out && *n) memcpy(*out, ts_rt_tensor_data(tc), (size_t)*n * sizeof **out);
    ts_rt_tensor_release(tc);
    return *out ? true : ts_rt_oom(c);
  }
  if (v.tag != TS_IV_LIST) return ts_rt_arg_bad(c, call, i, "List[int]");
  const ts_rt_list *l = v.u.l;
  *n = l->n;
  *out = ts_rt_malloc((size_t)(l->n ? l->n : 1) * sizeof **out);
  if (!*out) return ts_rt_oom(c);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_INT) {
      ts_rt_free(*out);
      return ts_rt_fail(c, "argument %u: expected List[int]", (unsigned)i);
    }
    (*out)[k] = l->items[k].u.i;
  }
  return true;
}

static double ls_lse3(double a, double b, double d) {
  double m = fmax(a, fmax(b, d));
  if (m == -INFINITY) m = 0;
  return log(exp(a - m) + exp(b - m) + exp(d - m)) + m;
}

/* The CTC forward pass of ATen's ctc_loss_cpu_template: lp [T, N, C],
 * targets concatenated (1-d) or padded (2-d); nll [N] and log_alpha
 * [N, T, 2 * max_target_length + 1] (float64), both new. */
static bool ls_ctc(ts_rt_ctx *c, ts_rt_tensor *lp, ts_rt_tensor *tg, const int64_t *il, int64_t nil, const int64_t *tl,
                   int64_t ntl, int64_t blank, ts_rt_tensor **nll_out, ts_rt_tensor **alpha_out) {
  if (lp->ndim != 3)
    return ts_rt_fail(c, "Expected %d-dimensional tensor, but got %d-dimensional tensor for argument #1 'log_probs' "
                         "(while checking arguments for ctc_loss_cpu)",
                      3, (int)lp->ndim);
  if (tg->ndim < 1 || tg->ndim > 2)
    return ts_rt_fail(c, "Expected 1 to 2 dimensions, but got %d-dimensional tensor for argument #2 'targets' (while "
                         "checking arguments for ctc_loss_cpu)",
                      (int)tg->ndim);
  if (!ts_dtype_is_float((ts_dtype)lp->dtype)) return nnu_not_impl(c, "ctc_loss_cpu", lp->dtype);
  int64_t T = lp->sizes[0], N = lp->sizes[1], C = lp->sizes[2];
  if (!(blank >= 0 && blank < C)) return ts_rt_fail(c, "blank must be in label range");
  if (nil != N) return ts_rt_fail(c, "input_lengths must be of size batch_size");
  if (ntl != N) return ts_rt_fail(c, "target_lengths must be of size batch_size");
  int64_t maxL = 0, pos = 0;
  for (int64_t b = 0; b < N; b++) {
    if (tl[b] < 0 || il[b] < 0) return ts_rt_fail(c, "ctc_loss: lengths must be non-negative");
    if (tl[b] > maxL) maxL = tl[b];
    if (pos > INT64_MAX - tl[b]) return ts_rt_oom(c);
    pos += tl[b];
  }
  if (tg->ndim == 1 && tg->sizes[0] != pos)
    return ts_rt_fail(c, "Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 "
                         "'targets' (while checking arguments for ctc_loss_cpu)",
                      (long long)pos, (long long)tg->sizes[0]);
  if (tg->ndim == 2) {
    if (tg->sizes[0] != N)
      return ts_rt_fail(c, "Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 "
                           "'targets' (while checking arguments for ctc_loss_cpu)",
                        (long long)N, (long long)tg->sizes[0]);
    if (tg->sizes[1] < maxL)
      return ts_rt_fail(c, "Expected tensor to have size at least %lld at dimension 1, but got size %lld for argument "
                           "#2 'targets' (while checking arguments for ctc_loss_cpu)",
                        (long long)maxL, (long long)tg->sizes[1]);
  }
  for (int64_t b = 0; b < N; b++)
    if (il[b] > T)
      return ts_rt_fail(c, "Expected input_lengths to have value at most %lld, but got value %lld (while checking "
                           "arguments for ctc_loss_cpu)",
                        (long long)T, (long long)il[b]);
  int64_t S = 2 * maxL + 1, asz[3] = {N, T, S}, nsz[1] = {N};
  ts_rt_tensor *lpd = ts_rt_tensor_to_dtype(c, lp, TS_DT_FLOAT64);
  ts_rt_tensor *tgd = lpd ? ts_rt_tensor_to_dtype(c, tg, TS_DT_INT64) : NULL;
  ts_rt_tensor *al = tgd ? ts_rt_tensor_new(c, TS_DT_FLOAT64, 3, asz, false) : NULL;
  ts_rt_tensor *nl = al ? ts_rt_tensor_new(c, TS_DT_FLOAT64, 1, nsz, false) : NULL;
  bool ok = false;
  if (!nl) goto done;
  const double *L = T && N && C ? ts_rt_tensor_data(lpd) : NULL;
  const int64_t *tv = ts_rt_tensor_numel(tgd) ? ts_rt_tensor_data(tgd) : NULL;
  double *A = ts_rt_tensor_numel(al) ? ts_rt_tensor_data(al) : NULL;
  double *nv = N ? ts_rt_tensor_data(nl) : NULL;
  for (int64_t i = 0; i < N * T * S; i++) A[i] = -INFINITY;
  pos = 0;
  for (int64_t b = 0; b < N; b++) {
    const int64_t *tb = tg->ndim == 1 ? tv + pos : tv + b * tg->sizes[1];
    pos += tl[b];
    int64_t Lb = tl[b], Tb = il[b], Sb = 2 * Lb + 1;
    for (int64_t k = 0; k < Lb; k++)
      if (tb[k] < 0 || tb[k] >= C) {
        ts_rt_fail(c, "ctc_loss: target %lld is out of range for %lld classes", (long long)tb[k], (long long)C);
        goto done;
      }
#define LS_TP(s) ((s) % 2 == 0 ? blank : tb[(s) / 2])
#define LS_LP(t, k) L[((t) * N + b) * C + (k)]
    double *Ab = A + b * T * S;
    if (Tb == 0) {
      nv[b] = Lb == 0 ? 0 : INFINITY;
      continue;
    }
    Ab[0] = LS_LP(0, blank);
    if (Lb > 0) Ab[1] = LS_LP(0, LS_TP(1));
    for (int64_t t = 1; t < Tb; t++)
      for (int64_t s = 0; s < Sb; s++) {
        int64_t cur = LS_TP(s);
        double la1 = Ab[(t - 1) * S + s], la2 = -INFINITY, la3 = -INFINITY;
        if (s > 0) la2 = Ab[(t - 1) * S + s - 1];
        if (s > 1 && LS_TP(s - 2) != cur) la3 = Ab[(t - 1) * S + s - 2];
        Ab[t * S + s] = ls_lse3(la1, la2, la3) + LS_LP(t, cur);
      }
    if (Lb == 0) {
      nv[b] = -Ab[(Tb - 1) * S];
    } else {
      double l1 = Ab[(Tb - 1) * S + 2 * Lb], l2 = Ab[(Tb - 1) * S + 2 * Lb - 1];
      nv[b] = -ls_lse3(l1, l2, -INFINITY);
    }
#undef LS_TP
#undef LS_LP
  }
  ok = true;
done:
  if (lpd) ts_rt_tensor_release(lpd);
  if (tgd) ts_rt_tensor_release(tgd);
  if (!ok) {
    if (al) ts_rt_tensor_release(al);
    if (nl) ts_rt_tensor_release(nl);
    return false;
  }
  *nll_out = nl;
  *alpha_out = al;
  return true;
}

/* ctc_loss.IntList / .Tensor(log_probs, targets, input_lengths,
 * target_lengths, blank, reduction, zero_infinity); log_probs [T, N, C] or
 * unbatched [T, C] */
static bool ls_k_ctc_loss(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *lp, *tg;
  int64_t blank, red, nil = 0, ntl = 0, *il = NULL, *tl = NULL;
  bool zinf;
  if (!ts_rt_arg_tensor(c, call, 0, &lp) || !ts_rt_arg_tensor(c, call, 1, &tg) || !ts_rt_arg_int(c, call, 4, &blank) ||
      !ts_rt_arg_int(c, call, 5, &red) || !ts_rt_arg_bool(c, call, 6, &zinf))
    return false;
  if (!ls_lengths(c, call, 2, "input_lengths", &il, &nil)) return false;
  if (!ls_lengths(c, call, 3, "target_lengths", &tl, &ntl)) {
    ts_rt_free(il);
    return false;
  }
  bool batched = lp->ndim == 3;
  ts_rt_tensor *lp3 = batched ? (ts_rt_tensor_retain(lp), lp) : ts_rt_unsqueeze(c, lp, 1);
  ts_rt_tensor *tg2 = NULL, *nl = NULL, *al = NULL, *r = NULL;
  /* an unbatched target is one row */
  if (lp3) tg2 = batched || tg->ndim != 1 ? (ts_rt_tensor_retain(tg), tg) : ts_rt_unsqueeze(c, tg, 0);
  if (tg2 && ls_ctc(c, lp3, tg2, il, nil, tl, ntl, blank, &nl, &al)) {
    double *nv = ts_rt_tensor_numel(nl) ? ts_rt_tensor_data(nl) : NULL;
    int64_t N = ts_rt_tensor_numel(nl);
    if (zinf)
      for (int64_t b = 0; b < N; b++)
        if (nv[b] == INFINITY) nv[b] = 0;
    ts_rt_tensor *res = ts_rt_tensor_to_dtype(c, nl, (ts_dtype)lp->dtype);
    if (res && red == LS_MEAN) {
      /* (res / clamp_min(target_lengths, 1)).mean(), in the dtype */
      int64_t sz[1] = {N};
      ts_rt_tensor *tlt = ts_rt_tensor_new(c, (ts_dtype)lp->dtype, 1, sz, false);
      ts_rt_tensor *q = NULL;
      if (tlt) {
        for (int64_t b = 0; b < N; b++)
          ts_rt_store_f64((char *)ts_rt_tensor_data(tlt) + (size_t)b * ts_dtype_size((ts_dtype)lp->dtype),
                          (ts_dtype)lp->dtype, (double)(tl[b] < 1 ? 1 : tl[b]));
        q = ts_rt_binary_op(c, TS_PW_div, res, tlt);
        ts_rt_tensor_release(tlt);
      }
      r = q ? ts_rt_mean(c, q, NULL, 0, false, TS_DT_NONE) : NULL;
      if (q) ts_rt_tensor_release(q);
      ts_rt_tensor_release(res);
    } else if (res && red == LS_SUM) {
      r = ts_rt_sum(c, res, NULL, 0, false, TS_DT_NONE);
      ts_rt_tensor_release(res);
    } else if (res) {
      r = batched ? res : ts_rt_squeeze_dim(c, res, 0);
      if (!batched) ts_rt_tensor_release(res);
    }
  }
  ts_rt_tensor *tmp[4] = {lp3, tg2, nl, al};
  for (int k = 0; k < 4; k++)
    if (tmp[k]) ts_rt_tensor_release(tmp[k]);
  ts_rt_free(il);
  ts_rt_free(tl);
  return nnu_ret(call, r);
}

/* _ctc_loss(log_probs [T, N, C], targets, input_lengths, target_lengths,
 * blank, zero_infinity) -> (neg_log_likelihood, log_alpha) */
static bool ls_k__ctc_loss(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *lp, *tg, *nl = NULL, *al = NULL;
  int64_t blank, nil = 0, ntl = 0, *il = NULL, *tl = NULL;
  bool zinf;
  if (!ts_rt_arg_tensor(c, call, 0, &lp) || !ts_rt_arg_tensor(c, call, 1, &tg) || !ts_rt_arg_int(c, call, 4, &blank) ||
      !ts_rt_arg_bool(c, call, 5, &zinf))
    return false;
  if (!ls_lengths(c, call, 2, "input_lengths", &il, &nil)) return false;
  bool ok = false;
  if (ls_lengths(c, call, 3, "target_lengths", &tl, &ntl) && ls_ctc(c, lp, tg, il, nil, tl, ntl, blank, &nl, &al)) {
    /* ATen's forward leaves zero_infinity to the backward pass */
    ts_rt_tensor *a = ts_rt_tensor_to_dtype(c, nl, (ts_dtype)lp->dtype);
    ts_rt_tensor *b = a ? ts_rt_tensor_to_dtype(c, al, (ts_dtype)lp->dtype) : NULL;
    if (b) {
      call->out[0] = ts_iv_tensor(a);
      call->out[1] = ts_iv_tensor(b);
      ok = true;
    } else if (a) {
      ts_rt_tensor_release(a);
    }
    ts_rt_tensor_release(nl);
    ts_rt_tensor_release(al);
  }
  ts_rt_free(il);
  ts_rt_free(tl);
  return ok;
}

/* _infer_size(int[] a, int[] b): the broadcast shape of two sizes (what
 * F.binary_cross_entropy checks its weight with). */
static bool ls_k_infer_size(ts_rt_ctx *c, ts_rt_call *call) {
  int64_t a[TS_RT_MAX_DIMS], b[TS_RT_MAX_DIMS], o[TS_RT_MAX_DIMS];
  uint32_t na = 0, nb = 0;
  int32_t no = 0;
  if (!ts_rt_arg_ints(c, call, 0, a, TS_RT_MAX_DIMS, &na, 0) || !ts_rt_arg_ints(c, call, 1, b, TS_RT_MAX_DIMS, &nb, 0))
    return false;
  /* ATen's infer_size names b's size first in its message */
  if (!ts_rt_broadcast_shapes(c, (int32_t)nb, b, (int32_t)na, a, &no, o)) return false;
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_INT), (uint32_t)no);
  if (!l) return false;
  for (int32_t i = 0; i < no; i++)
    if (!ts_rt_list_append(c, l, ts_iv_int(o[i]))) {
      ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
      return false;
    }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_loss[] = {
    {"aten::_ctc_loss", ls_k__ctc_loss},
    {"aten::_ctc_loss.Tensor", ls_k__ctc_loss},
    {"aten::_infer_size", ls_k_infer_size},
    {"aten::_pdist_forward", ls_k_pdist},
    {"aten::bilinear", ls_k_bilinear},
    {"aten::binary_cross_entropy", ls_k_bce},
    {"aten::binary_cross_entropy_with_logits", ls_k_bce_logits},
    {"aten::cosine_embedding_loss", ls_k_cosine_embedding},
    {"aten::cross_entropy_loss", ls_k_cross_entropy},
    {"aten::ctc_loss.IntList", ls_k_ctc_loss},
    {"aten::ctc_loss.Tensor", ls_k_ctc_loss},
    {"aten::hinge_embedding_loss", ls_k_hinge},
    {"aten::huber_loss", ls_k_huber},
    {"aten::kl_div", ls_k_kl_div},
    {"aten::l1_loss", ls_k_l1},
    {"aten::margin_ranking_loss", ls_k_margin_ranking},
    {"aten::mse_loss", ls_k_mse},
    {"aten::multi_margin_loss", ls_k_multi_margin},
    {"aten::multilabel_margin_loss", ls_k_multilabel_margin},
    {"aten::nll_loss", ls_k_nll},
    {"aten::nll_loss2d", ls_k_nll2d},
    {"aten::nll_loss_nd", ls_k_nll_nd},
    {"aten::pairwise_distance", ls_k_pairwise},
    {"aten::pdist", ls_k_pdist},
    {"aten::poisson_nll_loss", ls_k_poisson},
    {"aten::smooth_l1_loss", ls_k_smooth_l1},
    {"aten::soft_margin_loss", ls_k_soft_margin},
    {"aten::triplet_margin_loss", ls_k_triplet},
    {NULL, NULL},
};
