/* passes/shape_rules_vision.c: shape rules of torchvision's ops
 * (runtime/kernels/vision.c). nms keeps a number of boxes only the data
 * tells: a 1-d int64 tensor of unknown length. */
#include "shape_rules.h"

/* nms(dets [n, 4], scores [n], iou_threshold): [k] int64, k <= n unknown */
static void sr_nms(ts_sr_call *c) {
  ts_sr_shape d, out;
  if (!ts_sr_tensor(c, 0, &d))
    return;
  ts_sr_unknown(&out);
  out.dtype = TS_DT_INT64;
  out.device = d.device;
  out.requires_grad = 0;
  out.rank = 1;
  out.sizes[0] = -1;
  out.has_strides = true;
  out.strides[0] = 1;
  ts_sr_set(c, 0, &out);
}

/* roi_align / roi_pool(input [N, C, H, W], rois [K, 5], scale, ph, pw, ...):
 * [K, C, ph, pw] in the input's dtype, contiguous; roi_pool's argmax the
 * same sizes in int32 */
static void sr_roi(ts_sr_call *c) {
  ts_sr_shape x, r, out;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &r))
    return;
  ts_sr_unknown(&out);
  out.dtype = x.dtype;
  out.device = x.device;
  out.requires_grad = x.requires_grad;
  int64_t ph, pw;
  if ((x.rank < 0 || x.rank == 4) && (r.rank < 0 || r.rank == 2) && ts_sr_int(c, 3, &ph) && ts_sr_int(c, 4, &pw) &&
      ph >= 0 && pw >= 0) {
    out.rank = 4;
    out.sizes[0] = r.rank == 2 ? r.sizes[0] : -1;
    out.sizes[1] = x.rank == 4 ? x.sizes[1] : -1;
    out.sizes[2] = ph;
    out.sizes[3] = pw;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  if (c->node->kind == TS_K_torchvision_roi_pool) {
    out.dtype = TS_DT_INT32;
    out.requires_grad = 0;
    ts_sr_set(c, 1, &out);
  }
}

const ts_sr_def ts_sr_rules_vision[] = {
    {"torchvision::nms", sr_nms},
    {"torchvision::roi_align", sr_roi},
    {"torchvision::roi_pool", sr_roi},
    {NULL, NULL},
};
