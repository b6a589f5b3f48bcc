/* runtime/kernels/fft.c: the torch.fft family (fft_fft ... fft_ihfftn,
 * fftshift, fftfreq), stft and istft, and the window functions, with
 * PyTorch 1.13's argument handling (SpectralOps.cpp: the default sizes and
 * dims, resizing by zero-padding or trimming, the norm modes, hfft/ihfft as
 * conjugated c2r/r2c) and its messages.
 *
 * Every transform runs in double on a contiguous complex128 buffer, one
 * lane at a time: radix-2 for powers of two, a direct sum for other lengths
 * up to 32, Bluestein's chirp-z (through a power-of-two convolution) for
 * the rest, so any length costs O(n log n); results are rounded to the
 * output dtype once at the end (PyTorch uses pocketfft in the input's
 * precision, so float32 results here are at least as close to exact). */
#include <math.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define FF_MAXD TS_RT_MAX_DIMS
#define FF_PI 3.14159265358979323846

/* ------------------------------------------------------ 1-d transforms */

/* w[k] = exp(sign * 2 pi i k / n) for k < n, the angle reduced exactly. */
static void ff_twiddles(double *w, int64_t n, int sign) {
  for (int64_t k = 0; k < n; k++) {
    double a = 2.0 * FF_PI * (double)k / (double)n;
    w[2 * k] = cos(a);
    w[2 * k + 1] = sign * sin(a);
  }
}

/* In-place radix-2 transform of n (a power of two) complex values. */
static void ff_radix2(double *x, int64_t n, const double *w) {
  for (int64_t i = 1, j = 0; i < n; i++) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double t0 = x[2 * i], t1 = x[2 * i + 1];
      x[2 * i] = x[2 * j], x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = t0, x[2 * j + 1] = t1;
    }
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    int64_t half = len >> 1, step = n / len;
    for (int64_t s = 0; s < n; s += len)
      for (int64_t k = 0; k < half; k++) {
        double wr = w[2 * k * step], wi = w[2 * k * step + 1];
        double *a = x + 2 * (s + k), *b = x + 2 * (s + k + half);
        double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
        b[0] = a[0] - br, b[1] = a[1] - bi;
        a[0] += br, a[1] += bi;
      }
  }
}

/* A plan for one length and sign: scratch and tables, made once per
 * transformed dim. */
typedef struct ff_plan {
  int64_t n, m; /* m: Bluestein's power-of-two length, else 0 */
  int sign;
  double *w;     /* n twiddles (radix-2 / direct) or m (Bluestein's inner) */
  double *chirp; /* Bluestein: n chirp values */
  double *bf;    /* Bluestein: the transformed conjugate chirp, m values */
  double *tmp;   /* n (direct) or m (Bluestein) scratch */
} ff_plan;

static void ff_plan_free(ff_plan *p) {
  ts_rt_free(p->w);
  ts_rt_free(p->chirp);
  ts_rt_free(p->bf);
  ts_rt_free(p->tmp);
}

static double *ff_alloc(int64_t ncomplex) { return ts_rt_malloc((size_t)(ncomplex > 0 ? ncomplex : 1) * 16); }

/* k * k mod m without overflow (k < m < 2^62). */
static int64_t ff_sqmod(int64_t k, int64_t m) {
  uint64_t a = (uint64_t)k, r = 0, b = (uint64_t)k, mm = (uint64_t)m;
  if (a < (1u << 31)) return (int64_t)((a * a) % mm);
  for (; b; b >>= 1, a = (a << 1) % mm)
    if (b & 1) r = (r + a) % mm;
  return (int64_t)r;
}

static bool ff_plan_init(ts_rt_ctx *c, ff_plan *p, int64_t n, int sign) {
  memset(p, 0, sizeof *p);
  p->n = n;
  p->sign = sign;
  if ((n & (n - 1)) == 0 || n <= 32) {
    p->w = ff_alloc(n);
    p->tmp = ff_alloc(n);
    if (!p->w || !p->tmp) return ff_plan_free(p), ts_rt_oom(c);
    ff_twiddles(p->w, n, sign);
    return true;
  }
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  p->m = m;
  p->w = ff_alloc(m);
  p->chirp = ff_alloc(n);
  p->bf = ff_alloc(m);
  p->tmp = ff_alloc(m);
  if (!p->w || !p->chirp || !p->bf || !p->tmp) return ff_plan_free(p), ts_rt_oom(c);
  ff_twiddles(p->w, m, -1);
  /* chirp[k] = exp(sign * pi i k^2 / n), k^2 reduced mod 2n exactly */
  for (int64_t k = 0; k < n; k++) {
    int64_t q = ff_sqmod(k, 2 * n);
    double a = FF_PI * (double)q / (double)n;
    p->chirp[2 * k] = cos(a);
    p->chirp[2 * k + 1] = sign * sin(a);
  }
  memset(p->bf, 0, (size_t)m * 16);
  for (int64_t k = 0; k < n; k++) {
    p->bf[2 * k] = p->chirp[2 * k], p->bf[2 * k + 1] = -p->chirp[2 * k + 1];
    if (k) p->bf[2 * (m - k)] = p->chirp[2 * k], p->bf[2 * (m - k) + 1] = -p->chirp[2 * k + 1];
  }
  ff_radix2(p->bf, m, p->w);
  return true;
}

/* x[k] <- sum_j x[j] exp(sign 2 pi i jk / n), unnormalised. */
static void ff_plan_run(ff_plan *p, double *x) {
  int64_t n = p->n;
  if (n <= 1) return;
  if ((n & (n - 1)) == 0) {
    ff_radix2(x, n, p->w);
    return;
  }
  if (!p->m) {
    for (int64_t k = 0; k < n; k++) {
      double sr = 0, si = 0;
      for (int64_t j = 0, idx = 0; j < n; j++, idx = idx + k >= n ? idx + k - n : idx + k) {
        double wr = p->w[2 * idx], wi = p->w[2 * idx + 1];
        sr += x[2 * j] * wr - x[2 * j + 1] * wi;
        si += x[2 * j] * wi + x[2 * j + 1] * wr;
      }
      p->tmp[2 * k] = sr, p->tmp[2 * k + 1] = si;
    }
    memcpy(x, p->tmp, (size_t)n * 16);
    return;
  }
  int64_t m = p->m;
  double *a = p->tmp;
  memset(a, 0, (size_t)m * 16);
  for (int64_t k = 0; k < n; k++) {
    double cr = p->chirp[2 * k], ci = p->chirp[2 * k + 1];
    a[2 * k] = x[2 * k] * cr - x[2 * k + 1] * ci;
    a[2 * k + 1] = x[2 * k] * ci + x[2 * k + 1] * cr;
  }
  ff_radix2(a, m, p->w);
  for (int64_t k = 0; k < m; k++) {
    double ar = a[2 * k], ai = a[2 * k + 1], br = p->bf[2 * k], bi = p->bf[2 * k + 1];
    /* times b, then conjugated: the inverse transform as a forward one */
    a[2 * k] = ar * br - ai * bi;
    a[2 * k + 1] = -(ar * bi + ai * br);
  }
  ff_radix2(a, m, p->w);
  for (int64_t k = 0; k < n; k++) {
    double cr = a[2 * k] / (double)m, ci = -a[2 * k + 1] / (double)m;
    double hr = p->chirp[2 * k], hi = p->chirp[2 * k + 1];
    x[2 * k] = cr * hr - ci * hi;
    x[2 * k + 1] = cr * hi + ci * hr;
  }
}

/* Transforms a contiguous complex128 tensor in place along dim d. */
static bool ff_dim(ts_rt_ctx *c, ts_rt_tensor *z, int64_t d, int sign) {
  int64_t n = z->sizes[d];
  int64_t numel = ts_rt_tensor_numel(z);
  if (numel == 0 || n <= 1) return true;
  int64_t inner = z->strides[d], outer = numel / (n * inner);
  ff_plan p;
  if (!ff_plan_init(c, &p, n, sign)) return false;
  double *lane = ff_alloc(n);
  if (!lane) return ff_plan_free(&p), ts_rt_oom(c);
  double *base = ts_rt_tensor_data(z);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double *x = base + 2 * (o * n * inner + i);
      for (int64_t k = 0; k < n; k++) lane[2 * k] = x[2 * k * inner], lane[2 * k + 1] = x[2 * k * inner + 1];
      ff_plan_run(&p, lane);
      for (int64_t k = 0; k < n; k++) x[2 * k * inner] = lane[2 * k], x[2 * k * inner + 1] = lane[2 * k + 1];
    }
  ts_rt_free(lane);
  ff_plan_free(&p);
  return true;
}

/* ------------------------------------------------- PyTorch's arguments */

enum { FF_NONE = 0, FF_ROOT = 1, FF_BYN = 2 };

/* norm_from_string: None / "backward" scale the inverse, "forward" the
 * forward transform, "ortho" both by 1/sqrt(n). */
static bool ff_norm(ts_rt_ctx *c, const ts_rt_call *call, uint32_t i, bool forward, int *mode) {
  if (call->in[i].tag == TS_IV_NONE) {
    *mode = forward ? FF_NONE : FF_BYN;
    return true;
  }
  const ts_rt_str *s;
  if (!ts_rt_arg_str(c, call, i, &s)) return false;
  if (s->len == 8 && !memcmp(s->data, "backward", 8)) *mode = forward ? FF_NONE : FF_BYN;
  else if (s->len == 7 && !memcmp(s->data, "forward", 7)) *mode = forward ? FF_BYN : FF_NONE;
  else if (s->len == 5 && !memcmp(s->data, "ortho", 5)) *mode = FF_ROOT;
  else return ts_rt_fail(c, "Invalid normalization mode: \"%.*s\"", (int)(s->len > 64 ? 64 : s->len), s->data);
  return true;
}

/* maybe_wrap_dim without wrap_scalar. */
static bool ff_wrap(ts_rt_ctx *c, int64_t dim, int32_t ndim, int64_t *out) {
  if (ndim == 0) return ts_rt_fail(c, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
  return ts_rt_wrap_dim(c, dim, ndim, out);
}

/* promote_tensor_fft: integers and bool as float32; half and bfloat16
 * refused on the CPU. The complex dtype of the result. */
static bool ff_complex_dtype(ts_rt_ctx *c, const ts_rt_tensor *x, ts_dtype *out) {
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16) return ts_rt_fail(c, "Unsupported dtype %s", ts_rt_dtype_name(dt));
  *out = dt == TS_DT_FLOAT64 || dt == TS_DT_COMPLEX128 ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64;
  return true;
}

static ts_dtype ff_real_of(ts_dtype cdt) { return cdt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32; }

/* x as a new contiguous complex128 tensor, each dims[i] resized to
 * sizes[i] (zero-padded or trimmed at the end: resize_fft_input). */
static ts_rt_tensor *ff_load(ts_rt_ctx *c, const ts_rt_tensor *x, const int64_t *dims, const int64_t *sizes, int nd) {
  int64_t shape[FF_MAXD];
  memcpy(shape, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  for (int i = 0; i < nd; i++) shape[dims[i]] = sizes[i];
  bool grow = false;
  for (int i = 0; i < nd; i++) grow |= sizes[i] > x->sizes[dims[i]];
  ts_rt_tensor *z = ts_rt_tensor_new(c, TS_DT_COMPLEX128, x->ndim, shape, grow);
  if (!z) return NULL;
  /* the common part: both narrowed to the smaller size per dim */
  ts_rt_tensor *src = (ts_rt_tensor *)x, *dst = z;
  ts_rt_tensor_retain(src);
  ts_rt_tensor_retain(dst);
  bool ok = true;
  for (int i = 0; i < nd && ok; i++) {
    int64_t k = sizes[i] < x->sizes[dims[i]] ? sizes[i] : x->sizes[dims[i]];
    ts_rt_tensor *s2 = ts_rt_narrow(c, src, dims[i], 0, k), *d2 = s2 ? ts_rt_narrow(c, dst, dims[i], 0, k) : NULL;
    ts_rt_tensor_release(src);
    ts_rt_tensor_release(dst);
    src = s2, dst = d2;
    if (!s2 || !d2) ok = false;
  }
  if (ok) ok = ts_rt_tensor_copy_(c, dst, src);
  if (src) ts_rt_tensor_release(src);
  if (dst) ts_rt_tensor_release(dst);
  if (!ok) {
    ts_rt_tensor_release(z);
    return NULL;
  }
  return z;
}

static void ff_scale(ts_rt_tensor *z, int mode, double n) {
  if (mode == FF_NONE) return;
  double f = mode == FF_BYN ? 1.0 / n : 1.0 / sqrt(n);
  double *p = ts_rt_tensor_data(z);
  int64_t cnt = 2 * ts_rt_tensor_numel(z);
  for (int64_t i = 0; i < cnt; i++) p[i] *= f;
}

static void ff_conj(ts_rt_tensor *z) {
  double *p = ts_rt_tensor_data(z);
  int64_t cnt = ts_rt_tensor_numel(z);
  for (int64_t i = 0; i < cnt; i++) p[2 * i + 1] = -p[2 * i + 1];
}

/* z (complex128) converted to dt and handed out (z released). */
static bool ff_out(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *z, ts_dtype dt) {
  ts_rt_tensor *r;
  if (ts_dtype_is_complex(dt)) {
    r = dt == TS_DT_COMPLEX128 ? (ts_rt_tensor_retain(z), z) : ts_rt_tensor_to_dtype(c, z, dt);
  } else {
    /* the real parts (no warning: PyTorch's c2r makes real values) */
    int64_t n = ts_rt_tensor_numel(z);
    r = ts_rt_tensor_new(c, dt, z->ndim, z->sizes, false);
    if (r) {
      const double *p = ts_rt_tensor_data(z);
      if (dt == TS_DT_FLOAT64) {
        double *o = ts_rt_tensor_data(r);
        for (int64_t i = 0; i < n; i++) o[i] = p[2 * i];
      } else {
        float *o = ts_rt_tensor_data(r);
        for (int64_t i = 0; i < n; i++) o[i] = (float)p[2 * i];
      }
    }
  }
  ts_rt_tensor_release(z);
  if (!r) return false;
  call->out[0] = ts_iv_tensor(r);
  return true;
}

/* The full spectrum of length n along dim d from its first n/2+1 values
 * (Hermitian symmetry: X[n-k] = conj(X[k])); z is released. */
static ts_rt_tensor *ff_hermitian_full(ts_rt_ctx *c, ts_rt_tensor *z, int64_t d, int64_t n) {
  int64_t shape[FF_MAXD];
  memcpy(shape, z->sizes, sizeof(int64_t) * (size_t)z->ndim);
  shape[d] = n;
  ts_rt_tensor *f = ts_rt_tensor_new(c, TS_DT_COMPLEX128, z->ndim, shape, false);
  if (!f) {
    ts_rt_tensor_release(z);
    return NULL;
  }
  int64_t h = z->sizes[d], inner = z->strides[d], outer = ts_rt_tensor_numel(z) / (h * inner > 0 ? h * inner : 1);
  const double *src = ts_rt_tensor_data(z);
  double *dst = ts_rt_tensor_data(f);
  if (ts_rt_tensor_numel(f) > 0)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t k = 0; k < n; k++) {
        bool mirror = k >= h;
        int64_t sk = mirror ? n - k : k;
        const double *s = src + 2 * ((o * h + sk) * inner);
        double *t = dst + 2 * ((o * n + k) * inner);
        for (int64_t i = 0; i < inner; i++) t[2 * i] = s[2 * i], t[2 * i + 1] = mirror ? -s[2 * i + 1] : s[2 * i + 1];
      }
  ts_rt_tensor_release(z);
  return f;
}

/* Keeps the first k values along dim d (a contiguous copy); z released. */
static ts_rt_tensor *ff_trim(ts_rt_ctx *c, ts_rt_tensor *z, int64_t d, int64_t k) {
  ts_rt_tensor *v = ts_rt_narrow(c, z, d, 0, k);
  ts_rt_tensor *r = v ? ts_rt_clone(c, v) : NULL;
  if (v) ts_rt_tensor_release(v);
  ts_rt_tensor_release(z);
  return r;
}

/* The shape and dims of an n-d transform (canonicalize_fft_shape_and_dim_
 * args): s and dim optional; s[i] == -1 is the input's size. */
static bool ff_shape_dims(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_tensor *x, uint32_t is, uint32_t id,
                          int64_t *shape, int64_t *dims, int *nd, bool *s_given, bool *s_last_default) {
  int64_t sv[FF_MAXD], dv[FF_MAXD];
  uint32_t ns = 0, ndim = 0;
  bool have_s = call->in[is].tag != TS_IV_NONE, have_d = call->in[id].tag != TS_IV_NONE;
  if (have_s && !ts_rt_arg_ints(c, call, is, sv, FF_MAXD, &ns, 1)) return false;
  if (have_d && !ts_rt_arg_ints(c, call, id, dv, FF_MAXD, &ndim, 1)) return false;
  if (have_d) {
    for (uint32_t i = 0; i < ndim; i++)
      if (!ff_wrap(c, dv[i], x->ndim, &dv[i])) return false;
    for (uint32_t i = 0; i < ndim; i++)
      for (uint32_t j = i + 1; j < ndim; j++)
        if (dv[i] == dv[j]) return ts_rt_fail(c, "FFT dims must be unique");
  }
  if (have_s) {
    if (have_d && ndim != ns) return ts_rt_fail(c, "When given, dim and shape arguments must have the same length");
    if ((int64_t)ns > x->ndim)
      return ts_rt_fail(c, "Got shape with %u values but input tensor only has %d dimensions.", (unsigned)ns,
                        (int)x->ndim);
    if (!have_d)
      for (uint32_t i = 0; i < ns; i++) dv[i] = x->ndim - (int64_t)ns + i;
    for (uint32_t i = 0; i < ns; i++) shape[i] = sv[i] == -1 ? x->sizes[dv[i]] : sv[i];
    *nd = (int)ns;
  } else if (!have_d) {
    for (int32_t i = 0; i < x->ndim; i++) shape[i] = x->sizes[i], dv[i] = i;
    *nd = x->ndim;
  } else {
    for (uint32_t i = 0; i < ndim; i++) shape[i] = x->sizes[dv[i]];
    *nd = (int)ndim;
  }
  for (int i = 0; i < *nd; i++) {
    dims[i] = dv[i];
    if (shape[i] <= 0) return ts_rt_fail(c, "Invalid number of data points (%lld) specified", (long long)shape[i]);
  }
  *s_given = have_s;
  *s_last_default = !have_s || (ns > 0 && sv[ns - 1] == -1);
  return true;
}

/* ------------------------------------------------------------ the ops */

typedef enum { FF_C2C, FF_R2C, FF_C2R } ff_kind;

/* One n-d transform as the fft_* ops define it:
 * - C2C (fft, ifft, fftn, ifftn): every dim with `sign`;
 * - R2C (rfft*, ihfft*): real input, every dim, the last kept to n/2+1;
 *   ihfft's last dim uses the conjugate sign (conj of a forward r2c);
 * - C2R (irfft*, hfft*): the other dims with `sign`, then the last from
 *   its half spectrum to `last_n` real values (hfft conjugates first).
 * norm_n: the product of the signal lengths. */
static bool ff_transform(ts_rt_ctx *c, ts_rt_call *call, const ts_rt_tensor *x, ff_kind kind, const int64_t *dims,
                         const int64_t *shape, int nd, int sign, int last_sign, bool conj_in, bool conj_out, int norm,
                         int64_t last_n) {
  ts_dtype cdt = TS_DT_COMPLEX64;
  if (!ff_complex_dtype(c, x, &cdt)) return false;
  ts_rt_tensor *z = ff_load(c, x, dims, shape, nd);
  if (!z) return false;
  if (conj_in) ff_conj(z);
  double nn = 1;
  for (int i = 0; i < nd; i++) nn *= (double)shape[i];
  bool ok = true;
  for (int i = 0; i < nd - 1 && ok; i++) ok = ff_dim(c, z, dims[i], sign);
  if (nd > 0 && ok) {
    int64_t d = dims[nd - 1];
    if (kind == FF_C2R) {
      if (conj_out) ff_conj(z); /* hfftn conjugates after the c2c dims */
      z = ff_hermitian_full(c, z, d, last_n);
      ok = z && ff_dim(c, z, d, last_sign);
      nn = nn / (double)shape[nd - 1] * (double)last_n;
    } else {
      ok = ff_dim(c, z, d, last_sign);
      if (ok && kind == FF_R2C) ok = (z = ff_trim(c, z, d, shape[nd - 1] / 2 + 1)) != NULL;
    }
  }
  if (!ok) {
    if (z) ts_rt_tensor_release(z);
    return false;
  }
  ff_scale(z, norm, nn);
  return ff_out(c, call, z, kind == FF_C2R ? ff_real_of(cdt) : cdt);
}

/* fft / ifft / rfft / irfft / hfft / ihfft (self, n, dim, norm) */
static bool ff_1d(ts_rt_ctx *c, ts_rt_call *call, const char *name, ff_kind kind, bool forward) {
  ts_rt_tensor *x;
  int64_t n = 0, dim;
  bool has_n;
  int norm;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_opt_int(c, call, 1, &n, &has_n) ||
      !ts_rt_arg_int(c, call, 2, &dim))
    return false;
  bool cx = ts_dtype_is_complex((ts_dtype)x->dtype);
  if (kind == FF_R2C && cx) return ts_rt_fail(c, "%s expects a real input tensor, but got %s", name, ts_rt_dtype_name((ts_dtype)x->dtype));
  if (!ff_wrap(c, dim, x->ndim, &dim)) return false;
  int64_t len = n;
  if (kind == FF_C2R) {
    if (!has_n) len = 2 * (x->sizes[dim] - 1);
    if (len < 1) return ts_rt_fail(c, "Invalid number of data points (%lld) specified", (long long)len);
  } else {
    if (!has_n) len = x->sizes[dim];
    if (len < 1) return ts_rt_fail(c, "Invalid number of data points (%lld) specified", (long long)len);
  }
  if (!ff_norm(c, call, 3, forward, &norm)) return false;
  int64_t shape = kind == FF_C2R ? (has_n ? len / 2 + 1 : x->sizes[dim]) : len;
  int sign = forward ? -1 : 1;
  if (kind == FF_C2R) /* irfft: backward c2r; hfft: c2r of the conjugate */
    return ff_transform(c, call, x, kind, &dim, &shape, 1, 1, 1, forward, false, norm, len);
  if (kind == FF_R2C) /* rfft: forward; ihfft: conj of forward = backward sign */
    return ff_transform(c, call, x, kind, &dim, &shape, 1, sign, sign, false, false, norm, 0);
  return ff_transform(c, call, x, kind, &dim, &shape, 1, sign, sign, false, false, norm, 0);
}

static bool k_fft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "fft", FF_C2C, true); }
static bool k_ifft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "ifft", FF_C2C, false); }
static bool k_rfft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "rfft", FF_R2C, true); }
static bool k_ihfft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "ihfft", FF_R2C, false); }
static bool k_irfft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "irfft", FF_C2R, false); }
static bool k_hfft(ts_rt_ctx *c, ts_rt_call *call) { return ff_1d(c, call, "hfft", FF_C2R, true); }

/* the n-d forms (self, s, dim, norm); the 2-d ones differ only in dim's
 * default, which the schema supplies */
static bool ff_nd(ts_rt_ctx *c, ts_rt_call *call, const char *name, ff_kind kind, bool forward) {
  ts_rt_tensor *x;
  if (!ts_rt_arg_tensor(c, call, 0, &x)) return false;
  bool cx = ts_dtype_is_complex((ts_dtype)x->dtype);
  if (kind == FF_R2C && cx)
    return ts_rt_fail(c, "%s expects a real-valued input tensor, but got %s", name, ts_rt_dtype_name((ts_dtype)x->dtype));
  int64_t shape[FF_MAXD], dims[FF_MAXD];
  int nd = 0, norm = 0;
  bool s_given = false, s_last_default = false;
  if (!ff_shape_dims(c, call, x, 1, 2, shape, dims, &nd, &s_given, &s_last_default)) return false;
  if (kind != FF_C2C && nd == 0) return ts_rt_fail(c, "%s must transform at least one axis", name);
  int64_t last_n = 0;
  if (kind == FF_C2R) {
    last_n = s_last_default ? 2 * (x->sizes[dims[nd - 1]] - 1) : shape[nd - 1];
    if (last_n < 1) return ts_rt_fail(c, "Invalid number of data points (%lld) specified", (long long)last_n);
    shape[nd - 1] = last_n / 2 + 1;
  }
  if (!ff_norm(c, call, 3, forward, &norm)) return false;
  int sign = forward ? -1 : 1;
  switch (kind) {
  case FF_C2C: return ff_transform(c, call, x, kind, dims, shape, nd, sign, sign, false, false, norm, 0);
  case FF_R2C: /* rfftn: all forward; ihfftn: conj(rfftn), every dim with the backward sign */
    return ff_transform(c, call, x, kind, dims, shape, nd, sign, sign, false, false, norm, 0);
  case FF_C2R: /* irfftn: all backward; hfftn: forward c2c, conj, backward c2r */
    return ff_transform(c, call, x, kind, dims, shape, nd, forward ? -1 : 1, 1, false, forward, norm, last_n);
  }
  return false;
}

static bool k_fftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "fftn", FF_C2C, true); }
static bool k_ifftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "ifftn", FF_C2C, false); }
static bool k_rfftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "rfftn", FF_R2C, true); }
static bool k_ihfftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "ihfftn", FF_R2C, false); }
static bool k_irfftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "irfftn", FF_C2R, false); }
static bool k_hfftn(ts_rt_ctx *c, ts_rt_call *call) { return ff_nd(c, call, "hfftn", FF_C2R, true); }

/* fftshift / ifftshift (self, dim=None): a roll by n/2 (ifftshift: by
 * (n+1)/2) along each dim, every dim by default; any dtype. */
static bool ff_shift(ts_rt_ctx *c, ts_rt_call *call, bool inverse) {
  ts_rt_tensor *x;
  if (!ts_rt_arg_tensor(c, call, 0, &x)) return false;
  int64_t dims[FF_MAXD];
  uint32_t nd = 0;
  if (call->in[1].tag == TS_IV_NONE) {
    for (int32_t i = 0; i < x->ndim; i++) dims[i] = i;
    nd = (uint32_t)x->ndim;
  } else {
    if (!ts_rt_arg_ints(c, call, 1, dims, FF_MAXD, &nd, 1)) return false;
    for (uint32_t i = 0; i < nd; i++)
      if (!ts_rt_wrap_dim(c, dims[i], x->ndim, &dims[i])) return false;
  }
  ts_rt_tensor *cur = ts_rt_clone(c, x);
  for (uint32_t i = 0; i < nd && cur; i++) {
    int64_t d = dims[i], n = cur->sizes[d];
    int64_t s = n ? (inverse ? (n + 1) / 2 : n / 2) % n : 0;
    if (s == 0) continue;
    ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)cur->dtype, cur->ndim, cur->sizes, false);
    ts_rt_tensor *a = r ? ts_rt_narrow(c, cur, d, 0, n - s) : NULL, *b = a ? ts_rt_narrow(c, r, d, s, n - s) : NULL;
    ts_rt_tensor *a2 = b ? ts_rt_narrow(c, cur, d, n - s, s) : NULL, *b2 = a2 ? ts_rt_narrow(c, r, d, 0, s) : NULL;
    bool ok = b2 && ts_rt_tensor_copy_(c, b, a) && ts_rt_tensor_copy_(c, b2, a2);
    ts_rt_tensor *parts[4] = {a, b, a2, b2};
    for (int k = 0; k < 4; k++)
      if (parts[k]) ts_rt_tensor_release(parts[k]);
    ts_rt_tensor_release(cur);
    cur = ok ? r : NULL;
    if (!ok && r) ts_rt_tensor_release(r);
  }
  if (!cur) return false;
  call->out[0] = ts_iv_tensor(cur);
  return true;
}

static bool k_fftshift(ts_rt_ctx *c, ts_rt_call *call) { return ff_shift(c, call, false); }
static bool k_ifftshift(ts_rt_ctx *c, ts_rt_call *call) { return ff_shift(c, call, true); }

/* fftfreq(n, d) / rfftfreq(n, d): arange, the upper half made negative
 * (fftfreq), times 1 / (n d) in the result's dtype, as ATen computes it. */
static bool ff_freq(ts_rt_ctx *c, ts_rt_call *call, bool onesided) {
  int64_t n;
  double d;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_int(c, call, 0, &n) || !ts_rt_arg_double(c, call, 1, &d) || !ts_rt_arg_opt_dtype(c, call, 2, &dt))
    return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (n < 0) return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)n, (long long)n);
  if (!ts_rt_dtype_is_float(dt))
    return ts_rt_fail(c, "result type Float can't be cast to the desired output type %s", ts_rt_dtype_name(dt));
  int64_t len = onesided ? n / 2 + 1 : n;
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, 1, &len, false);
  if (!r) return false;
  double scale = 1.0 / ((double)n * d);
  char *o = ts_rt_tensor_data(r);
  size_t esz = ts_dtype_size(dt);
  for (int64_t i = 0; i < len; i++) {
    double k = (double)(onesided || i < (n + 1) / 2 ? i : i - n);
    double v = dt == TS_DT_FLOAT64 ? k * scale : (double)((float)k * (float)scale);
    ts_rt_store_f64(o + (size_t)i * esz, dt, v);
  }
  call->out[0] = ts_iv_tensor(r);
  return true;
}

static bool k_fftfreq(ts_rt_ctx *c, ts_rt_call *call) { return ff_freq(c, call, false); }
static bool k_rfftfreq(ts_rt_ctx *c, ts_rt_call *call) { return ff_freq(c, call, true); }

/* ------------------------------------------------------------- windows */

typedef enum { FW_HANN, FW_HAMMING, FW_BLACKMAN, FW_BARTLETT, FW_KAISER } ff_window_kind;

/* I0, the modified Bessel function of order 0, by its power series (its
 * terms all positive: no cancellation; beta up to a few hundred). */
static double ff_i0(double x) {
  double q = x * x / 4, term = 1, sum = 1;
  for (int k = 1; k < 500; k++) {
    term *= q / ((double)k * (double)k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/* The window functions (TensorFactories.cpp): n = 0 empty, n = 1 [1];
 * periodic ones computed at n + 1 points and the last dropped. Computed in
 * double for float64, else in float with ATen's order of operations. */
static bool ff_window(ts_rt_ctx *c, ts_rt_call *call, const char *name, ff_window_kind kind, int nparams) {
  int64_t n;
  bool periodic = true;
  double alpha = kind == FW_HAMMING ? 0.54 : 0.5, beta = kind == FW_HAMMING ? 0.46 : kind == FW_KAISER ? 12.0 : 0.5;
  if (!ts_rt_arg_int(c, call, 0, &n)) return false;
  uint32_t i = 1;
  if (nparams >= 1 && !ts_rt_arg_bool(c, call, i++, &periodic)) return false;
  if (kind == FW_HAMMING && nparams >= 2 && !ts_rt_arg_double(c, call, i++, &alpha)) return false;
  if ((kind == FW_HAMMING || kind == FW_KAISER) && nparams >= (kind == FW_HAMMING ? 3 : 2) &&
      !ts_rt_arg_double(c, call, i++, &beta))
    return false;
  ts_dtype dt = TS_DT_NONE;
  if (!ts_rt_arg_opt_dtype(c, call, i, &dt)) return false;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (!ts_rt_dtype_is_float(dt)) return ts_rt_fail(c, "%s expects floating point dtypes, got: %s", name, ts_rt_dtype_name(dt));
  if (n < 0) return ts_rt_fail(c, "%s requires non-negative window_length, got window_length=%lld", name, (long long)n);
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, 1, &n, false);
  if (!r) return false;
  char *o = ts_rt_tensor_data(r);
  size_t esz = ts_dtype_size(dt);
  bool dbl = dt == TS_DT_FLOAT64;
  int64_t L = periodic ? n + 1 : n;
  for (int64_t k = 0; k < n; k++) {
    double v;
    if (n == 1) v = 1;
    else if (kind == FW_HAMMING || kind == FW_HANN) {
      double step = 2.0 * FF_PI / (double)(L - 1);
      v = dbl ? cos((double)k * step) * -beta + alpha
              : (double)(cosf((float)k * (float)step) * (float)-beta + (float)alpha);
    } else if (kind == FW_BLACKMAN) {
      double step = FF_PI / (double)(L - 1);
      if (dbl) {
        double w = (double)k * step;
        v = cos(w * 4) * 0.08 - cos(w * 2) * 0.5 + 0.42;
      } else {
        float w = (float)k * (float)step;
        v = (double)(cosf(w * 4) * 0.08f - cosf(w * 2) * 0.5f + 0.42f);
      }
    } else if (kind == FW_BARTLETT) {
      double step = 2.0 / (double)(L - 1);
      int64_t first_half = ((L - 1) >> 1) + 1;
      if (dbl) {
        v = (double)k * step;
        if (k >= first_half) v = v * -1 + 2;
      } else {
        float w = (float)k * (float)step;
        if (k >= first_half) w = w * -1.0f + 2.0f;
        v = (double)w;
      }
    } else {
      double a = (double)(L - 1) / 2.0, t = ((double)k - a) / a;
      v = ff_i0(beta * sqrt(1 - t * t)) / ff_i0(beta);
    }
    ts_rt_store_f64(o + (size_t)k * esz, dt, v);
  }
  call->out[0] = ts_iv_tensor(r);
  return true;
}

static bool k_hann0(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hann_window", FW_HANN, 0); }
static bool k_hann1(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hann_window", FW_HANN, 1); }
static bool k_hamming0(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hamming_window", FW_HAMMING, 0); }
static bool k_hamming1(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hamming_window", FW_HAMMING, 1); }
static bool k_hamming2(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hamming_window", FW_HAMMING, 2); }
static bool k_hamming3(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "hamming_window", FW_HAMMING, 3); }
static bool k_blackman0(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "blackman_window", FW_BLACKMAN, 0); }
static bool k_blackman1(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "blackman_window", FW_BLACKMAN, 1); }
static bool k_bartlett0(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "bartlett_window", FW_BARTLETT, 0); }
static bool k_bartlett1(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "bartlett_window", FW_BARTLETT, 1); }
static bool k_kaiser0(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "kaiser_window", FW_KAISER, 0); }
static bool k_kaiser1(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "kaiser_window", FW_KAISER, 1); }
static bool k_kaiser2(ts_rt_ctx *c, ts_rt_call *call) { return ff_window(c, call, "kaiser_window", FW_KAISER, 2); }

/* ---------------------------------------------------------- stft, istft */

/* The window of stft/istft as n_fft complex128 values: win_length values
 * (the window's, or ones) centred between zeros. NULL window: ones. */
static double *ff_stft_window(ts_rt_ctx *c, const ts_rt_tensor *w, int64_t win_length, int64_t n_fft) {
  double *buf = ff_alloc(n_fft);
  if (!buf) return ts_rt_oom(c), NULL;
  memset(buf, 0, (size_t)n_fft * 16);
  int64_t left = (n_fft - win_length) / 2;
  ts_rt_tensor *wc = w ? ts_rt_tensor_to_dtype(c, w, TS_DT_COMPLEX128) : NULL;
  if (w && !wc) return ts_rt_free(buf), NULL;
  for (int64_t k = 0; k < win_length; k++) {
    const double *p = wc ? (const double *)ts_rt_tensor_data(wc) + 2 * k : NULL;
    buf[2 * (left + k)] = p ? p[0] : 1.0;
    buf[2 * (left + k) + 1] = p ? p[1] : 0.0;
  }
  if (wc) ts_rt_tensor_release(wc);
  return buf;
}

/* The element of a padded row: pad_mode reflect / constant / replicate /
 * circular, pad values on each side of a row of len. */
static int64_t ff_pad_index(int64_t j, int64_t pad, int64_t len, int mode) {
  int64_t i = j - pad;
  if (i >= 0 && i < len) return i;
  switch (mode) {
  case 0: return i < 0 ? -i : 2 * (len - 1) - i;      /* reflect */
  case 2: return i < 0 ? 0 : len - 1;                 /* replicate */
  case 3: return ((i % len) + len) % len;             /* circular */
  default: return -1;                                 /* constant: zero */
  }
}

/* stft(self, n_fft, hop_length, win_length, window, [center, pad_mode,]
 * normalized, onesided, return_complex) */
static bool ff_stft(ts_rt_ctx *c, ts_rt_call *call, bool has_center) {
  ts_rt_tensor *x, *w;
  int64_t n_fft, hop = 0, win = 0;
  bool has_hop, has_win, normalized, center = false, has_one = false, one = false, has_rc = false, rc = false;
  int pad_mode = 0;
  uint32_t i = 5;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &n_fft) ||
      !ts_rt_arg_opt_int(c, call, 2, &hop, &has_hop) || !ts_rt_arg_opt_int(c, call, 3, &win, &has_win) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &w))
    return false;
  if (has_center) {
    const ts_rt_str *m;
    if (!ts_rt_arg_bool(c, call, i++, &center) || !ts_rt_arg_str(c, call, i++, &m)) return false;
    const char *names[] = {"reflect", "constant", "replicate", "circular"};
    pad_mode = -1;
    for (int k = 0; k < 4; k++)
      if (strlen(names[k]) == m->len && !memcmp(names[k], m->data, m->len)) pad_mode = k;
    if (pad_mode < 0 && center)
      return ts_rt_fail(c, "Unrecognised padding mode %.*s", (int)(m->len > 64 ? 64 : m->len), m->data);
  }
  if (!ts_rt_arg_bool(c, call, i++, &normalized)) return false;
  int64_t tmp = 0;
  if (!ts_rt_arg_opt_int(c, call, i++, &tmp, &has_one)) return false;
  one = tmp != 0;
  if (!ts_rt_arg_opt_int(c, call, i++, &tmp, &has_rc)) return false;
  rc = tmp != 0;
  if (!has_hop) hop = n_fft >> 2;
  if (!has_win) win = n_fft;
  ts_dtype xdt = (ts_dtype)x->dtype;
  bool cx_in = ts_dtype_is_complex(xdt), cx_w = w && ts_dtype_is_complex((ts_dtype)w->dtype);
  if (!has_rc) rc = cx_in || cx_w;
  if (!ts_rt_dtype_is_float(xdt) && !cx_in)
    return ts_rt_fail(c, "stft: expected a tensor of floating point or complex values");
  if (x->ndim < 1 || x->ndim > 2) return ts_rt_fail(c, "stft: expected a 1D or 2D tensor");
  int64_t batch = x->ndim == 2 ? x->sizes[0] : 1, len0 = x->sizes[x->ndim - 1];
  int64_t pad = center ? n_fft / 2 : 0;
  if (center && pad_mode == 0 && pad >= len0)
    return ts_rt_fail(c, "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                         "padding (%lld, %lld) at dimension %d of input [1, %lld, %lld]",
                      (long long)pad, (long long)pad, 2, (long long)batch, (long long)len0);
  if (center && (pad_mode == 2 || pad_mode == 3) && len0 == 0) return ts_rt_fail(c, "stft: cannot pad an empty signal");
  int64_t len = len0 + 2 * pad;
  if (n_fft <= 0 || n_fft > len)
    return ts_rt_fail(c, "stft: expected 0 < n_fft < %lld, but got n_fft=%lld", (long long)len, (long long)win);
  if (hop <= 0) return ts_rt_fail(c, "stft: expected hop_length > 0, but got hop_length=%lld", (long long)hop);
  if (win <= 0 || win > n_fft)
    return ts_rt_fail(c, "stft: expected 0 < win_length <= n_fft, but got win_length=%lld", (long long)win);
  if (w && (w->ndim != 1 || w->sizes[0] != win))
    return ts_rt_fail(c, "stft: expected a 1D window tensor of size equal to win_length=%lld", (long long)win);
  if (w && (w->dtype == TS_DT_FLOAT16 || w->dtype == TS_DT_BFLOAT16))
    return ts_rt_fail(c, "Unsupported dtype %s", ts_rt_dtype_name((ts_dtype)w->dtype));
  /* the frames' dtype: input times window */
  ts_dtype fdt = w ? ts_type_promote(xdt, (ts_dtype)w->dtype) : xdt;
  bool cx_fft = ts_dtype_is_complex(fdt);
  if (!has_one) one = !cx_fft;
  if (cx_fft && one) return ts_rt_fail(c, "Cannot have onesided output if window or input is complex");
  if (fdt == TS_DT_FLOAT16 || fdt == TS_DT_BFLOAT16) return ts_rt_fail(c, "Unsupported dtype %s", ts_rt_dtype_name(fdt));
  ts_dtype cdt = fdt == TS_DT_FLOAT64 || fdt == TS_DT_COMPLEX128 ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64;
  bool single = cdt == TS_DT_COMPLEX64;
  int64_t frames = 1 + (len - n_fft) / hop, bins = one ? n_fft / 2 + 1 : n_fft;
  double *wbuf = ff_stft_window(c, w, win, n_fft);
  ts_rt_tensor *xs = wbuf ? ts_rt_tensor_to_dtype(c, x, TS_DT_COMPLEX128) : NULL;
  int64_t zs[3] = {batch, bins, frames};
  ts_rt_tensor *z = xs ? ts_rt_tensor_new(c, TS_DT_COMPLEX128, 3, zs, false) : NULL;
  ff_plan p;
  bool ok = z && ff_plan_init(c, &p, n_fft, -1);
  double *lane = ok ? ff_alloc(n_fft) : NULL;
  if (ok && !lane) {
    ff_plan_free(&p);
    ok = ts_rt_oom(c);
  }
  if (ok) {
    const double *src = ts_rt_tensor_data(xs);
    double *dst = ts_rt_tensor_data(z);
    double f = normalized ? 1.0 / sqrt((double)n_fft) : 1.0;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t t = 0; t < frames; t++) {
        for (int64_t k = 0; k < n_fft; k++) {
          int64_t si = ff_pad_index(t * hop + k, pad, len0, pad_mode);
          double xr = si >= 0 ? src[2 * (b * len0 + si)] : 0, xi = si >= 0 ? src[2 * (b * len0 + si) + 1] : 0;
          double wr = wbuf[2 * k], wi = wbuf[2 * k + 1];
          double pr = xr * wr - xi * wi, pi = xr * wi + xi * wr;
          /* the product rounded as input.mul(window) rounds it */
          lane[2 * k] = single ? (double)(float)pr : pr;
          lane[2 * k + 1] = single ? (double)(float)pi : pi;
        }
        ff_plan_run(&p, lane);
        for (int64_t k = 0; k < bins; k++) {
          dst[2 * ((b * bins + k) * frames + t)] = lane[2 * k] * f;
          dst[2 * ((b * bins + k) * frames + t) + 1] = lane[2 * k + 1] * f;
        }
      }
    ts_rt_free(lane);
    ff_plan_free(&p);
  }
  ts_rt_free(wbuf);
  if (xs) ts_rt_tensor_release(xs);
  if (!ok) {
    if (z) ts_rt_tensor_release(z);
    return false;
  }
  if (x->ndim == 1) {
    /* drop the batch dim: z is contiguous */
    ts_rt_tensor *v = ts_rt_view(c, z, 2, zs + 1);
    ts_rt_tensor_release(z);
    if (!v) return false;
    z = v;
  }
  if (rc) return ff_out(c, call, z, cdt);
  /* return_complex=False: view_as_real of the result */
  ts_rt_tensor *r = ts_rt_tensor_to_dtype(c, z, cdt);
  ts_rt_tensor_release(z);
  if (!r) return false;
  int64_t sizes[4], strides[4];
  for (int32_t k = 0; k < r->ndim; k++) sizes[k] = r->sizes[k], strides[k] = r->strides[k] * 2;
  sizes[r->ndim] = 2, strides[r->ndim] = 1;
  ts_rt_tensor *v = ts_rt_tensor_new_view(c, r->storage, ff_real_of(cdt), 0, r->ndim + 1, sizes, strides);
  ts_rt_tensor_release(r);
  if (!v) return false;
  call->out[0] = ts_iv_tensor(v);
  return true;
}

static bool k_stft(ts_rt_ctx *c, ts_rt_call *call) { return ff_stft(c, call, false); }
static bool k_stft_center(ts_rt_ctx *c, ts_rt_call *call) { return ff_stft(c, call, true); }

static bool ff_istft(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *x, ts_dtype cdt, int64_t n_fft, int64_t hop,
                     int64_t win, ts_rt_tensor *w, bool center, bool normalized, bool has_one, int64_t tmp,
                     bool has_len, int64_t length, bool rc);

/* istft(self, n_fft, hop_length, win_length, window, center, normalized,
 * onesided, length, return_complex): each frame's inverse transform times
 * the window, overlap-added, divided by the overlap-added squared window
 * (NOLA checked), the centre padding trimmed, zero-padded to `length`. */
static bool k_istft(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *w;
  int64_t n_fft, hop = 0, win = 0, length = 0, tmp = 0;
  bool has_hop, has_win, center, normalized, has_one, has_len, rc;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_int(c, call, 1, &n_fft) ||
      !ts_rt_arg_opt_int(c, call, 2, &hop, &has_hop) || !ts_rt_arg_opt_int(c, call, 3, &win, &has_win) ||
      !ts_rt_arg_opt_tensor(c, call, 4, &w) || !ts_rt_arg_bool(c, call, 5, &center) ||
      !ts_rt_arg_bool(c, call, 6, &normalized) || !ts_rt_arg_opt_int(c, call, 7, &tmp, &has_one) ||
      !ts_rt_arg_opt_int(c, call, 8, &length, &has_len) || !ts_rt_arg_bool(c, call, 9, &rc))
    return false;
  if (!has_hop) hop = n_fft >> 2;
  if (!has_win) win = n_fft;
  /* a real input is the old format: the parts in a last dim of 2 */
  bool real_in = !ts_dtype_is_complex((ts_dtype)x->dtype);
  int32_t xnd = real_in ? x->ndim : x->ndim + 1;
  if (ts_rt_tensor_numel(x) == 0) return ts_rt_fail(c, "istft: input tensor cannot be empty.");
  if (xnd != 3 && xnd != 4)
    return ts_rt_fail(c, "istft: expected a tensor with 3 or 4 dimensions of complex, but got %d", (int)xnd);
  if (real_in && x->sizes[x->ndim - 1] != 2)
    return ts_rt_fail(c, "istft: expected the last dimension to be 2 (corresponding to real and imaginary parts), but "
                         "got %lld",
                      (long long)x->sizes[x->ndim - 1]);
  if (real_in && !ts_rt_dtype_is_float((ts_dtype)x->dtype))
    return ts_rt_fail(c, "istft: expected a tensor of floating point or complex values");
  ts_rt_tensor *xr = NULL;
  if (real_in) {
    ts_rt_tensor *d = ts_rt_tensor_to_dtype(c, x, TS_DT_FLOAT64);
    if (!d) return false;
    int64_t st[3];
    ts_rt_strides_contiguous(x->ndim - 1, x->sizes, st);
    xr = ts_rt_tensor_new_view(c, d->storage, TS_DT_COMPLEX128, 0, x->ndim - 1, x->sizes, st);
    ts_rt_tensor_release(d);
    if (!xr) return false;
    x = xr;
  }
  bool ok = ff_istft(c, call, x, real_in ? (call->in[0].u.t->dtype == TS_DT_FLOAT64 ? TS_DT_COMPLEX128 : TS_DT_COMPLEX64)
                                          : (ts_dtype)x->dtype,
                     n_fft, hop, win, w, center, normalized, has_one, tmp, has_len, length, rc);
  if (xr) ts_rt_tensor_release(xr);
  return ok;
}

static bool ff_istft(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor *x, ts_dtype cdt, int64_t n_fft, int64_t hop,
                     int64_t win, ts_rt_tensor *w, bool center, bool normalized, bool has_one, int64_t tmp,
                     bool has_len, int64_t length, bool rc) {
  int64_t fft_size = x->sizes[x->ndim - 2], frames = x->sizes[x->ndim - 1];
  int64_t batch = x->ndim == 3 ? x->sizes[0] : 1;
  bool one = has_one ? tmp != 0 : fft_size != n_fft;
  if (one && n_fft / 2 + 1 != fft_size)
    return ts_rt_fail(c, "istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                         "n_fft / 2 + 1 when onesided=True, but got %lld",
                      (long long)fft_size);
  if (!one && n_fft != fft_size)
    return ts_rt_fail(c, "istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                         "n_fft when onesided=False, but got %lld",
                      (long long)fft_size);
  if (!(0 < hop && hop <= win)) return ts_rt_fail(c, "istft expected 0 < hop_length <= win_length");
  if (!(0 < win && win <= n_fft)) return ts_rt_fail(c, "istft expected 0 < win_length <= n_fft");
  if (w && (w->ndim != 1 || w->sizes[0] != win))
    return ts_rt_fail(c, "istft: Invalid window shape. window has to be 1D and length of `win_length`");
  bool cx_w = w && ts_dtype_is_complex((ts_dtype)w->dtype);
  if (rc && one) return ts_rt_fail(c, "Cannot have onesided output if window or input is complex");
  if (!rc && cx_w) return ts_rt_fail(c, "Complex windows are incompatible with return_complex=False");
  ts_dtype odt = rc ? cdt : ff_real_of(cdt);
  if (w) odt = ts_type_promote(odt, (ts_dtype)w->dtype);
  int64_t sig = n_fft + hop * (frames - 1);
  int64_t start = center ? n_fft / 2 : 0;
  int64_t end = has_len ? start + length : center ? sig - n_fft / 2 : sig;
  int64_t kept_end = end < sig ? end : sig;
  int64_t kept = kept_end > start ? kept_end - start : 0;
  int64_t out_len = end > sig ? kept + (end - sig) : kept;
  if (end < start) out_len = 0;
  double *wbuf = ff_stft_window(c, w, win, n_fft);
  ts_rt_tensor *xs = wbuf ? ts_rt_tensor_to_dtype(c, x, TS_DT_COMPLEX128) : NULL;
  double *y = xs ? ff_alloc(batch * sig) : NULL, *env = y ? ts_rt_malloc((size_t)sig * sizeof(double)) : NULL;
  double *lane = env ? ff_alloc(n_fft) : NULL;
  ff_plan p;
  bool ok = lane && ff_plan_init(c, &p, n_fft, 1);
  if (lane && !ok) lane = (ts_rt_free(lane), NULL);
  if (!ok) {
    if (!wbuf || (xs && !lane)) ts_rt_oom(c);
  } else {
    memset(y, 0, (size_t)(batch * sig) * 16);
    memset(env, 0, (size_t)sig * sizeof(double));
    const double *src = ts_rt_tensor_data(xs);
    double f = normalized ? 1.0 / sqrt((double)n_fft) : 1.0 / (double)n_fft;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t t = 0; t < frames; t++) {
        for (int64_t k = 0; k < n_fft; k++) {
          int64_t sk = k;
          bool mirror = false;
          if (!rc && k > n_fft / 2) sk = n_fft - k, mirror = true; /* c2r: Hermitian from the first half */
          const double *s = src + 2 * ((b * fft_size + sk) * frames + t);
          lane[2 * k] = s[0];
          lane[2 * k + 1] = mirror ? -s[1] : s[1];
        }
        ff_plan_run(&p, lane);
        for (int64_t k = 0; k < n_fft; k++) {
          double vr = lane[2 * k] * f, vi = rc ? lane[2 * k + 1] * f : 0;
          double wr = wbuf[2 * k], wi = wbuf[2 * k + 1];
          double *o = y + 2 * (b * sig + t * hop + k);
          o[0] += vr * wr - vi * wi;
          o[1] += vr * wi + vi * wr;
        }
      }
    for (int64_t t = 0; t < frames; t++)
      for (int64_t k = 0; k < n_fft; k++) {
        double wr = wbuf[2 * k], wi = wbuf[2 * k + 1];
        /* window.pow(2): a complex window's square, its modulus checked */
        env[t * hop + k] += cx_w ? sqrt((wr * wr - wi * wi) * (wr * wr - wi * wi) + 4 * wr * wr * wi * wi) : wr * wr;
      }
    for (int64_t k = start; k < kept_end && ok; k++)
      if (fabs(env[k]) < 1e-11) ok = ts_rt_fail(c, "istft: window overlap add min: 1");
    ff_plan_free(&p);
  }
  ts_rt_tensor *z = NULL;
  if (ok) {
    int64_t zs[2] = {batch, out_len};
    z = ts_rt_tensor_new(c, TS_DT_COMPLEX128, 2, zs, true);
    if (z) {
      double *o = ts_rt_tensor_data(z);
      for (int64_t b = 0; b < batch; b++)
        for (int64_t k = 0; k < kept; k++) {
          double e = env[start + k];
          const double *s = y + 2 * (b * sig + start + k);
          o[2 * (b * out_len + k)] = s[0] / e;
          o[2 * (b * out_len + k) + 1] = s[1] / e;
        }
      if (end > sig) ts_rt_warn(c, "The length of signal is shorter than the length parameter. Result is being "
                                   "padded with zeros in the tail. Please check your center and hop_length settings.");
    }
    ok = z != NULL;
  }
  ts_rt_free(lane);
  ts_rt_free(env);
  ts_rt_free(y);
  ts_rt_free(wbuf);
  if (xs) ts_rt_tensor_release(xs);
  if (!ok) return false;
  if (x->ndim == 2) {
    ts_rt_tensor *v = ts_rt_view(c, z, 1, &out_len);
    ts_rt_tensor_release(z);
    if (!v) return false;
    z = v;
  }
  return ff_out(c, call, z, odt);
}

const ts_rt_kernel_def ts_rt_kernels_fft[] = {
    {"aten::bartlett_window", k_bartlett0},
    {"aten::bartlett_window.periodic", k_bartlett1},
    {"aten::blackman_window", k_blackman0},
    {"aten::blackman_window.periodic", k_blackman1},
    {"aten::fft_fft", k_fft},
    {"aten::fft_fft2", k_fftn},
    {"aten::fft_fftfreq", k_fftfreq},
    {"aten::fft_fftn", k_fftn},
    {"aten::fft_fftshift", k_fftshift},
    {"aten::fft_hfft", k_hfft},
    {"aten::fft_hfft2", k_hfftn},
    {"aten::fft_hfftn", k_hfftn},
    {"aten::fft_ifft", k_ifft},
    {"aten::fft_ifft2", k_ifftn},
    {"aten::fft_ifftn", k_ifftn},
    {"aten::fft_ifftshift", k_ifftshift},
    {"aten::fft_ihfft", k_ihfft},
    {"aten::fft_ihfft2", k_ihfftn},
    {"aten::fft_ihfftn", k_ihfftn},
    {"aten::fft_irfft", k_irfft},
    {"aten::fft_irfft2", k_irfftn},
    {"aten::fft_irfftn", k_irfftn},
    {"aten::fft_rfft", k_rfft},
    {"aten::fft_rfft2", k_rfftn},
    {"aten::fft_rfftfreq", k_rfftfreq},
    {"aten::fft_rfftn", k_rfftn},
    {"aten::hamming_window", k_hamming0},
    {"aten::hamming_window.periodic", k_hamming1},
    {"aten::hamming_window.periodic_alpha", k_hamming2},
    {"aten::hamming_window.periodic_alpha_beta", k_hamming3},
    {"aten::hann_window", k_hann0},
    {"aten::hann_window.periodic", k_hann1},
    {"aten::istft", k_istft},
    {"aten::kaiser_window", k_kaiser0},
    {"aten::kaiser_window.periodic", k_kaiser1},
    {"aten::kaiser_window.beta", k_kaiser2},
    {"aten::stft", k_stft},
    {"aten::stft.center", k_stft_center},
    {NULL, NULL},
};
