/* passes/shape_rules_fft.c: shape rules of complex tensors' own ops
 * (runtime/kernels/complex.c) and of the FFT family and window functions
 * (runtime/kernels/fft.c). The fft rules follow SpectralOps.cpp's defaults
 * (n, s and dim as the kernels resolve them); results are contiguous except
 * the views (view_as_real, view_as_complex, real, imag), whose strides are
 * left unknown, and stft's (a transposed result, a view for
 * return_complex=False). */
#include "shape_rules.h"

static int8_t sr_complex_of(int8_t dt) {
  if (dt == TS_DT_NONE) return TS_DT_NONE;
  if (dt == TS_DT_FLOAT64 || dt == TS_DT_COMPLEX128) return TS_DT_COMPLEX128;
  if (dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16) return TS_DT_NONE; /* refused */
  return TS_DT_COMPLEX64;
}

static int8_t sr_real_of(int8_t dt) {
  return dt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : dt == TS_DT_COMPLEX64 ? TS_DT_FLOAT32 : TS_DT_NONE;
}

/* A result of x's device and requires_grad, dtype dt, no sizes yet. */
static void sr_like(ts_sr_shape *out, const ts_sr_shape *x, int8_t dt) {
  ts_sr_unknown(out);
  out->dtype = dt;
  out->device = x->device;
  out->requires_grad = x->requires_grad;
}

/* view_as_real: sizes + [2] in the parts' dtype */
static void sr_view_as_real(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x)) return;
  sr_like(&out, &x, sr_real_of(x.dtype));
  if (x.rank >= 0 && x.rank + 1 < TS_SR_MAX_RANK) {
    out.rank = x.rank + 1;
    for (int32_t i = 0; i < x.rank; i++) out.sizes[i] = x.sizes[i];
    out.sizes[x.rank] = 2;
  }
  ts_sr_set(c, 0, &out);
}

/* view_as_complex: the last dim (2) dropped */
static void sr_view_as_complex(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x)) return;
  sr_like(&out, &x, x.dtype == TS_DT_FLOAT64 ? TS_DT_COMPLEX128 : x.dtype == TS_DT_FLOAT32 ? TS_DT_COMPLEX64 : TS_DT_NONE);
  if (x.rank >= 1 && x.sizes[x.rank - 1] == 2) {
    out.rank = x.rank - 1;
    for (int32_t i = 0; i < out.rank; i++) out.sizes[i] = x.sizes[i];
  }
  ts_sr_set(c, 0, &out);
}

/* real / imag: a complex tensor's sizes in its parts' dtype (real of a
 * real tensor is itself) */
static void sr_part(ts_sr_call *c) {
  ts_sr_shape x, out;
  if (!ts_sr_tensor(c, 0, &x)) return;
  if (x.dtype != TS_DT_NONE && !ts_dtype_is_complex((ts_dtype)x.dtype)) {
    if (c->node->kind == TS_K_aten_real) ts_sr_set(c, 0, &x);
    return;
  }
  sr_like(&out, &x, sr_real_of(x.dtype));
  out.rank = x.rank;
  for (int32_t i = 0; i < x.rank; i++) out.sizes[i] = x.sizes[i];
  ts_sr_set(c, 0, &out);
}

/* complex / polar: the operands broadcast, in the complex dtype */
static void sr_complex(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b)) return;
  int8_t dt = a.dtype == b.dtype && (a.dtype == TS_DT_FLOAT32 || a.dtype == TS_DT_FLOAT64) ? sr_complex_of(a.dtype)
                                                                                           : TS_DT_NONE;
  const ts_sr_shape *in[2] = {&a, &b};
  ts_sr_shape out = a;
  out.has_strides = false;
  if (!ts_sr_broadcast(&out, &b)) return;
  ts_sr_meta_from(&out, in, 2);
  out.dtype = dt;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* angle: same sizes; complex -> its parts' dtype, integers -> float32 */
static void sr_angle(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x)) return;
  ts_sr_shape out = x;
  if (ts_dtype_is_complex((ts_dtype)x.dtype)) out.dtype = sr_real_of(x.dtype);
  else if (x.dtype != TS_DT_NONE && !ts_dtype_is_float((ts_dtype)x.dtype)) out.dtype = TS_DT_FLOAT32;
  out.has_strides = false;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* conj, conj_physical, resolve_conj, resolve_neg: x's sizes and dtype (a
 * real input comes back as itself, a complex one as a contiguous copy) */
static void sr_same(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x)) return;
  bool self = c->node->kind == TS_K_aten_resolve_conj || c->node->kind == TS_K_aten_resolve_neg ||
              (x.dtype != TS_DT_NONE && !ts_dtype_is_complex((ts_dtype)x.dtype));
  if (!self) {
    x.has_strides = false;
    if (x.dtype != TS_DT_NONE) ts_sr_contiguous(&x);
  }
  ts_sr_set(c, 0, &x);
}

/* ------------------------------------------------------------- the fft */

enum { SR_C2C, SR_R2C, SR_C2R };

static int sr_fft_kind(ts_kind k) {
  switch (k) {
  case TS_K_aten_fft_rfft:
  case TS_K_aten_fft_ihfft:
  case TS_K_aten_fft_rfft2:
  case TS_K_aten_fft_ihfft2:
  case TS_K_aten_fft_rfftn:
  case TS_K_aten_fft_ihfftn: return SR_R2C;
  case TS_K_aten_fft_irfft:
  case TS_K_aten_fft_hfft:
  case TS_K_aten_fft_irfft2:
  case TS_K_aten_fft_hfft2:
  case TS_K_aten_fft_irfftn:
  case TS_K_aten_fft_hfftn: return SR_C2R;
  default: return SR_C2C;
  }
}

/* The result of a transform over dims[0..nd) with signal lengths len[]
 * (C2R: the last one the output's length). */
static void sr_fft_set(ts_sr_call *c, const ts_sr_shape *x, int kind, const int64_t *dims, const int64_t *len,
                       int32_t nd) {
  int8_t cdt = sr_complex_of(x->dtype);
  ts_sr_shape out;
  sr_like(&out, x, kind == SR_C2R ? sr_real_of(cdt) : cdt);
  out.rank = x->rank;
  for (int32_t i = 0; i < x->rank; i++) out.sizes[i] = x->sizes[i];
  for (int32_t i = 0; i < nd; i++) out.sizes[dims[i]] = len[i];
  if (kind == SR_R2C && nd > 0) out.sizes[dims[nd - 1]] = len[nd - 1] / 2 + 1;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* fft_fft ... fft_ihfft (self, n, dim, norm) */
static void sr_fft1(ts_sr_call *c) {
  ts_sr_shape x;
  int64_t dim, n = -1;
  if (!ts_sr_tensor(c, 0, &x) || x.rank < 1 || !ts_sr_int(c, 2, &dim) || !ts_sr_wrap_dim(dim, x.rank, &dim)) return;
  int kind = sr_fft_kind(c->node->kind);
  if (!ts_sr_is_none(c, 1) && !ts_sr_int(c, 1, &n)) return;
  if (n < 0) n = kind == SR_C2R ? (x.sizes[dim] >= 1 ? 2 * (x.sizes[dim] - 1) : -1) : x.sizes[dim];
  if (n < 1) return;
  sr_fft_set(c, &x, kind, &dim, &n, 1);
}

/* the 2-d and n-d forms (self, s, dim, norm) */
static void sr_fftn(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x) || x.rank < 0) return;
  int64_t s[TS_SR_MAX_RANK], dims[TS_SR_MAX_RANK], len[TS_SR_MAX_RANK];
  int32_t ns = 0, nd = 0;
  bool have_s = !ts_sr_is_none(c, 1), have_d = !ts_sr_is_none(c, 2);
  if (have_s && !ts_sr_int_list(c, 1, s, &ns, TS_SR_MAX_RANK)) return;
  if (have_d && !ts_sr_int_list(c, 2, dims, &nd, TS_SR_MAX_RANK)) return;
  if (x.rank == 0 && (have_d || have_s)) return;
  for (int32_t i = 0; i < nd; i++)
    if (!ts_sr_wrap_dim(dims[i], x.rank, &dims[i])) return;
  if (have_s) {
    if ((have_d && nd != ns) || ns > x.rank) return;
    if (!have_d)
      for (int32_t i = 0; i < ns; i++) dims[i] = x.rank - ns + i;
    nd = ns;
  } else if (!have_d) {
    for (int32_t i = 0; i < x.rank; i++) dims[i] = i;
    nd = x.rank;
  }
  for (int32_t i = 0; i < nd; i++) {
    len[i] = have_s && s[i] != -1 ? s[i] : x.sizes[dims[i]];
    if (len[i] < 1) return;
  }
  int kind = sr_fft_kind(c->node->kind);
  if (kind != SR_C2C && nd == 0) return;
  if (kind == SR_C2R && (!have_s || s[ns - 1] == -1)) {
    int64_t m = x.sizes[dims[nd - 1]];
    if (m < 1) return;
    len[nd - 1] = 2 * (m - 1);
    if (len[nd - 1] < 1) return;
  }
  sr_fft_set(c, &x, kind, dims, len, nd);
}

/* fftshift / ifftshift: x's sizes and dtype, contiguous */
static void sr_shift(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x)) return;
  x.has_strides = false;
  ts_sr_contiguous(&x);
  ts_sr_set(c, 0, &x);
}

/* A 1-d float result of n elements (dtype argument `di`, float32 when
 * None): fftfreq, rfftfreq and the windows. */
static void sr_vector(ts_sr_call *c, int64_t n, uint32_t di) {
  int8_t dt;
  if (!ts_sr_dtype_arg(c, di, &dt)) return;
  if (dt == TS_DT_NONE) dt = TS_DT_FLOAT32;
  if (n < 0 || !ts_dtype_is_float((ts_dtype)dt)) return;
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = dt;
  out.device.type = TS_DEV_CPU;
  out.device.index = -1;
  out.requires_grad = 0;
  out.rank = 1;
  out.sizes[0] = n;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

static void sr_fftfreq(ts_sr_call *c) {
  int64_t n;
  if (!ts_sr_int(c, 0, &n)) return;
  sr_vector(c, c->node->kind == TS_K_aten_fft_rfftfreq ? n / 2 + 1 : n, 2);
}

/* windows: (n, [periodic, [alpha, [beta]]], dtype, ...): the dtype
 * argument follows the positional ones */
static void sr_window(ts_sr_call *c) {
  int64_t n;
  if (!ts_sr_int(c, 0, &n)) return;
  uint32_t di = 1;
  while (di < c->schema->nargs && !(c->schema->args[di].kwarg_only)) di++;
  sr_vector(c, n, di);
}

/* stft (self, n_fft, hop, win, window, [center, pad_mode,] normalized,
 * onesided, return_complex): [B,] bins, frames in the complex dtype of
 * self * window, or its parts' with a last dim of 2 */
static void sr_stft(ts_sr_call *c) {
  ts_sr_shape x, w;
  int64_t n_fft, hop;
  if (!ts_sr_tensor(c, 0, &x) || x.rank < 1 || x.rank > 2 || x.dtype == TS_DT_NONE || !ts_sr_int(c, 1, &n_fft) ||
      n_fft < 1)
    return;
  if (ts_sr_is_none(c, 2)) hop = n_fft >> 2;
  else if (!ts_sr_int(c, 2, &hop)) return;
  bool has_center = c->schema->nargs == 10, center = false, onesided, rc;
  uint32_t k = has_center ? 7 : 5;
  if (has_center && !ts_sr_bool(c, 5, &center)) return;
  int8_t fdt = x.dtype;
  bool cx_w = false;
  if (!ts_sr_is_none(c, 4)) {
    if (!ts_sr_tensor(c, 4, &w) || w.dtype == TS_DT_NONE) return;
    fdt = (int8_t)ts_type_promote((ts_dtype)x.dtype, (ts_dtype)w.dtype);
    cx_w = ts_dtype_is_complex((ts_dtype)w.dtype);
  }
  if (ts_sr_is_none(c, k + 1)) onesided = !ts_dtype_is_complex((ts_dtype)fdt);
  else if (!ts_sr_bool(c, k + 1, &onesided)) return;
  if (ts_sr_is_none(c, k + 2)) rc = ts_dtype_is_complex((ts_dtype)x.dtype) || cx_w;
  else if (!ts_sr_bool(c, k + 2, &rc)) return;
  int64_t len = x.sizes[x.rank - 1];
  if (len < 0 || hop < 1) return;
  if (center) len += 2 * (n_fft / 2);
  if (n_fft > len) return;
  int8_t cdt = sr_complex_of(fdt);
  ts_sr_shape out;
  sr_like(&out, &x, rc ? cdt : sr_real_of(cdt));
  out.rank = 0;
  if (x.rank == 2) out.sizes[out.rank++] = x.sizes[0];
  out.sizes[out.rank++] = onesided ? n_fft / 2 + 1 : n_fft;
  out.sizes[out.rank++] = 1 + (len - n_fft) / hop;
  if (!rc) out.sizes[out.rank++] = 2;
  ts_sr_set(c, 0, &out);
}

/* istft of a complex spectrum [B,] bins, frames: [B,] length */
static void sr_istft(ts_sr_call *c) {
  ts_sr_shape x, w;
  int64_t n_fft, hop, length;
  bool center, rc;
  if (!ts_sr_tensor(c, 0, &x) || (x.rank != 2 && x.rank != 3) || !ts_dtype_is_complex((ts_dtype)x.dtype) ||
      !ts_sr_int(c, 1, &n_fft) || !ts_sr_bool(c, 5, &center) || !ts_sr_bool(c, 9, &rc) || n_fft < 1)
    return;
  if (ts_sr_is_none(c, 2)) hop = n_fft >> 2;
  else if (!ts_sr_int(c, 2, &hop)) return;
  int64_t frames = x.sizes[x.rank - 1];
  if (frames < 1 || hop < 1) return;
  int64_t sig = n_fft + hop * (frames - 1);
  if (!ts_sr_is_none(c, 8)) {
    if (!ts_sr_int(c, 8, &length) || length < 0) return;
  } else {
    length = center ? sig - 2 * (n_fft / 2) : sig;
  }
  int8_t dt = rc ? x.dtype : sr_real_of(x.dtype);
  if (!ts_sr_is_none(c, 4)) {
    if (!ts_sr_tensor(c, 4, &w) || w.dtype == TS_DT_NONE) return;
    dt = (int8_t)ts_type_promote((ts_dtype)dt, (ts_dtype)w.dtype);
  }
  ts_sr_shape out;
  sr_like(&out, &x, dt);
  out.rank = 0;
  if (x.rank == 3) out.sizes[out.rank++] = x.sizes[0];
  out.sizes[out.rank++] = length;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

const ts_sr_def ts_sr_rules_fft[] = {
    {"aten::angle", sr_angle},
    {"aten::bartlett_window", sr_window},
    {"aten::bartlett_window.periodic", sr_window},
    {"aten::blackman_window", sr_window},
    {"aten::blackman_window.periodic", sr_window},
    {"aten::complex", sr_complex},
    {"aten::conj", sr_same},
    {"aten::conj_physical", sr_same},
    {"aten::fft_fft", sr_fft1},
    {"aten::fft_fft2", sr_fftn},
    {"aten::fft_fftfreq", sr_fftfreq},
    {"aten::fft_fftn", sr_fftn},
    {"aten::fft_fftshift", sr_shift},
    {"aten::fft_hfft", sr_fft1},
    {"aten::fft_hfft2", sr_fftn},
    {"aten::fft_hfftn", sr_fftn},
    {"aten::fft_ifft", sr_fft1},
    {"aten::fft_ifft2", sr_fftn},
    {"aten::fft_ifftn", sr_fftn},
    {"aten::fft_ifftshift", sr_shift},
    {"aten::fft_ihfft", sr_fft1},
    {"aten::fft_ihfft2", sr_fftn},
    {"aten::fft_ihfftn", sr_fftn},
    {"aten::fft_irfft", sr_fft1},
    {"aten::fft_irfft2", sr_fftn},
    {"aten::fft_irfftn", sr_fftn},
    {"aten::fft_rfft", sr_fft1},
    {"aten::fft_rfft2", sr_fftn},
    {"aten::fft_rfftfreq", sr_fftfreq},
    {"aten::fft_rfftn", sr_fftn},
    {"aten::hamming_window", sr_window},
    {"aten::hamming_window.periodic", sr_window},
    {"aten::hamming_window.periodic_alpha", sr_window},
    {"aten::hamming_window.periodic_alpha_beta", sr_window},
    {"aten::hann_window", sr_window},
    {"aten::hann_window.periodic", sr_window},
    {"aten::imag", sr_part},
    {"aten::istft", sr_istft},
    {"aten::kaiser_window", sr_window},
    {"aten::kaiser_window.periodic", sr_window},
    {"aten::kaiser_window.beta", sr_window},
    {"aten::polar", sr_complex},
    {"aten::real", sr_part},
    {"aten::resolve_conj", sr_same},
    {"aten::resolve_neg", sr_same},
    {"aten::stft", sr_stft},
    {"aten::stft.center", sr_stft},
    {"aten::view_as_complex", sr_view_as_complex},
    {"aten::view_as_real", sr_view_as_real},
    {NULL, NULL},
};
