/* runtime/kernels/vision.c: torchvision's TorchScript ops, as torchvision
 * 0.14's CPU kernels compute them, in float32 and float64:
 *
 * - torchvision::nms: boxes visited in the order of their scores sorted
 *   descending by a stable sort (torchvision calls scores.sort with
 *   stable=true: tied boxes in index order; NaN scores first), areas (x2 - x1) *
 *   (y2 - y1), a box suppressed when its IoU with a kept one is > the
 *   threshold (compared in double); the kept indices, int64.
 * - torchvision::roi_align: per roi, the bilinear weights of every sampling
 *   point precomputed (torchvision's pre_calc_for_bilinear_interpolate),
 *   then averaged per bin for each channel; sampling ratio <= 0 takes
 *   ceil(roi size / pooled size) points a bin; aligned shifts the roi by
 *   -0.5, unaligned forces malformed rois to at least 1x1.
 * - torchvision::roi_pool: max over each bin of the rounded roi, argmax
 *   (int32, -1 for an empty bin) beside it.
 *
 * Where torchvision reads out of bounds (a batch index outside the input,
 * rois not [K, 5] in roi_pool) or converts a value beyond int range, these
 * fail instead. float16 (which roi_align and roi_pool also take) is refused. */
#include <float.h>
#include <math.h>

#include "nn_util.h"

/* ------------------------------------------------------------------ nms */

#define NMS_DEFINE(T, S)                                                                                               \
  static T nms_max_##S(T a, T b) { return a < b ? b : a; } /* std::max */                                              \
  static T nms_min_##S(T a, T b) { return b < a ? b : a; } /* std::min */                                              \
  /* boxes [n, 4] contiguous, order the visiting order; keeps into keep */                                             \
  static int64_t nms_run_##S(const T *box, const int64_t *order, int64_t n, double thr, uint8_t *supp, T *area,        \
                             int64_t *keep) {                                                                          \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      area[i] = (box[4 * i + 2] - box[4 * i]) * (box[4 * i + 3] - box[4 * i + 1]);                                     \
    int64_t nkeep = 0;                                                                                                 \
    for (int64_t oi = 0; oi < n; oi++) {                                                                               \
      int64_t i = order[oi];                                                                                           \
      if (supp[i]) continue;                                                                                           \
      keep[nkeep++] = i;                                                                                               \
      const T *bi = box + 4 * i;                                                                                       \
      for (int64_t oj = oi + 1; oj < n; oj++) {                                                                        \
        int64_t j = order[oj];                                                                                         \
        if (supp[j]) continue;                                                                                         \
        const T *bj = box + 4 * j;                                                                                     \
        T xx1 = nms_max_##S(bi[0], bj[0]), yy1 = nms_max_##S(bi[1], bj[1]);                                            \
        T xx2 = nms_min_##S(bi[2], bj[2]), yy2 = nms_min_##S(bi[3], bj[3]);                                            \
        T w = nms_max_##S((T)0, xx2 - xx1), h = nms_max_##S((T)0, yy2 - yy1);                                          \
        T inter = w * h;                                                                                               \
        T ovr = inter / (area[i] + area[j] - inter);                                                                   \
        if ((double)ovr > thr) supp[j] = 1;                                                                            \
      }                                                                                                                \
    }                                                                                                                  \
    return nkeep;                                                                                                      \
  }

NMS_DEFINE(float, f32)
NMS_DEFINE(double, f64)

/* nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor */
static bool vs_k_nms(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *dets, *scores;
  double thr;
  if (!ts_rt_arg_tensor(c, call, 0, &dets) || !ts_rt_arg_tensor(c, call, 1, &scores) ||
      !ts_rt_arg_double(c, call, 2, &thr))
    return false;
  if (dets->ndim != 2) return ts_rt_fail(c, "boxes should be a 2d tensor, got %dD", (int)dets->ndim);
  if (dets->sizes[1] != 4)
    return ts_rt_fail(c, "boxes should have 4 elements in dimension 1, got %lld", (long long)dets->sizes[1]);
  if (scores->ndim != 1) return ts_rt_fail(c, "scores should be a 1d tensor, got %dD", (int)scores->ndim);
  if (dets->sizes[0] != scores->sizes[0])
    return ts_rt_fail(c, "boxes and scores should have same number of elements in dimension 0, got %lld and %lld",
                      (long long)dets->sizes[0], (long long)scores->sizes[0]);
  ts_dtype dt = (ts_dtype)dets->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64) return nnu_not_impl(c, "nms_kernel", dt);
  if (scores->dtype != dets->dtype) return ts_rt_fail(c, "dets should have the same type as scores");
  int64_t n = dets->sizes[0];
  if (n == 0) return nnu_ret(call, ts_rt_tensor_new(c, TS_DT_INT64, 1, &n, false));
  ts_rt_tensor *box = ts_rt_tensor_contiguous(c, dets);
  ts_rt_tensor *order = box ? ts_rt_argsort(c, scores, 0, true, true) : NULL;
  ts_rt_tensor *keep = order ? ts_rt_tensor_new(c, TS_DT_INT64, 1, &n, false) : NULL;
  /* suppressed flags, then the areas (8-byte aligned after n rounded up) */
  size_t supp_bytes = ((size_t)n + 7) & ~(size_t)7;
  char *work = keep ? ts_rt_malloc(supp_bytes + (size_t)n * sizeof(double)) : NULL;
  bool ok = work != NULL;
  if (keep && !work) ts_rt_oom(c);
  if (ok) {
    memset(work, 0, supp_bytes);
    int64_t nkeep =
        dt == TS_DT_FLOAT32
            ? nms_run_f32(ts_rt_tensor_data(box), ts_rt_tensor_data(order), n, thr, (uint8_t *)work,
                          (float *)(work + supp_bytes), ts_rt_tensor_data(keep))
            : nms_run_f64(ts_rt_tensor_data(box), ts_rt_tensor_data(order), n, thr, (uint8_t *)work,
                          (double *)(work + supp_bytes), ts_rt_tensor_data(keep));
    /* keep_t.narrow(0, 0, nkeep): a view of the first nkeep */
    int64_t one = 1;
    ts_rt_tensor *r = ts_rt_tensor_view(c, keep, keep->offset, 1, &nkeep, &one);
    ok = nnu_ret(call, r);
  }
  ts_rt_free(work);
  if (keep) ts_rt_tensor_release(keep);
  if (order) ts_rt_tensor_release(order);
  if (box) ts_rt_tensor_release(box);
  return ok;
}

/* ------------------------------------------------------- roi_align/pool */

/* torch.FloatTensor / torch.DoubleTensor, for checkAllSameType's message */
static const char *vs_type_name(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "torch.FloatTensor";
  case TS_DT_FLOAT64: return "torch.DoubleTensor";
  case TS_DT_FLOAT16: return "torch.HalfTensor";
  case TS_DT_BFLOAT16: return "torch.BFloat16Tensor";
  case TS_DT_INT64: return "torch.LongTensor";
  case TS_DT_INT32: return "torch.IntTensor";
  case TS_DT_INT16: return "torch.ShortTensor";
  case TS_DT_INT8: return "torch.CharTensor";
  case TS_DT_UINT8: return "torch.ByteTensor";
  case TS_DT_BOOL: return "torch.BoolTensor";
  default: return "torch.Tensor";
  }
}

/* The checks roi_align and roi_pool share, in torchvision's order; the
 * contiguous input and rois on success. */
static bool vs_roi_args(ts_rt_ctx *c, const char *kname, ts_rt_tensor *x, ts_rt_tensor *rois, int64_t ph, int64_t pw,
                        ts_rt_tensor **xc, ts_rt_tensor **rc) {
  if (rois->ndim == 0) return ts_rt_fail(c, "dimension specified as 1 but tensor has no dimensions");
  if (rois->ndim == 1) return ts_rt_fail(c, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  if (rois->ndim != 2 || rois->sizes[1] != 5) return ts_rt_fail(c, "rois must have shape as Tensor[K, 5]");
  if (x->dtype != rois->dtype)
    return ts_rt_fail(c,
                      "Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 "
                      "'rois'; but type %s does not equal %s (while checking arguments for %s)",
                      vs_type_name((ts_dtype)x->dtype), vs_type_name((ts_dtype)rois->dtype), kname);
  if (x->ndim == 0) return ts_rt_fail(c, "dimension specified as 1 but tensor has no dimensions");
  if (x->ndim < 4)
    return ts_rt_fail(c, "Dimension out of range (expected to be in range of [%d, %d], but got %d)", -(int)x->ndim,
                      (int)x->ndim - 1, x->ndim < 2 ? 1 : x->ndim < 3 ? 2 : 3);
  if (x->ndim != 4) return ts_rt_fail(c, "%s: expected a 4-d input, got %dD", kname, (int)x->ndim);
  if (ph < 0 || pw < 0)
    return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld", (long long)(ph < 0 ? ph : pw));
  ts_dtype dt = (ts_dtype)x->dtype;
  if (dt != TS_DT_FLOAT32 && dt != TS_DT_FLOAT64) return nnu_not_impl(c, kname, dt);
  /* the int arithmetic of torchvision's kernels */
  if (x->sizes[1] > INT32_MAX || x->sizes[2] > INT32_MAX || x->sizes[3] > INT32_MAX ||
      x->sizes[2] * x->sizes[3] > INT32_MAX || ph > INT32_MAX || pw > INT32_MAX || ph * pw > INT32_MAX)
    return ts_rt_fail(c, "%s: sizes beyond int range", kname);
  *xc = ts_rt_tensor_contiguous(c, x);
  *rc = *xc ? ts_rt_tensor_contiguous(c, rois) : NULL;
  if (!*rc) {
    if (*xc) ts_rt_tensor_release(*xc);
    return false;
  }
  return true;
}

/* roi r's batch index (rois[r][0] truncated to int), checked against N */
static bool vs_batch_index(ts_rt_ctx *c, const char *kname, double v, int64_t r, int64_t N, int64_t *out) {
  if (!(v > -1.0 && v < (double)N))
    return ts_rt_fail(c, "%s: roi %lld has batch index %g, outside the input's batch of %lld", kname, (long long)r,
                      v, (long long)N);
  *out = (int64_t)v;
  return true;
}

/* the most sampling points one roi of roi_align may take (their weights are
 * held at once, 40 bytes each in float64) */
#define VS_MAX_SAMPLES ((int64_t)1 << 26)

typedef struct vs_pre {
  int64_t pos[4];
  double w[4];
} vs_pre;

#define ROI_ALIGN_DEFINE(T, S)                                                                                         \
  /* one roi into out [C, ph, pw]; pre holds grid_h * grid_w * ph * pw */                                              \
  static void roi_align_one_##S(const T *x, int64_t C, int64_t H, int64_t W, int64_t ph, int64_t pw, T start_h,        \
                                T start_w, T bin_h, T bin_w, int gh, int gw, vs_pre *pre, T *out) {                    \
    int64_t k = 0;                                                                                                     \
    for (int64_t py = 0; py < ph; py++)                                                                                \
      for (int64_t px = 0; px < pw; px++)                                                                              \
        for (int iy = 0; iy < gh; iy++) {                                                                              \
          const T yy = start_h + (T)py * bin_h + (T)(iy + .5f) * bin_h / (T)gh;                                        \
          for (int ix = 0; ix < gw; ix++, k++) {                                                                       \
            const T xx = start_w + (T)px * bin_w + (T)(ix + .5f) * bin_w / (T)gw;                                      \
            T y = yy, xv = xx;                                                                                         \
            vs_pre *p = &pre[k];                                                                                       \
            /* outside (NaN too): no contribution */                                                                   \
            if (!(y >= -1.0 && y <= (T)H && xv >= -1.0 && xv <= (T)W)) {                                               \
              memset(p, 0, sizeof *p);                                                                                 \
              continue;                                                                                                \
            }                                                                                                          \
            if (y <= 0) y = 0;                                                                                         \
            if (xv <= 0) xv = 0;                                                                                       \
            int64_t ylo = (int64_t)y, xlo = (int64_t)xv, yhi, xhi;                                                     \
            if (ylo >= H - 1) yhi = ylo = H - 1, y = (T)ylo;                                                           \
            else yhi = ylo + 1;                                                                                        \
            if (xlo >= W - 1) xhi = xlo = W - 1, xv = (T)xlo;                                                          \
            else xhi = xlo + 1;                                                                                        \
            T ly = y - (T)ylo, lx = xv - (T)xlo;                                                                       \
            T hy = (T)(1. - (double)ly), hx = (T)(1. - (double)lx);                                                    \
            p->pos[0] = ylo * W + xlo, p->pos[1] = ylo * W + xhi;                                                      \
            p->pos[2] = yhi * W + xlo, p->pos[3] = yhi * W + xhi;                                                      \
            p->w[0] = hy * hx, p->w[1] = hy * lx, p->w[2] = ly * hx, p->w[3] = ly * lx;                                \
          }                                                                                                            \
        }                                                                                                              \
    int g = gh * gw;                                                                                                   \
    const T count = (T)(g > 1 ? g : 1);                                                                                \
    for (int64_t ch = 0; ch < C; ch++) {                                                                               \
      const T *xin = x + ch * H * W;                                                                                   \
      const vs_pre *p = pre;                                                                                           \
      for (int64_t b = 0; b < ph * pw; b++) {                                                                          \
        T acc = 0;                                                                                                     \
        for (int s = 0; s < g; s++, p++)                                                                               \
          acc += (T)p->w[0] * xin[p->pos[0]] + (T)p->w[1] * xin[p->pos[1]] + (T)p->w[2] * xin[p->pos[2]] +             \
                 (T)p->w[3] * xin[p->pos[3]];                                                                          \
        *out++ = acc / count;                                                                                          \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  static bool roi_align_run_##S(ts_rt_ctx *c, const ts_rt_tensor *xt, const ts_rt_tensor *rt, T scale, int64_t ph,     \
                                int64_t pw, int64_t ratio, bool aligned, ts_rt_tensor *yt) {                           \
    int64_t N = xt->sizes[0], C = xt->sizes[1], H = xt->sizes[2], W = xt->sizes[3], K = rt->sizes[0];                  \
    const T *x = ts_rt_tensor_data(xt), *rois = ts_rt_tensor_data(rt);                                                 \
    T *y = ts_rt_tensor_data(yt);                                                                                      \
    vs_pre *pre = NULL;                                                                                                \
    int64_t cap = 0;                                                                                                   \
    for (int64_t r = 0; r < K; r++) {                                                                                  \
      const T *roi = rois + 5 * r;                                                                                     \
      int64_t b = 0;                                                                                                   \
      if (!vs_batch_index(c, "roi_align", (double)roi[0], r, N, &b)) break;                                            \
      T off = aligned ? (T)0.5 : (T)0;                                                                                 \
      T sw = roi[1] * scale - off, sh = roi[2] * scale - off, ew = roi[3] * scale - off, eh = roi[4] * scale - off;    \
      T rw = ew - sw, rh = eh - sh;                                                                                    \
      if (!aligned) rw = rw < (T)1 ? (T)1 : rw, rh = rh < (T)1 ? (T)1 : rh; /* std::max, NaN kept */                   \
      T bin_h = rh / (T)ph, bin_w = rw / (T)pw;                                                                        \
      double gh = ratio > 0 ? (double)ratio : ceil((double)(rh / (T)ph));                                              \
      double gw = ratio > 0 ? (double)ratio : ceil((double)(rw / (T)pw));                                              \
      /* a negative grid is empty; torchvision's vector of a negative                                                  \
       * product of them fails to allocate */                                                                          \
      double np = gh * gw * (double)ph * (double)pw;                                                                   \
      if (!(np >= -(double)VS_MAX_SAMPLES && np <= (double)VS_MAX_SAMPLES) || gh > INT32_MAX ||                        \
          gw > INT32_MAX) {                                                                                            \
        ts_rt_fail(c, "roi_align: roi %lld takes %g sampling points, more than %lld", (long long)r, np,                \
                   (long long)VS_MAX_SAMPLES);                                                                         \
        break;                                                                                                         \
      }                                                                                                                \
      if (np < 0) {                                                                                                    \
        ts_rt_fail(c, "cannot create std::vector larger than max_size()");                                             \
        break;                                                                                                         \
      }                                                                                                                \
      int igh = gh > 0 ? (int)gh : 0, igw = gw > 0 ? (int)gw : 0;                                                      \
      int64_t need = (int64_t)igh * igw * ph * pw;                                                                     \
      if (need > cap) {                                                                                                \
        vs_pre *np2 = ts_rt_realloc(pre, (size_t)need * sizeof *pre);                                                  \
        if (!np2) {                                                                                                    \
          ts_rt_oom(c);                                                                                                \
          break;                                                                                                       \
        }                                                                                                              \
        pre = np2, cap = need;                                                                                         \
      }                                                                                                                \
      roi_align_one_##S(x + b * C * H * W, C, H, W, ph, pw, sh, sw, bin_h, bin_w, igh, igw, pre,                       \
                        y + r * C * ph * pw);                                                                          \
    }                                                                                                                  \
    ts_rt_free(pre);                                                                                                   \
    return !c->failed;                                                                                                 \
  }

ROI_ALIGN_DEFINE(float, f32)
ROI_ALIGN_DEFINE(double, f64)

/* roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
 * int pooled_width, int sampling_ratio, bool aligned) -> Tensor */
static bool vs_k_roi_align(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *rois, *xc = NULL, *rc = NULL;
  double scale;
  int64_t ph, pw, ratio;
  bool aligned;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &rois) ||
      !ts_rt_arg_double(c, call, 2, &scale) || !ts_rt_arg_int(c, call, 3, &ph) || !ts_rt_arg_int(c, call, 4, &pw) ||
      !ts_rt_arg_int(c, call, 5, &ratio) || !ts_rt_arg_bool(c, call, 6, &aligned))
    return false;
  if (!vs_roi_args(c, "roi_align_forward_kernel", x, rois, ph, pw, &xc, &rc)) return false;
  int64_t sz[4] = {rois->sizes[0], x->sizes[1], ph, pw};
  ts_rt_tensor *y = ts_rt_tensor_new(c, (ts_dtype)x->dtype, 4, sz, true);
  bool ok = y != NULL;
  if (ok && ts_rt_tensor_numel(y) > 0)
    ok = x->dtype == TS_DT_FLOAT32 ? roi_align_run_f32(c, xc, rc, (float)scale, ph, pw, ratio, aligned, y)
                                   : roi_align_run_f64(c, xc, rc, scale, ph, pw, ratio, aligned, y);
  ts_rt_tensor_release(xc);
  ts_rt_tensor_release(rc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    return false;
  }
  return nnu_ret(call, y);
}

/* a rounded roi coordinate as torchvision's int: false beyond +-2^30 */
static bool vs_round_coord(double v, int64_t *out) {
  v = round(v);
  if (!(v >= -1073741824.0 && v <= 1073741824.0)) return false;
  *out = (int64_t)v;
  return true;
}

static int64_t vs_clamp(int64_t v, int64_t hi) { return v < 0 ? 0 : v > hi ? hi : v; }

#define ROI_POOL_DEFINE(T, S)                                                                                          \
  static bool roi_pool_run_##S(ts_rt_ctx *c, const ts_rt_tensor *xt, const ts_rt_tensor *rt, T scale, int64_t ph,      \
                               int64_t pw, ts_rt_tensor *yt, ts_rt_tensor *at) {                                       \
    int64_t N = xt->sizes[0], C = xt->sizes[1], H = xt->sizes[2], W = xt->sizes[3], K = rt->sizes[0];                  \
    const T *x = ts_rt_tensor_data(xt), *rois = ts_rt_tensor_data(rt);                                                 \
    T *y = ts_rt_tensor_data(yt);                                                                                      \
    int32_t *am = ts_rt_tensor_data(at);                                                                               \
    for (int64_t r = 0; r < K; r++) {                                                                                  \
      const T *roi = rois + 5 * r;                                                                                     \
      int64_t b = 0, sw = 0, sh = 0, ew = 0, eh = 0;                                                                   \
      if (!vs_batch_index(c, "roi_pool", (double)roi[0], r, N, &b)) return false;                                      \
      if (!vs_round_coord((double)(roi[1] * scale), &sw) || !vs_round_coord((double)(roi[2] * scale), &sh) ||          \
          !vs_round_coord((double)(roi[3] * scale), &ew) || !vs_round_coord((double)(roi[4] * scale), &eh))            \
        return ts_rt_fail(c, "roi_pool: roi %lld has coordinates beyond int range", (long long)r);                     \
      int64_t rw = ew - sw + 1, rh = eh - sh + 1;                                                                      \
      if (rw < 1) rw = 1;                                                                                              \
      if (rh < 1) rh = 1;                                                                                              \
      T bin_h = (T)rh / (T)ph, bin_w = (T)rw / (T)pw;                                                                  \
      const T *xb = x + b * C * H * W;                                                                                 \
      for (int64_t py = 0; py < ph; py++)                                                                              \
        for (int64_t px = 0; px < pw; px++) {                                                                          \
          int64_t hs = (int64_t)floor((double)((T)py * bin_h)), ws = (int64_t)floor((double)((T)px * bin_w));          \
          int64_t he = (int64_t)ceil((double)((T)(py + 1) * bin_h));                                                   \
          int64_t we = (int64_t)ceil((double)((T)(px + 1) * bin_w));                                                   \
          hs = vs_clamp(hs + sh, H), he = vs_clamp(he + sh, H);                                                        \
          ws = vs_clamp(ws + sw, W), we = vs_clamp(we + sw, W);                                                        \
          bool empty = he <= hs || we <= ws;                                                                           \
          for (int64_t ch = 0; ch < C; ch++) {                                                                         \
            T mx = empty ? (T)0 : (T)-FLT_MAX;                                                                         \
            int64_t mi = -1;                                                                                           \
            const T *xin = xb + ch * H * W;                                                                            \
            for (int64_t h = hs; h < he; h++)                                                                          \
              for (int64_t w = ws; w < we; w++)                                                                        \
                if (xin[h * W + w] > mx) mx = xin[h * W + w], mi = h * W + w;                                          \
            int64_t o = ((r * C + ch) * ph + py) * pw + px;                                                            \
            y[o] = mx;                                                                                                 \
            am[o] = (int32_t)mi;                                                                                       \
          }                                                                                                            \
        }                                                                                                              \
    }                                                                                                                  \
    return true;                                                                                                       \
  }

ROI_POOL_DEFINE(float, f32)
ROI_POOL_DEFINE(double, f64)

/* roi_pool(Tensor input, Tensor rois, float spatial_scale, int pooled_height,
 * int pooled_width) -> (Tensor, Tensor) */
static bool vs_k_roi_pool(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_tensor *x, *rois, *xc = NULL, *rc = NULL;
  double scale;
  int64_t ph, pw;
  if (!ts_rt_arg_tensor(c, call, 0, &x) || !ts_rt_arg_tensor(c, call, 1, &rois) ||
      !ts_rt_arg_double(c, call, 2, &scale) || !ts_rt_arg_int(c, call, 3, &ph) || !ts_rt_arg_int(c, call, 4, &pw))
    return false;
  if (!vs_roi_args(c, "roi_pool_forward_kernel", x, rois, ph, pw, &xc, &rc)) return false;
  int64_t sz[4] = {rois->sizes[0], x->sizes[1], ph, pw};
  ts_rt_tensor *y = ts_rt_tensor_new(c, (ts_dtype)x->dtype, 4, sz, true);
  ts_rt_tensor *am = y ? ts_rt_tensor_new(c, TS_DT_INT32, 4, sz, true) : NULL;
  bool ok = am != NULL;
  if (ok && ts_rt_tensor_numel(y) > 0)
    ok = x->dtype == TS_DT_FLOAT32 ? roi_pool_run_f32(c, xc, rc, (float)scale, ph, pw, y, am)
                                   : roi_pool_run_f64(c, xc, rc, scale, ph, pw, y, am);
  ts_rt_tensor_release(xc);
  ts_rt_tensor_release(rc);
  if (!ok) {
    if (y) ts_rt_tensor_release(y);
    if (am) ts_rt_tensor_release(am);
    return false;
  }
  call->out[0] = ts_iv_tensor(y);
  call->out[1] = ts_iv_tensor(am);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_vision[] = {
    {"torchvision::nms", vs_k_nms},
    {"torchvision::roi_align", vs_k_roi_align},
    {"torchvision::roi_pool", vs_k_roi_pool},
    {NULL, NULL},
};
