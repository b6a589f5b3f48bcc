/* passes/shape_rules_histogram.c: shape rules of histogram and histogramdd
 * (runtime/kernels/histogram.c). The hist has the input's dtype and one dim
 * per coordinate (histogram: one), each of its bin count; each dim's bin
 * edges are 1-d, one longer. A rule refines nothing where the kernel would
 * refuse (a dtype other than float32/float64/bfloat16, a count not
 * above 0, fewer than 2 dims for histogramdd) or the counts are not known. */
#include "shape_rules.h"

/* Input 0 as the kernel takes it: its dtype one of the histogram kernel's. */
static bool sh_in(ts_sr_call *c, ts_sr_shape *a) {
  if (!ts_sr_tensor(c, 0, a)) return false;
  return a->dtype == TS_DT_FLOAT32 || a->dtype == TS_DT_FLOAT64 || a->dtype == TS_DT_BFLOAT16;
}

/* A contiguous tensor shape of like's dtype and meta, sizes s[0..rank). */
static void sh_make(ts_sr_shape *o, const ts_sr_shape *like, int32_t rank, const int64_t *s) {
  ts_sr_unknown(o);
  o->dtype = like->dtype;
  o->device = like->device;
  o->requires_grad = like->requires_grad;
  o->rank = rank;
  for (int32_t k = 0; k < rank; k++) o->sizes[k] = s[k];
  ts_sr_contiguous(o);
}

/* The bin counts of a histogramdd call from its int[] or int argument i and
 * the input's last dim: false when not all known or not all above 0. */
static bool sh_counts(ts_sr_call *c, uint32_t i, const ts_sr_shape *a, int64_t *ct, int32_t *n) {
  if (a->rank < 2 || a->sizes[a->rank - 1] < 0 || a->sizes[a->rank - 1] > TS_SR_MAX_RANK) return false;
  *n = (int32_t)a->sizes[a->rank - 1];
  int64_t v, list[TS_SR_MAX_RANK];
  int32_t got = 0;
  if (ts_sr_int(c, i, &v)) {
    for (int32_t d = 0; d < *n; d++) ct[d] = v;
  } else if (ts_sr_int_list(c, i, list, &got, TS_SR_MAX_RANK) && got >= *n) {
    for (int32_t d = 0; d < *n; d++) ct[d] = list[d];
  } else {
    return false;
  }
  for (int32_t d = 0; d < *n; d++)
    if (ct[d] <= 0) return false;
  return true;
}

/* Output `out` as a list of n edge tensors, ct[d] + 1 long each. */
static void sh_edge_list(ts_sr_call *c, uint32_t out, const ts_sr_shape *a, const int64_t *ct, int32_t n) {
  ts_sr_shape e[TS_SR_MAX_RANK];
  for (int32_t d = 0; d < n; d++) {
    int64_t s = ct[d] + 1;
    sh_make(&e[d], a, 1, &s);
  }
  ts_sr_set_list(c, out, e, (uint32_t)n);
}

/* histogram.bin_ct(self, bins): hist [bins], bin_edges [bins + 1] */
static void sr_histogram_ct(ts_sr_call *c) {
  ts_sr_shape a, o;
  int64_t b;
  if (!sh_in(c, &a) || !ts_sr_int(c, 1, &b) || b <= 0) return;
  sh_make(&o, &a, 1, &b);
  ts_sr_set(c, 0, &o);
  b++;
  sh_make(&o, &a, 1, &b);
  ts_sr_set(c, 1, &o);
}

/* histogram.bins_tensor(self, bins): hist [numel(bins) - 1], bin_edges as bins */
static void sr_histogram_bins(ts_sr_call *c) {
  ts_sr_shape a, b, o;
  if (!sh_in(c, &a) || !ts_sr_tensor(c, 1, &b) || b.dtype != a.dtype || b.rank != 1 || b.sizes[0] < 2) return;
  int64_t n = b.sizes[0] - 1;
  sh_make(&o, &a, 1, &n);
  ts_sr_set(c, 0, &o);
  n++;
  sh_make(&o, &a, 1, &n);
  ts_sr_set(c, 1, &o);
}

/* histogramdd (int[] or int bins), _histogramdd_from_bin_cts,
 * _histogramdd_bin_edges */
static void sr_histogramdd_ct(ts_sr_call *c) {
  ts_sr_shape a, o;
  int64_t ct[TS_SR_MAX_RANK];
  int32_t n;
  if (!sh_in(c, &a) || !sh_counts(c, 1, &a, ct, &n)) return;
  ts_kind k = c->node->kind;
  if (k == TS_K_aten__histogramdd_bin_edges) {
    sh_edge_list(c, 0, &a, ct, n);
    return;
  }
  sh_make(&o, &a, n, ct);
  ts_sr_set(c, 0, &o);
  if (k == TS_K_aten_histogramdd) sh_edge_list(c, 1, &a, ct, n);
}

/* histogramdd.TensorList_bins, _histogramdd_from_bin_tensors: the hist's
 * sizes from the edges' lengths; histogramdd's bin_edges are the bins */
static void sr_histogramdd_tensors(ts_sr_call *c) {
  ts_sr_shape a, o, e[TS_SR_MAX_RANK];
  uint32_t ne = 0;
  int64_t ct[TS_SR_MAX_RANK];
  if (!sh_in(c, &a) || a.rank < 2 || !ts_sr_tensor_list(c, 1, e, &ne, TS_SR_MAX_RANK) ||
      (int64_t)ne != a.sizes[a.rank - 1])
    return;
  for (uint32_t d = 0; d < ne; d++) {
    if (e[d].dtype != a.dtype || e[d].rank != 1 || e[d].sizes[0] < 2) return;
    ct[d] = e[d].sizes[0] - 1;
  }
  sh_make(&o, &a, (int32_t)ne, ct);
  ts_sr_set(c, 0, &o);
  if (c->node->kind == TS_K_aten_histogramdd) ts_sr_set_list(c, 1, e, ne);
}

const ts_sr_def ts_sr_rules_histogram[] = {
    {"aten::_histogramdd_bin_edges", sr_histogramdd_ct},
    {"aten::_histogramdd_from_bin_cts", sr_histogramdd_ct},
    {"aten::_histogramdd_from_bin_tensors", sr_histogramdd_tensors},
    {"aten::histogram.bin_ct", sr_histogram_ct},
    {"aten::histogram.bins_tensor", sr_histogram_bins},
    {"aten::histogramdd", sr_histogramdd_ct},
    {"aten::histogramdd.TensorList_bins", sr_histogramdd_tensors},
    {"aten::histogramdd.int_bins", sr_histogramdd_ct},
    {NULL, NULL},
};
