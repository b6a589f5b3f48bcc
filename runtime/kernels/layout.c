/* runtime/kernels/layout.c: ops that lay elements out anew, as PyTorch 1.13
 * computes them on the CPU: meshgrid. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

/* ------------------------------------------------------------- helpers */

/* A new list of tensors that takes over ts[0..n) (released on failure). */
static bool ly_put_list(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **ts, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_TENSOR), n);
  uint32_t i = 0;
  if (l) {
    for (; i < n; i++)
      if (!ts_rt_list_append(c, l, ts_iv_tensor(ts[i]))) {
        i++;
        break;
      }
  }
  bool ok = l && i == n && !c->failed;
  for (; i < n; i++) ts_rt_tensor_release(ts[i]);
  if (!ok) {
    if (l) ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* The tensors of a Tensor[] argument (borrowed), at most `max`. */
static bool ly_arg_tensors(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_rt_tensor **out, uint32_t max,
                           uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  if (l->n > max) return ts_rt_fail(c, "argument %u: list of %u tensors, at most %u allowed", (unsigned)i,
                                    (unsigned)l->n, (unsigned)max);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag != TS_IV_TENSOR) return ts_rt_fail(c, "argument %u: expected List[Tensor]", (unsigned)i);
    out[k] = l->items[k].u.t;
  }
  *n = l->n;
  return true;
}

/* ------------------------------------------------------------ meshgrid */

/* meshgrid(tensors, indexing): grid i is tensor i viewed along dim i and
 * expanded to every tensor's length (views of the inputs); "xy" swaps the
 * first two tensors before and the first two grids after. */
static bool ly_meshgrid(ts_rt_ctx *c, ts_rt_call *call, const char *indexing, size_t len) {
  ts_rt_tensor *ts[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  if (!ly_arg_tensors(c, call, 0, ts, TS_RT_MAX_DIMS, &n)) return false;
  if (n == 0) return ts_rt_fail(c, "meshgrid expects a non-empty TensorList");
  for (uint32_t i = 0; i + 1 < n; i++)
    if (ts[i]->dtype != ts[i + 1]->dtype) return ts_rt_fail(c, "meshgrid expects all tensors to have the same dtype");
  bool xy = len == 2 && memcmp(indexing, "xy", 2) == 0;
  if (!xy && !(len == 2 && memcmp(indexing, "ij", 2) == 0))
    return ts_rt_fail(c, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %.*s", (int)len,
                      indexing);
  bool swap = xy && n >= 2;
  if (swap) {
    ts_rt_tensor *t = ts[0];
    ts[0] = ts[1];
    ts[1] = t;
  }
  int64_t shape[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    if (ts[i]->ndim > 1) {
      ts_buf b = {0};
      ts_iv_str(&b, ts_iv_tensor(ts[i]));
      ts_rt_fail(c, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: %s", b.data ? b.data : "");
      ts_buf_free(&b);
      return false;
    }
    shape[i] = ts_rt_tensor_numel(ts[i]);
  }
  ts_rt_tensor *grids[TS_RT_MAX_DIMS];
  for (uint32_t i = 0; i < n; i++) {
    /* the one element stride of a 0-d or 1-d tensor, along dim i */
    int64_t strides[TS_RT_MAX_DIMS] = {0};
    strides[i] = ts[i]->ndim == 1 ? ts[i]->strides[0] : 1;
    grids[i] = ts_rt_tensor_view(c, ts[i], ts[i]->offset, (int32_t)n, shape, strides);
    if (!grids[i]) {
      for (uint32_t k = 0; k < i; k++) ts_rt_tensor_release(grids[k]);
      return false;
    }
  }
  if (swap) {
    ts_rt_tensor *t = grids[0];
    grids[0] = grids[1];
    grids[1] = t;
  }
  return ly_put_list(c, call, grids, n);
}

/* meshgrid(tensors): "ij" (PyTorch warns that the argument will be needed) */
static bool ly_k_meshgrid(ts_rt_ctx *ctx, ts_rt_call *call) { return ly_meshgrid(ctx, call, "ij", 2); }

static bool ly_k_meshgrid_indexing(ts_rt_ctx *ctx, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(ctx, call, 1, &s)) return false;
  return ly_meshgrid(ctx, call, s->data, s->len);
}

const ts_rt_kernel_def ts_rt_kernels_layout[] = {
    {"aten::meshgrid", ly_k_meshgrid},
    {"aten::meshgrid.indexing", ly_k_meshgrid_indexing},
    {NULL, NULL},
};
