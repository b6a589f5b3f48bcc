/* passes/shape_rules_stats.c: shape rules of the BLAS-like ops
 * (runtime/kernels/blas2.c) and of the statistics, norms and reductions of
 * runtime/kernels/stats.c. Each plans what it can from known ranks, sizes
 * and constant arguments and leaves the rest unknown. */
#include "shape_rules.h"

/* An unknown shape with in's dtype, device and requires_grad. */
static void ss_like(ts_sr_shape *out, const ts_sr_shape *in) {
  ts_sr_unknown(out);
  out->dtype = in->dtype;
  out->device = in->device;
  out->requires_grad = in->requires_grad;
}

/* Sets output i to `rank` sizes (contiguous) with in's meta and dtype dt. */
static void ss_set(ts_sr_call *c, uint32_t i, const ts_sr_shape *in, int8_t dt, int32_t rank, const int64_t *sizes) {
  ts_sr_shape out;
  ss_like(&out, in);
  out.dtype = dt;
  if (rank >= 0 && rank <= TS_SR_MAX_RANK) {
    out.rank = rank;
    for (int32_t k = 0; k < rank; k++) out.sizes[k] = sizes[k];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, i, &out);
}

static int8_t ss_promote(int8_t a, int8_t b) {
  if (a == TS_DT_NONE || b == TS_DT_NONE) return TS_DT_NONE;
  return (int8_t)ts_type_promote((ts_dtype)a, (ts_dtype)b);
}

/* ----------------------------------------------------------- blas2.c */

/* mv / addmv: [n] from mat (input m_arg) [n, k] */
static void ss_mv_at(ts_sr_call *c, uint32_t m_arg) {
  ts_sr_shape m;
  if (!ts_sr_tensor(c, m_arg, &m)) return;
  int64_t n = m.rank == 2 ? m.sizes[0] : -1;
  ss_set(c, 0, &m, m.dtype, m.rank == 2 ? 1 : -1, &n);
}
static void ss_mv(ts_sr_call *c) { ss_mv_at(c, 0); }
static void ss_addmv(ts_sr_call *c) { ss_mv_at(c, 1); }

/* dot / vdot: a 0-d result of self's dtype */
static void ss_dot(ts_sr_call *c) {
  ts_sr_shape a;
  if (!ts_sr_tensor(c, 0, &a)) return;
  ss_set(c, 0, &a, a.dtype, 0, NULL);
}

/* trace: 0-d; integers sum in int64 */
static void ss_trace(ts_sr_call *c) {
  ts_sr_shape a;
  if (!ts_sr_tensor(c, 0, &a)) return;
  int8_t dt = a.dtype == TS_DT_NONE                                                          ? TS_DT_NONE
              : ts_dtype_is_float((ts_dtype)a.dtype) || ts_dtype_is_complex((ts_dtype)a.dtype) ? a.dtype
                                                                                              : TS_DT_INT64;
  ss_set(c, 0, &a, dt, 0, NULL);
}

/* outer(a [n], b [m]) / addr(self, a, b): [n, m], the operands' promoted
 * dtype */
static void ss_outer_at(ts_sr_call *c, uint32_t first, bool self) {
  ts_sr_shape a, b, s;
  if (!ts_sr_tensor(c, first, &a) || !ts_sr_tensor(c, first + 1, &b)) return;
  int8_t dt = ss_promote(a.dtype, b.dtype);
  if (self) {
    if (!ts_sr_tensor(c, 0, &s)) return;
    dt = ss_promote(dt, s.dtype);
  }
  int64_t sz[2] = {a.rank == 1 ? a.sizes[0] : -1, b.rank == 1 ? b.sizes[0] : -1};
  ss_set(c, 0, &a, dt, a.rank == 1 && b.rank == 1 ? 2 : -1, sz);
}
static void ss_outer(ts_sr_call *c) { ss_outer_at(c, 0, false); }
static void ss_addr(ts_sr_call *c) { ss_outer_at(c, 1, true); }

/* addbmm(self, b1 [B, n, k], b2 [B, k, m]): [n, m] */
static void ss_addbmm(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 1, &a) || !ts_sr_tensor(c, 2, &b)) return;
  int64_t sz[2] = {a.rank == 3 ? a.sizes[1] : -1, b.rank == 3 ? b.sizes[2] : -1};
  ss_set(c, 0, &a, a.dtype, a.rank == 3 && b.rank == 3 ? 2 : -1, sz);
}

/* tensordot(a, b, dims_a, dims_b): a's free dims then b's */
static void ss_tensordot(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b)) return;
  int64_t da[TS_SR_MAX_RANK], db[TS_SR_MAX_RANK], sz[TS_SR_MAX_RANK];
  int32_t na, nb, r = 0;
  if (a.rank < 0 || b.rank < 0 || !ts_sr_int_list(c, 2, da, &na, TS_SR_MAX_RANK) ||
      !ts_sr_int_list(c, 3, db, &nb, TS_SR_MAX_RANK) || na != nb) {
    ss_set(c, 0, &a, a.dtype, -1, NULL);
    return;
  }
  bool ca[TS_SR_MAX_RANK] = {false}, cb[TS_SR_MAX_RANK] = {false};
  for (int32_t k = 0; k < na; k++) {
    int64_t x, y;
    if (!ts_sr_wrap_dim(da[k], a.rank, &x) || !ts_sr_wrap_dim(db[k], b.rank, &y)) return;
    ca[x] = cb[y] = true;
  }
  for (int32_t k = 0; k < a.rank; k++)
    if (!ca[k]) sz[r++] = a.sizes[k];
  for (int32_t k = 0; k < b.rank && r < TS_SR_MAX_RANK; k++)
    if (!cb[k]) sz[r++] = b.sizes[k];
  ss_set(c, 0, &a, a.dtype, r, sz);
}

/* inner(a, b): a's dims but the last, then b's (a product with a 0-d one) */
static void ss_inner(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b)) return;
  if (a.rank <= 0 || b.rank <= 0 || a.rank + b.rank - 2 > TS_SR_MAX_RANK) {
    ss_set(c, 0, &a, a.rank == 0 || b.rank == 0 ? ss_promote(a.dtype, b.dtype) : a.dtype, -1, NULL);
    return;
  }
  int64_t sz[TS_SR_MAX_RANK];
  int32_t r = 0;
  for (int32_t k = 0; k + 1 < a.rank; k++) sz[r++] = a.sizes[k];
  for (int32_t k = 0; k + 1 < b.rank; k++) sz[r++] = b.sizes[k];
  ss_set(c, 0, &a, a.dtype, r, sz);
}

/* linalg_multi_dot(tensors): [first rows if 2-d, last cols if 2-d] */
static void ss_multi_dot(ts_sr_call *c) {
  ts_sr_shape t[64];
  uint32_t n;
  if (!ts_sr_tensor_list(c, 0, t, &n, 64) || n < 2) return;
  const ts_sr_shape *f = &t[0], *l = &t[n - 1];
  int64_t sz[2];
  int32_t r = 0;
  if (f->rank < 1 || f->rank > 2 || l->rank < 1 || l->rank > 2) {
    ss_set(c, 0, f, f->dtype, -1, NULL);
    return;
  }
  if (f->rank == 2) sz[r++] = f->sizes[0];
  if (l->rank == 2) sz[r++] = l->sizes[1];
  ss_set(c, 0, f, f->dtype, r, sz);
}

/* linalg_vecdot(x, y, dim): the broadcast shape without dim */
static void ss_vecdot(ts_sr_call *c) {
  ts_sr_shape x, y;
  int64_t dim, d;
  if (!ts_sr_tensor(c, 0, &x) || !ts_sr_tensor(c, 1, &y)) return;
  ts_sr_shape b = x;
  if (!ts_sr_broadcast(&b, &y)) return;
  if (b.rank < 0 || !ts_sr_int(c, 2, &dim) || !ts_sr_wrap_dim(dim, b.rank, &d) || b.rank == 0) {
    ss_set(c, 0, &x, x.dtype, -1, NULL);
    return;
  }
  int64_t sz[TS_SR_MAX_RANK];
  int32_t r = 0;
  for (int32_t k = 0; k < b.rank; k++)
    if (k != d) sz[r++] = b.sizes[k];
  ss_set(c, 0, &x, x.dtype, r, sz);
}

/* linalg_matrix_power, index_reduce: self's sizes */
static void ss_matrix_power(ts_sr_call *c) {
  ts_sr_shape a;
  if (!ts_sr_tensor(c, 0, &a)) return;
  ss_set(c, 0, &a, a.dtype, a.rank, a.sizes);
}

/* linalg_vander(x [..., n], N=n): [..., n, N]; integers give int64 */
static void ss_vander(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x)) return;
  int8_t dt = x.dtype == TS_DT_NONE ? TS_DT_NONE : ts_dtype_is_float((ts_dtype)x.dtype) ? x.dtype : TS_DT_INT64;
  int64_t N, sz[TS_SR_MAX_RANK];
  if (x.rank < 0 || x.rank + 1 > TS_SR_MAX_RANK) {
    ss_set(c, 0, &x, dt, -1, NULL);
    return;
  }
  int32_t r = x.rank ? x.rank : 1;
  for (int32_t k = 0; k < x.rank; k++) sz[k] = x.sizes[k];
  if (!x.rank) sz[0] = 1;
  if (ts_sr_is_none(c, 1)) N = sz[r - 1];
  else if (!ts_sr_int(c, 1, &N)) N = -1;
  sz[r] = N;
  ss_set(c, 0, &x, dt, r + 1, sz);
}

/* ----------------------------------------------------------- stats.c */

/* The sizes of input 0 reduced over the dims at dim_arg (-1: all; an int,
 * or an int[]? with None and [] meaning all) with keepdim at keep_arg (-1:
 * false), a reduction over all dims kept giving every dim as 1: the rank,
 * -1 when not known, -2 when invalid. */
static int32_t ss_reduce_sizes(ts_sr_call *c, const ts_sr_shape *in, int dim_arg, int keep_arg, int64_t *sz) {
  int64_t dims[TS_SR_MAX_RANK];
  int32_t n = 0, r = 0;
  bool all = dim_arg < 0, keep = false, known = in->rank >= 0;
  if (dim_arg >= 0 && known) {
    const ts_type *ty = (uint32_t)dim_arg < c->node->ninputs ? c->node->inputs[dim_arg]->type
                                                             : c->schema->args[dim_arg].type;
    if (ts_sr_is_none(c, (uint32_t)dim_arg)) all = true;
    else if (ty->kind == TS_TY_INT) known = ts_sr_int(c, (uint32_t)dim_arg, &dims[0]), n = 1;
    else known = ts_sr_int_list(c, (uint32_t)dim_arg, dims, &n, TS_SR_MAX_RANK), all = known && n == 0;
  }
  if (keep_arg >= 0 && !ts_sr_bool(c, (uint32_t)keep_arg, &keep)) known = false;
  if (!known) return -1;
  bool red[TS_SR_MAX_RANK] = {false};
  for (int32_t k = 0; !all && k < n; k++) {
    int64_t d;
    if (!ts_sr_wrap_dim(dims[k], in->rank, &d)) return -2;
    if (in->rank > 0) red[d] = true;
  }
  for (int32_t k = 0; k < in->rank; k++) {
    if (!all && !red[k]) sz[r++] = in->sizes[k];
    else if (keep) sz[r++] = 1;
  }
  return r;
}

/* A reduction (ss_reduce_sizes): output 0 of dtype dt and, when dt2 !=
 * TS_DT_NONE, output 1 of dt2. */
static void ss_reduce(ts_sr_call *c, int dim_arg, int keep_arg, int8_t dt, int8_t dt2) {
  ts_sr_shape in;
  int64_t sz[TS_SR_MAX_RANK];
  if (!ts_sr_tensor(c, 0, &in)) return;
  int32_t r = ss_reduce_sizes(c, &in, dim_arg, keep_arg, sz);
  if (r == -2) return;
  ss_set(c, 0, &in, dt, r, sz);
  if (dt2 != TS_DT_NONE) ss_set(c, 1, &in, dt2, r, sz);
}

static int8_t ss_self_dt(const ts_sr_call *c) {
  ts_sr_shape in;
  return ts_sr_tensor(c, 0, &in) ? in.dtype : TS_DT_NONE;
}

/* the dtype argument at i if given, else `dflt` */
static int8_t ss_dtype_or(const ts_sr_call *c, uint32_t i, int8_t dflt) {
  int8_t dt;
  if (!ts_sr_dtype_arg(c, i, &dt)) return TS_DT_NONE;
  return dt != TS_DT_NONE ? dt : dflt;
}

static void ss_all(ts_sr_call *c) { ss_reduce(c, -1, -1, ss_self_dt(c), TS_DT_NONE); }
/* median.dim, nanmedian.dim, mode (self, dim, keepdim): values, indices */
static void ss_sel_dim(ts_sr_call *c) { ss_reduce(c, 1, 2, ss_self_dt(c), TS_DT_INT64); }
static void ss_kthvalue(ts_sr_call *c) { ss_reduce(c, 2, 3, ss_self_dt(c), TS_DT_INT64); }
/* var_mean / std_mean (self, unbiased); .dim and .correction (self, dim,
 * _, keepdim) */
static void ss_varmean(ts_sr_call *c) { ss_reduce(c, -1, -1, ss_self_dt(c), ss_self_dt(c)); }
static void ss_varmean_dim(ts_sr_call *c) { ss_reduce(c, 1, 3, ss_self_dt(c), ss_self_dt(c)); }

/* aminmax(self, *, dim?, keepdim): a 0-d self reduced over dim 0 and kept
 * gives [1] (as PyTorch 1.13) */
static void ss_aminmax(ts_sr_call *c) {
  ts_sr_shape in;
  bool keep;
  if (!ts_sr_tensor(c, 0, &in)) return;
  if (in.rank == 0 && !ts_sr_is_none(c, 1) && ts_sr_bool(c, 2, &keep) && keep) {
    int64_t one = 1;
    ss_set(c, 0, &in, in.dtype, 1, &one);
    ss_set(c, 1, &in, in.dtype, 1, &one);
    return;
  }
  ss_reduce(c, 1, 2, in.dtype, in.dtype);
}

/* nansum(self, dim?, keepdim, dtype): integers and bool sum in int64 */
static void ss_nansum(ts_sr_call *c) {
  int8_t s = ss_self_dt(c);
  int8_t d = s == TS_DT_NONE ? TS_DT_NONE : ts_dtype_is_float((ts_dtype)s) ? s : TS_DT_INT64;
  ss_reduce(c, 1, 2, ss_dtype_or(c, 3, d), TS_DT_NONE);
}
static void ss_nanmean(ts_sr_call *c) { ss_reduce(c, 1, 2, ss_dtype_or(c, 3, ss_self_dt(c)), TS_DT_NONE); }
/* linalg_vector_norm / linalg_matrix_norm / linalg_norm (self, ord, dim,
 * keepdim, dtype) */
static void ss_norm(ts_sr_call *c) {
  int8_t dt = ss_dtype_or(c, 4, ss_self_dt(c));
  /* a complex input's norm is real (runtime/kernels/complex.c) */
  if (ts_dtype_is_complex((ts_dtype)dt)) dt = dt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32;
  ss_reduce(c, 2, 3, dt, TS_DT_NONE);
}

/* quantile(self, q, dim?, keepdim, ...): a 1-d tensor q adds its length in
 * front */
static void ss_quantile(ts_sr_call *c) {
  ts_sr_shape q, in;
  int64_t sz[TS_SR_MAX_RANK + 1];
  if (!ts_sr_tensor(c, 0, &in)) return;
  bool qtensor = c->schema->args[1].type->kind == TS_TY_TENSOR;
  int32_t lead = 0;
  if (qtensor) {
    if (!ts_sr_tensor(c, 1, &q)) return;
    lead = q.rank == 1 ? 1 : q.rank == 0 ? 0 : -1;
  }
  int32_t r = lead < 0 ? -1 : ss_reduce_sizes(c, &in, 2, 3, sz + lead);
  if (r == -2) return;
  if (r >= 0 && lead) {
    if (r + 1 > TS_SR_MAX_RANK) return;
    sz[0] = q.sizes[0], r++;
  }
  ss_set(c, 0, &in, in.dtype, r, sz);
}

/* dist: 0-d of the promoted dtype */
static void ss_dist(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b)) return;
  ss_set(c, 0, &a, ss_promote(a.dtype, b.dtype), 0, NULL);
}

/* renorm: self's sizes and dtype */
static void ss_renorm(ts_sr_call *c) { ss_matrix_power(c); }

/* cov / corrcoef(x [vars, obs]): [vars, vars], squeezed (one variable or a
 * 1-d x: 0-d); integers give float32 */
static void ss_cov(ts_sr_call *c) {
  ts_sr_shape x;
  if (!ts_sr_tensor(c, 0, &x)) return;
  int8_t dt = x.dtype == TS_DT_NONE ? TS_DT_NONE : ts_dtype_is_float((ts_dtype)x.dtype) ? x.dtype : TS_DT_FLOAT32;
  int64_t sz[2] = {0, 0};
  if (x.rank == 2 && x.sizes[0] >= 0) {
    sz[0] = sz[1] = x.sizes[0];
    ss_set(c, 0, &x, dt, x.sizes[0] == 1 ? 0 : 2, sz);
  } else {
    ss_set(c, 0, &x, dt, x.rank >= 0 && x.rank < 2 ? 0 : -1, sz);
  }
}

/* native_batch_norm(input [N, C, *], ..., training, ...): the output as
 * input; save_mean and save_invstd [C] in training, [0] in evaluation */
static void ss_native_batch_norm(ts_sr_call *c) {
  ts_sr_shape x;
  bool training;
  if (!ts_sr_tensor(c, 0, &x)) return;
  ss_set(c, 0, &x, x.dtype, x.rank, x.sizes);
  int64_t n = -1;
  if (ts_sr_bool(c, 5, &training)) n = !training ? 0 : x.rank >= 2 ? x.sizes[1] : -1;
  ss_set(c, 1, &x, x.dtype, 1, &n);
  ss_set(c, 2, &x, x.dtype, 1, &n);
}

/* native_layer_norm(input, normalized_shape, ...): the output as input;
 * mean and rstd with the normalised dims 1 */
static void ss_native_layer_norm(ts_sr_call *c) {
  ts_sr_shape x;
  int64_t ns[TS_SR_MAX_RANK], sz[TS_SR_MAX_RANK] = {0};
  int32_t n;
  if (!ts_sr_tensor(c, 0, &x)) return;
  ss_set(c, 0, &x, x.dtype, x.rank, x.sizes);
  bool known = x.rank >= 0 && ts_sr_size_list(c, 1, ns, &n, TS_SR_MAX_RANK) && n <= x.rank;
  for (int32_t k = 0; known && k < x.rank; k++) sz[k] = k < x.rank - n ? x.sizes[k] : 1;
  ss_set(c, 1, &x, x.dtype, known ? x.rank : -1, sz);
  ss_set(c, 2, &x, x.dtype, known ? x.rank : -1, sz);
}

/* _scaled_dot_product_attention(q [..., L, E], k [..., S, E], v [..., S,
 * Ev], ...): ([..., L, Ev], [..., L, S]) when the batch dims agree */
static void ss_sdpa(ts_sr_call *c) {
  ts_sr_shape q, k, v;
  if (!ts_sr_tensor(c, 0, &q) || !ts_sr_tensor(c, 1, &k) || !ts_sr_tensor(c, 2, &v)) return;
  bool known = q.rank >= 2 && k.rank == q.rank && v.rank == q.rank;
  for (int32_t i = 0; known && i < q.rank - 2; i++)
    known = q.sizes[i] >= 0 && q.sizes[i] == k.sizes[i] && q.sizes[i] == v.sizes[i];
  int64_t sz[TS_SR_MAX_RANK] = {0};
  for (int32_t i = 0; known && i < q.rank - 1; i++) sz[i] = q.sizes[i];
  if (known) sz[q.rank - 1] = v.sizes[q.rank - 1];
  ss_set(c, 0, &q, q.dtype, known ? q.rank : -1, sz);
  if (known) sz[q.rank - 1] = k.sizes[q.rank - 2];
  ss_set(c, 1, &q, q.dtype, known ? q.rank : -1, sz);
}

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, ...):
 * data with the axis dim the number of segments (the last dim of lengths,
 * or of offsets less one) */
static void ss_segment_reduce(ts_sr_call *c) {
  ts_sr_shape d, seg;
  int64_t axis = 0, ax = 0;
  if (!ts_sr_tensor(c, 0, &d)) return;
  bool off = !ts_sr_is_none(c, 4);
  bool known = d.rank > 0 && ts_sr_int(c, 5, &axis) && ts_sr_wrap_dim(axis, d.rank, &ax) &&
               ts_sr_tensor(c, off ? 4 : 2, &seg) && seg.rank == ax + 1;
  int64_t sz[TS_SR_MAX_RANK] = {0};
  for (int32_t k = 0; known && k < d.rank; k++) sz[k] = d.sizes[k];
  if (known) sz[ax] = seg.sizes[ax] < 0 ? -1 : off ? seg.sizes[ax] - 1 : seg.sizes[ax];
  ss_set(c, 0, &d, d.dtype, known ? d.rank : -1, sz);
}

const ts_sr_def ts_sr_rules_stats[] = {
    {"aten::_scaled_dot_product_attention", ss_sdpa},
    {"aten::addbmm", ss_addbmm},
    {"aten::addmv", ss_addmv},
    {"aten::addr", ss_addr},
    {"aten::dot", ss_dot},
    {"aten::inner", ss_inner},
    {"aten::linalg_matrix_power", ss_matrix_power},
    {"aten::linalg_multi_dot", ss_multi_dot},
    {"aten::linalg_vander", ss_vander},
    {"aten::linalg_vecdot", ss_vecdot},
    {"aten::mv", ss_mv},
    {"aten::outer", ss_outer},
    {"aten::tensordot", ss_tensordot},
    {"aten::trace", ss_trace},
    {"aten::vdot", ss_dot},
    {"aten::aminmax", ss_aminmax},
    {"aten::corrcoef", ss_cov},
    {"aten::cov", ss_cov},
    {"aten::dist", ss_dist},
    {"aten::index_reduce", ss_matrix_power},
    {"aten::kthvalue", ss_kthvalue},
    {"aten::linalg_matrix_norm", ss_norm},
    {"aten::linalg_matrix_norm.str_ord", ss_norm},
    {"aten::linalg_norm", ss_norm},
    {"aten::linalg_norm.ord_str", ss_norm},
    {"aten::linalg_vector_norm", ss_norm},
    {"aten::median", ss_all},
    {"aten::median.dim", ss_sel_dim},
    {"aten::mode", ss_sel_dim},
    {"aten::nanmean", ss_nanmean},
    {"aten::nanmedian", ss_all},
    {"aten::nanmedian.dim", ss_sel_dim},
    {"aten::nanquantile", ss_quantile},
    {"aten::nanquantile.scalar", ss_quantile},
    {"aten::nansum", ss_nansum},
    {"aten::native_batch_norm", ss_native_batch_norm},
    {"aten::native_layer_norm", ss_native_layer_norm},
    {"aten::quantile", ss_quantile},
    {"aten::quantile.scalar", ss_quantile},
    {"aten::renorm", ss_renorm},
    {"aten::segment_reduce", ss_segment_reduce},
    {"aten::std_mean", ss_varmean},
    {"aten::std_mean.correction", ss_varmean_dim},
    {"aten::std_mean.dim", ss_varmean_dim},
    {"aten::var_mean", ss_varmean},
    {"aten::var_mean.correction", ss_varmean_dim},
    {"aten::var_mean.dim", ss_varmean_dim},
    {NULL, NULL},
};
