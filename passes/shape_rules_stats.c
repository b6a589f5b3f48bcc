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
  int8_t dt = a.dtype == TS_DT_NONE ? TS_DT_NONE : ts_dtype_is_float((ts_dtype)a.dtype) ? a.dtype : TS_DT_INT64;
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

/* linalg_matrix_power: self's sizes */
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

const ts_sr_def ts_sr_rules_stats[] = {
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
    {NULL, NULL},
};
