/* passes/shape_rules_tensor.c: shape rules of the tensor ops that write
 * through indices or lay elements out anew (runtime/kernels/index.c and
 * layout.c): index_put, meshgrid.
 *
 * In-place forms keep self's type (strides included: they return self);
 * out-of-place forms are new tensors, contiguous when self is (the kernels
 * clone self contiguously), else with unknown strides. */
#include "shape_rules.h"

#include <string.h>

/* ------------------------------------------------------------- helpers */

/* The type of input 0 unchanged (an in-place op returns self). */
static void sr_self(ts_sr_call *c) {
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR)
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
}

/* self's sizes and dtype, a new tensor: contiguous when self is. */
static void sr_copy_of_self(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_is_contiguous(&in))
    in.has_strides = false;
  ts_sr_set(c, 0, &in);
}

/* ------------------------------------------------------------ meshgrid */

enum { SR_MAX_GRIDS = 64 };

/* meshgrid(tensors[, indexing]): as many grids as tensors, each of the
 * tensors' lengths (the first two swapped for "xy"), views of the inputs
 * (strides left unknown). */
static void sr_meshgrid(ts_sr_call *c) {
  static _Thread_local ts_sr_shape ts[SR_MAX_GRIDS], grids[SR_MAX_GRIDS];
  uint32_t n = 0;
  if (!ts_sr_tensor_list(c, 0, ts, &n, SR_MAX_GRIDS) || n == 0)
    return;
  bool swap = false;
  if (c->schema->overload[0]) {
    ts_cval v;
    if (!ts_pass_const_get(c->node->inputs[1], &v) || v.kind != TS_CV_STR)
      return;
    bool xy = v.len == 2 && memcmp(v.s, "xy", 2) == 0;
    if (!xy && !(v.len == 2 && memcmp(v.s, "ij", 2) == 0))
      return; /* fails at run time */
    swap = xy && n >= 2;
  }
  int64_t sizes[SR_MAX_GRIDS];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = swap && i < 2 ? 1 - i : i;
    if (ts[k].rank > 1 || (i > 0 && ts[i].dtype != ts[0].dtype && ts[i].dtype != TS_DT_NONE &&
                           ts[0].dtype != TS_DT_NONE))
      return; /* fails at run time */
    sizes[i] = ts[k].rank == 0 ? 1 : ts[k].rank == 1 ? ts[k].sizes[0] : -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    ts_sr_shape *g = &grids[i];
    *g = ts[i];
    g->rank = (int32_t)n;
    g->has_strides = false;
    memcpy(g->sizes, sizes, sizeof(int64_t) * n);
  }
  ts_sr_set_list(c, 0, grids, n);
}

const ts_sr_def ts_sr_rules_tensor[] = {
    {"aten::index_put_", sr_self},
    {"aten::index_put_.hacked_twin", sr_self},
    {"aten::index_put", sr_copy_of_self},
    {"aten::index_put.hacked_twin", sr_copy_of_self},
    {"aten::meshgrid", sr_meshgrid},
    {"aten::meshgrid.indexing", sr_meshgrid},
    {NULL, NULL},
};
