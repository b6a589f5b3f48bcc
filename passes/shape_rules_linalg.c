/* passes/shape_rules_linalg.c: shape rules of the linear algebra ops
 * (runtime/kernels/linalg.c). Every output is contiguous in the input's
 * dtype (pivots and info int32, ranks int64), its batch dims those of the
 * input or of the inputs broadcast; a rule refines nothing when an input's
 * rank or dtype is unknown or the kernel would refuse it (fewer than 2
 * dims, a dtype other than float32/float64; eig and eigvals also take
 * complex inputs, and give complex outputs). linalg_qr (its mode a
 * string), linalg_lstsq (outputs that depend on the driver and the ranks
 * found), linalg_tensorinv and linalg_tensorsolve have no rule. */
#include "shape_rules.h"

#include <string.h>

/* Input i as a batch of matrices the kernels take. */
static bool sl_in(ts_sr_call *c, uint32_t i, ts_sr_shape *a, int32_t minrank) {
  if (!ts_sr_tensor(c, i, a) || a->rank < minrank) return false;
  return a->dtype == TS_DT_FLOAT32 || a->dtype == TS_DT_FLOAT64;
}

/* Output i: the first nb dims of `like`, then nm more (r, cc), dtype dt. */
static void sl_set(ts_sr_call *c, uint32_t i, const ts_sr_shape *like, int32_t nb, int8_t dt, int32_t nm, int64_t r,
                   int64_t cc) {
  ts_sr_shape o;
  ts_sr_unknown(&o);
  if (nb + nm > TS_SR_MAX_RANK) return;
  o.dtype = dt;
  o.device = like->device;
  o.requires_grad = dt == TS_DT_INT32 ? 0 : like->requires_grad;
  o.rank = nb + nm;
  memcpy(o.sizes, like->sizes, (size_t)nb * sizeof *o.sizes);
  if (nm > 0) o.sizes[nb] = r;
  if (nm > 1) o.sizes[nb + 1] = cc;
  ts_sr_contiguous(&o);
  ts_sr_set(c, i, &o);
}

/* min(m, n) of two sizes: 0 when either is, unknown when either is not known */
static int64_t sl_min(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a < 0 || b < 0) return -1;
  return a < b ? a : b;
}

/* lu_factor_ex, lu_factor, _lu_with_info: LU as A, pivots (*, min(m, n)), info (*) */
static void sr_lu_factor(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1];
  sl_set(c, 0, &a, nb, a.dtype, 2, m, n);
  sl_set(c, 1, &a, nb, TS_DT_INT32, 1, sl_min(m, n), 0);
  sl_set(c, 2, &a, nb, TS_DT_INT32, 0, 0, 0);
}

/* linalg_lu: P (*, m, m), L (*, m, k), U (*, k, n) */
static void sr_linalg_lu(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1], k = sl_min(m, n);
  sl_set(c, 0, &a, nb, a.dtype, 2, m, m);
  sl_set(c, 1, &a, nb, a.dtype, 2, m, k);
  sl_set(c, 2, &a, nb, a.dtype, 2, k, n);
}

/* lu_unpack(LU, pivots, unpack_data, unpack_pivots): P, L, U as linalg_lu,
 * or [0] for the ones not asked for */
static void sr_lu_unpack(ts_sr_call *c) {
  ts_sr_shape a;
  bool data, piv;
  if (!sl_in(c, 0, &a, 2) || !ts_sr_bool(c, 2, &data) || !ts_sr_bool(c, 3, &piv)) return;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1], k = sl_min(m, n);
  ts_sr_shape e = a;
  e.sizes[0] = 0;
  if (piv)
    sl_set(c, 0, &a, nb, a.dtype, 2, m, m);
  else
    sl_set(c, 0, &e, 1, a.dtype, 0, 0, 0);
  if (data) {
    sl_set(c, 1, &a, nb, a.dtype, 2, m, k);
    sl_set(c, 2, &a, nb, a.dtype, 2, k, n);
  } else {
    sl_set(c, 1, &e, 1, a.dtype, 0, 0, 0);
    sl_set(c, 2, &e, 1, a.dtype, 0, 0, 0);
  }
}

/* Square A's batch: false when A is not a batch of square matrices. */
static bool sl_square(ts_sr_call *c, uint32_t i, ts_sr_shape *a) {
  if (!sl_in(c, i, a, 2)) return false;
  int64_t m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  return !(m >= 0 && n >= 0 && m != n);
}

/* det, linalg_det, logdet: (*) */
static void sr_det(ts_sr_call *c) {
  ts_sr_shape a;
  if (sl_square(c, 0, &a)) sl_set(c, 0, &a, a.rank - 2, a.dtype, 0, 0, 0);
}

/* slogdet, linalg_slogdet: sign and logabsdet (*) */
static void sr_slogdet(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_square(c, 0, &a)) return;
  sl_set(c, 0, &a, a.rank - 2, a.dtype, 0, 0, 0);
  sl_set(c, 1, &a, a.rank - 2, a.dtype, 0, 0, 0);
}

/* _linalg_det: det, LU, pivots; _linalg_slogdet: sign, logabsdet, LU, pivots */
static void sr__det(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_square(c, 0, &a)) return;
  int32_t nb = a.rank - 2, o = 0;
  int64_t n = a.sizes[nb] >= 0 ? a.sizes[nb] : a.sizes[nb + 1];
  sl_set(c, o++, &a, nb, a.dtype, 0, 0, 0);
  if (c->node->kind == TS_K_aten__linalg_slogdet) sl_set(c, o++, &a, nb, a.dtype, 0, 0, 0);
  sl_set(c, o++, &a, nb, a.dtype, 2, n, n);
  sl_set(c, o, &a, nb, TS_DT_INT32, 1, n, 0);
}

/* inverse, linalg_inv: as A; linalg_inv_ex: and info (*) */
static void sr_inv(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_square(c, 0, &a)) return;
  ts_sr_contiguous(&a);
  ts_sr_set(c, 0, &a);
  if (c->node->kind == TS_K_aten_linalg_inv_ex) sl_set(c, 1, &a, a.rank - 2, TS_DT_INT32, 0, 0, 0);
}

/* The batch dims of a (its first na) and b (its first nb) broadcast into
 * out (rank in *nd): false when they cannot be told or do not match. */
static bool sl_bcast(const ts_sr_shape *a, int32_t na, const ts_sr_shape *b, int32_t nb, ts_sr_shape *out) {
  ts_sr_shape x = *a, y = *b;
  x.rank = na;
  y.rank = nb;
  if (!ts_sr_broadcast(&x, &y) || x.rank < 0) return false;
  *out = x;
  out->rank = x.rank;
  return true;
}

/* linalg_lu_solve(LU, pivots, B, ...), lu_solve(B, LU, pivots): B's matrix
 * dims after the batches broadcast */
static void sr_lu_solve(ts_sr_call *c) {
  bool old = c->node->kind == TS_K_aten_lu_solve;
  ts_sr_shape lu, b, o;
  if (!sl_in(c, old ? 1 : 0, &lu, 2) || !sl_in(c, old ? 0 : 2, &b, 2) || lu.dtype != b.dtype) return;
  if (!sl_bcast(&b, b.rank - 2, &lu, lu.rank - 2, &o)) return;
  o.device = b.device;
  o.requires_grad = b.requires_grad;
  sl_set(c, 0, &o, o.rank, b.dtype, 2, b.sizes[b.rank - 2], b.sizes[b.rank - 1]);
}

/* linalg_solve, linalg_solve_ex, _linalg_solve_ex: the result as B with the
 * batches broadcast (B a vector when 1-d or A's shape less the last dim:
 * only decided when those sizes are known), then LU and pivots of A, info */
static void sr_solve(ts_sr_call *c) {
  ts_sr_shape a, b, o;
  if (!sl_square(c, 0, &a) || !sl_in(c, 1, &b, 1) || a.dtype != b.dtype) return;
  bool vec = b.rank == 1;
  if (!vec && b.rank == a.rank - 1) {
    vec = true;
    for (int32_t i = 0; i < b.rank; i++) {
      if (a.sizes[i] < 0 || b.sizes[i] < 0) return; /* cannot tell */
      vec = vec && a.sizes[i] == b.sizes[i];
    }
  }
  int32_t bm = vec ? 1 : 2;
  if (b.rank < bm) return;
  if (!sl_bcast(&b, b.rank - bm, &a, a.rank - 2, &o)) return;
  o.device = b.device;
  o.requires_grad = b.requires_grad;
  int32_t nb = o.rank;
  if (vec)
    sl_set(c, 0, &o, nb, b.dtype, 1, b.sizes[b.rank - 1], 0);
  else
    sl_set(c, 0, &o, nb, b.dtype, 2, b.sizes[b.rank - 2], b.sizes[b.rank - 1]);
  int32_t na = a.rank - 2;
  int64_t n = a.sizes[na] >= 0 ? a.sizes[na] : a.sizes[na + 1];
  if (c->node->kind == TS_K_aten__linalg_solve_ex) {
    sl_set(c, 1, &a, na, a.dtype, 2, n, n);
    sl_set(c, 2, &a, na, TS_DT_INT32, 1, n, 0);
    sl_set(c, 3, &a, na, TS_DT_INT32, 0, 0, 0);
  } else if (c->node->kind == TS_K_aten_linalg_solve_ex) {
    sl_set(c, 1, &a, na, TS_DT_INT32, 0, 0, 0);
  }
}

/* outputs as input i (square or not per `square`), contiguous; with info,
 * output 1 the batch in int32 (linalg_cholesky_ex) */
static void sl_as_input(ts_sr_call *c, uint32_t i, bool square, bool info) {
  ts_sr_shape a;
  if (square ? !sl_square(c, i, &a) : !sl_in(c, i, &a, 2)) return;
  ts_sr_contiguous(&a);
  ts_sr_set(c, 0, &a);
  if (info) sl_set(c, 1, &a, a.rank - 2, TS_DT_INT32, 0, 0, 0);
}

/* linalg_cholesky, cholesky, cholesky_inverse, matrix_exp: as A */
static void sr_as_square(ts_sr_call *c) { sl_as_input(c, 0, true, false); }
/* linalg_cholesky_ex: L as A, info (*) */
static void sr_cholesky_ex(ts_sr_call *c) { sl_as_input(c, 0, true, true); }
/* linalg_householder_product, orgqr: as the reflectors */
static void sr_as_input0(ts_sr_call *c) { sl_as_input(c, 0, false, false); }

/* ormqr(self, tau, other, ...): as other */
static void sr_ormqr(ts_sr_call *c) {
  ts_sr_shape a, o;
  if (!sl_in(c, 0, &a, 2) || !sl_in(c, 2, &o, 2) || a.dtype != o.dtype) return;
  ts_sr_contiguous(&o);
  ts_sr_set(c, 0, &o);
}

/* cholesky_solve(B, L, upper), linalg_solve_triangular(A, B, ...),
 * triangular_solve(B, A, ...): B's matrix dims after the batches broadcast,
 * in A's dtype; triangular_solve's copy of A broadcast too */
static void sr_tri_solve(ts_sr_call *c) {
  bool a_first = c->node->kind == TS_K_aten_linalg_solve_triangular;
  ts_sr_shape a, b, o;
  if (!sl_square(c, a_first ? 0 : 1, &a) || !sl_in(c, a_first ? 1 : 0, &b, 2)) return;
  if (!a_first && a.dtype != b.dtype) return;
  if (!sl_bcast(&b, b.rank - 2, &a, a.rank - 2, &o)) return;
  o.device = b.device;
  o.requires_grad = b.requires_grad;
  sl_set(c, 0, &o, o.rank, a.dtype, 2, b.sizes[b.rank - 2], b.sizes[b.rank - 1]);
  if (c->node->kind == TS_K_aten_triangular_solve)
    sl_set(c, 1, &o, o.rank, a.dtype, 2, a.sizes[a.rank - 2], a.sizes[a.rank - 1]);
}

/* linalg_eigh, linalg_eigvalsh, _linalg_eigh, symeig: eigenvalues (*, n),
 * real (float32/float64 for complex64/complex128 inputs), eigenvectors
 * (*, n, n) in the input's dtype when computed */
static void sr_eigh(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_square(c, 0, &a)) return;
  int32_t nb = a.rank - 2;
  int64_t n = a.sizes[nb] >= 0 ? a.sizes[nb] : a.sizes[nb + 1];
  int8_t vdt = a.dtype == TS_DT_COMPLEX64 ? TS_DT_FLOAT32 : a.dtype == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : a.dtype;
  sl_set(c, 0, &a, nb, vdt, 1, n, 0);
  bool v = c->node->kind == TS_K_aten_linalg_eigh;
  if (c->node->kind == TS_K_aten__linalg_eigh || c->node->kind == TS_K_aten_symeig)
    if (!ts_sr_bool(c, c->node->kind == TS_K_aten_symeig ? 1 : 2, &v)) return;
  if (v) sl_set(c, 1, &a, nb, a.dtype, 2, n, n);
}

/* linalg_eig, linalg_eigvals: eigenvalues (*, n) and eigenvectors (*, n, n)
 * in the complex dtype of the input's precision (float32/float64 or
 * complex64/complex128 inputs) */
static void sr_eig(ts_sr_call *c) {
  ts_sr_shape a;
  if (!ts_sr_tensor(c, 0, &a) || a.rank < 2) return;
  int8_t dt = a.dtype == TS_DT_FLOAT32 || a.dtype == TS_DT_COMPLEX64    ? TS_DT_COMPLEX64
              : a.dtype == TS_DT_FLOAT64 || a.dtype == TS_DT_COMPLEX128 ? TS_DT_COMPLEX128
                                                                         : TS_DT_NONE;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1];
  if (dt == TS_DT_NONE || (m >= 0 && n >= 0 && m != n)) return;
  if (n < 0) n = m;
  sl_set(c, 0, &a, nb, dt, 1, n, 0);
  if (c->node->kind == TS_K_aten_linalg_eig) sl_set(c, 1, &a, nb, dt, 2, n, n);
}

/* linalg_svd(A, full), _linalg_svd(A, full, uv), linalg_svdvals(A),
 * svd(A, some, uv): U, S, Vh (svd: V) */
static void sr_svd(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1], k = sl_min(m, n);
  ts_kind kind = c->node->kind;
  if (kind == TS_K_aten_linalg_svdvals) {
    sl_set(c, 0, &a, nb, a.dtype, 1, k, 0);
    return;
  }
  bool full, uv = true;
  if (!ts_sr_bool(c, 1, &full)) return;
  if ((kind == TS_K_aten__linalg_svd || kind == TS_K_aten_svd) && !ts_sr_bool(c, 2, &uv)) return;
  if (kind == TS_K_aten_svd) full = !full || !uv; /* some; zeros (m, m), (n, n) without uv */
  sl_set(c, 1, &a, nb, a.dtype, 1, k, 0);
  if (!uv && kind == TS_K_aten__linalg_svd) return;
  sl_set(c, 0, &a, nb, a.dtype, 2, m, full ? m : k);
  if (kind == TS_K_aten_svd)
    sl_set(c, 2, &a, nb, a.dtype, 2, n, full ? n : k);
  else
    sl_set(c, 2, &a, nb, a.dtype, 2, full ? n : k, n);
}

/* qr(A, some): Q (*, m, some ? k : m), R (*, some ? k : m, n) */
static void sr_qr(ts_sr_call *c) {
  ts_sr_shape a;
  bool some;
  if (!sl_in(c, 0, &a, 2) || !ts_sr_bool(c, 1, &some)) return;
  int32_t nb = a.rank - 2;
  int64_t m = a.sizes[nb], n = a.sizes[nb + 1], k = some ? sl_min(m, n) : m;
  sl_set(c, 0, &a, nb, a.dtype, 2, m, k);
  sl_set(c, 1, &a, nb, a.dtype, 2, k, n);
}

/* geqrf(A): a as A, tau (*, k) */
static void sr_geqrf(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  int32_t nb = a.rank - 2;
  sl_set(c, 0, &a, nb, a.dtype, 2, a.sizes[nb], a.sizes[nb + 1]);
  sl_set(c, 1, &a, nb, a.dtype, 1, sl_min(a.sizes[nb], a.sizes[nb + 1]), 0);
}

/* linalg_pinv (every overload), pinverse: (*, n, m) */
static void sr_pinv(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  int32_t nb = a.rank - 2;
  sl_set(c, 0, &a, nb, a.dtype, 2, a.sizes[nb + 1], a.sizes[nb]);
}

/* linalg_matrix_rank (every overload): int64 (*) */
static void sr_matrix_rank(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_in(c, 0, &a, 2)) return;
  sl_set(c, 0, &a, a.rank - 2, TS_DT_INT64, 0, 0, 0);
}

/* linalg_cond: (*) in A's dtype */
static void sr_cond(ts_sr_call *c) {
  ts_sr_shape a;
  if (sl_in(c, 0, &a, 2)) sl_set(c, 0, &a, a.rank - 2, a.dtype, 0, 0, 0);
}

/* linalg_ldl_factor(_ex): LD as A, pivots (*, n) int32, info (*) */
static void sr_ldl_factor(ts_sr_call *c) {
  ts_sr_shape a;
  if (!sl_square(c, 0, &a)) return;
  int32_t nb = a.rank - 2;
  int64_t n = a.sizes[nb] >= 0 ? a.sizes[nb] : a.sizes[nb + 1];
  sl_set(c, 0, &a, nb, a.dtype, 2, n, n);
  sl_set(c, 1, &a, nb, TS_DT_INT32, 1, n, 0);
  if (c->node->kind == TS_K_aten_linalg_ldl_factor_ex) sl_set(c, 2, &a, nb, TS_DT_INT32, 0, 0, 0);
}

/* linalg_ldl_solve(LD, pivots, B): B's matrix dims after the batches broadcast */
static void sr_ldl_solve(ts_sr_call *c) {
  ts_sr_shape ld, b, o;
  if (!sl_square(c, 0, &ld) || !sl_in(c, 2, &b, 2) || ld.dtype != b.dtype) return;
  if (!sl_bcast(&b, b.rank - 2, &ld, ld.rank - 2, &o)) return;
  o.device = b.device;
  o.requires_grad = b.requires_grad;
  sl_set(c, 0, &o, o.rank, b.dtype, 2, b.sizes[b.rank - 2], b.sizes[b.rank - 1]);
}

const ts_sr_def ts_sr_rules_linalg[] = {
    {"aten::_linalg_det", sr__det},
    {"aten::_linalg_eigh", sr_eigh},
    {"aten::_linalg_slogdet", sr__det},
    {"aten::_linalg_solve_ex", sr_solve},
    {"aten::_linalg_svd", sr_svd},
    {"aten::_lu_with_info", sr_lu_factor},
    {"aten::cholesky", sr_as_square},
    {"aten::cholesky_inverse", sr_as_square},
    {"aten::cholesky_solve", sr_tri_solve},
    {"aten::det", sr_det},
    {"aten::geqrf", sr_geqrf},
    {"aten::inverse", sr_inv},
    {"aten::linalg_cholesky", sr_as_square},
    {"aten::linalg_cholesky_ex", sr_cholesky_ex},
    {"aten::linalg_cond", sr_cond},
    {"aten::linalg_cond.p_str", sr_cond},
    {"aten::linalg_det", sr_det},
    {"aten::linalg_eig", sr_eig},
    {"aten::linalg_eigh", sr_eigh},
    {"aten::linalg_eigvals", sr_eig},
    {"aten::linalg_eigvalsh", sr_eigh},
    {"aten::linalg_householder_product", sr_as_input0},
    {"aten::linalg_inv", sr_inv},
    {"aten::linalg_inv_ex", sr_inv},
    {"aten::linalg_ldl_factor", sr_ldl_factor},
    {"aten::linalg_ldl_factor_ex", sr_ldl_factor},
    {"aten::linalg_ldl_solve", sr_ldl_solve},
    {"aten::linalg_lu", sr_linalg_lu},
    {"aten::linalg_lu_factor", sr_lu_factor},
    {"aten::linalg_lu_factor_ex", sr_lu_factor},
    {"aten::linalg_lu_solve", sr_lu_solve},
    {"aten::linalg_matrix_exp", sr_as_square},
    {"aten::linalg_matrix_rank", sr_matrix_rank},
    {"aten::linalg_matrix_rank.atol_rtol_float", sr_matrix_rank},
    {"aten::linalg_matrix_rank.atol_rtol_tensor", sr_matrix_rank},
    {"aten::linalg_matrix_rank.tol_tensor", sr_matrix_rank},
    {"aten::linalg_pinv", sr_pinv},
    {"aten::linalg_pinv.atol_rtol_float", sr_pinv},
    {"aten::linalg_pinv.atol_rtol_tensor", sr_pinv},
    {"aten::linalg_pinv.rcond_tensor", sr_pinv},
    {"aten::linalg_slogdet", sr_slogdet},
    {"aten::linalg_solve", sr_solve},
    {"aten::linalg_solve_ex", sr_solve},
    {"aten::linalg_solve_triangular", sr_tri_solve},
    {"aten::linalg_svd", sr_svd},
    {"aten::linalg_svdvals", sr_svd},
    {"aten::logdet", sr_det},
    {"aten::lu_solve", sr_lu_solve},
    {"aten::lu_unpack", sr_lu_unpack},
    {"aten::matrix_exp", sr_as_square},
    {"aten::orgqr", sr_as_input0},
    {"aten::ormqr", sr_ormqr},
    {"aten::pinverse", sr_pinv},
    {"aten::qr", sr_qr},
    {"aten::slogdet", sr_slogdet},
    {"aten::svd", sr_svd},
    {"aten::symeig", sr_eigh},
    {"aten::triangular_solve", sr_tri_solve},
    {NULL, NULL},
};
