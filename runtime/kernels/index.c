/* runtime/kernels/index.c: the ops that write through indices, as PyTorch
 * 1.13 runs them on the CPU: index_put_ (advanced-index assignment, what
 * `x[idx] = v` compiles to), scatter_ (src, value, the deprecated add and
 * multiply reductions), scatter_add_, scatter_reduce_ (sum, prod, mean,
 * amax, amin, include_self), index_add_, index_copy_, index_fill_,
 * masked_scatter_, and the gathers take and take_along_dim.
 *
 * In-place forms are the kernels; an out-of-place form is a clone of self
 * (contiguous) with the in-place kernel applied to it, as ATen's are. Where
 * several writes land on one element, they happen in the order of the
 * element walk (row-major over the indexing result), as ATen's serial CPU
 * loops do. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "tensor_ops.h"

#define IX_SHAPE_CAP (TS_RT_MAX_DIMS * 24 + 4)

/* ------------------------------------------------------------- helpers */

/* "[2, 3]" as PyTorch prints an IntArrayRef. */
static const char *ix_fmt_shape(char *buf, size_t cap, int32_t n, const int64_t *s) {
  size_t len = 0;
  buf[len++] = '[';
  for (int32_t i = 0; i < n && len + 24 < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s[i]);
  buf[len++] = ']';
  buf[len] = 0;
  return buf;
}

/* a * b for non-negative sizes; false on overflow. */
static bool ix_mul(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a)) return false;
  *out = a * b;
  return true;
}

/* Advances a row-major counter over `sizes` and the element offsets of nt
 * strided operands. */
static inline void ix_step(int32_t nd, const int64_t *sizes, int64_t *idx, int nt, const int64_t *const *strides,
                           int64_t *offs) {
  for (int32_t d = nd - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) {
      for (int k = 0; k < nt; k++) offs[k] += strides[k][d];
      return;
    }
    idx[d] = 0;
    for (int k = 0; k < nt; k++) offs[k] -= strides[k][d] * (sizes[d] - 1);
  }
}

/* How two values combine where an op writes: assignment, or a reduction
 * in self's dtype as ATen's loops compute it (float16/bfloat16 through
 * float, integers wrapping, bool as logical or/and). */
typedef enum ix_op { IX_SET, IX_ADD, IX_MUL, IX_MAX, IX_MIN } ix_op;

static inline double ix_pick(ix_op op, double a, double b) {
  if (op == IX_ADD) return a + b;
  if (op == IX_MUL) return a * b;
  /* amax/amin propagate NaN from either side */
  if (a != a || b != b) return a != a ? a : b;
  return op == IX_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

static inline int64_t ix_pick_i(ix_op op, int64_t a, int64_t b) {
  if (op == IX_ADD) return (int64_t)((uint64_t)a + (uint64_t)b);
  if (op == IX_MUL) return (int64_t)((uint64_t)a * (uint64_t)b);
  return op == IX_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

/* *dst = *dst OP *src, both of dtype dt. */
static void ix_apply(ix_op op, char *dst, const char *src, ts_dtype dt) {
  size_t esz = ts_dtype_size(dt);
  if (op == IX_SET) {
    memcpy(dst, src, esz);
    return;
  }
  switch (dt) {
  case TS_DT_FLOAT32: {
    float a, b;
    memcpy(&a, dst, 4);
    memcpy(&b, src, 4);
    float r = op == IX_ADD ? a + b : op == IX_MUL ? a * b : (float)ix_pick(op, a, b);
    memcpy(dst, &r, 4);
    return;
  }
  case TS_DT_FLOAT64: {
    double a, b;
    memcpy(&a, dst, 8);
    memcpy(&b, src, 8);
    double r = ix_pick(op, a, b);
    memcpy(dst, &r, 8);
    return;
  }
  case TS_DT_FLOAT16:
  case TS_DT_BFLOAT16: {
    float a = (float)ts_rt_load_f64(dst, dt), b = (float)ts_rt_load_f64(src, dt);
    float r = op == IX_ADD ? a + b : op == IX_MUL ? a * b : (float)ix_pick(op, a, b);
    ts_rt_store_f64(dst, dt, r);
    return;
  }
  case TS_DT_BOOL: {
    bool a = *dst != 0, b = *src != 0;
    bool r = op == IX_ADD || op == IX_MAX ? (a || b) : (a && b);
    *dst = (char)r;
    return;
  }
  default: {
    int64_t r = ix_pick_i(op, ts_rt_load_i64(dst, dt), ts_rt_load_i64(src, dt));
    ts_rt_store_i64(dst, dt, r); /* narrower integers wrap as C's conversion does */
    return;
  }
  }
}

/* Whether t's elements cover its memory range exactly once (ATen's
 * is_non_overlapping_and_dense), so that a range test decides overlap. */
static bool ix_dense(const ts_rt_tensor *t) {
  int32_t order[TS_RT_MAX_DIMS], n = 0;
  for (int32_t d = 0; d < t->ndim; d++)
    if (t->sizes[d] != 1) order[n++] = d;
  for (int32_t i = 1; i < n; i++)
    for (int32_t j = i; j > 0 && t->strides[order[j]] < t->strides[order[j - 1]]; j--) {
      int32_t x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  int64_t expect = 1;
  for (int32_t i = 0; i < n; i++) {
    if (t->strides[order[i]] != expect) return false;
    expect *= t->sizes[order[i]];
  }
  return true;
}

/* ATen's assert_no_overlap: an op that writes `a` while reading `b` fails
 * when both are dense and share memory. */
static bool ix_no_overlap(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->storage != b->storage || ts_rt_tensor_numel(a) == 0 || ts_rt_tensor_numel(b) == 0) return true;
  if (!ix_dense(a) || !ix_dense(b)) return true;
  size_t esz = ts_dtype_size((ts_dtype)a->dtype), bsz = ts_dtype_size((ts_dtype)b->dtype);
  const char *a0 = ts_rt_tensor_data(a), *b0 = ts_rt_tensor_data(b);
  const char *a1 = a0 + (size_t)ts_rt_tensor_numel(a) * esz, *b1 = b0 + (size_t)ts_rt_tensor_numel(b) * bsz;
  if (a0 < b1 && b0 < a1)
    return ts_rt_fail(c, "unsupported operation: some elements of the input tensor and the written-to tensor refer "
                         "to a single memory location. Please clone() the tensor before performing the operation.");
  return true;
}

static bool ix_put(ts_rt_call *call, ts_rt_tensor *t) {
  if (!t) return false;
  call->out[0] = ts_iv_tensor(t);
  return true;
}

/* Returns self (retained) as an in-place op's result. */
static bool ix_put_self(ts_rt_call *call, ts_rt_tensor *self) {
  ts_rt_tensor_retain(self);
  call->out[0] = ts_iv_tensor(self);
  return true;
}

/* --------------------------------------------------------- index_put_ */

/* The indices of advanced indexing (Tensor?[] or Tensor[]) at argument i:
 * NULL for None, n of them. */
static bool ix_arg_indices(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_rt_tensor **idx, uint32_t *n) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, i, &l)) return false;
  if (l->n > TS_RT_MAX_DIMS)
    return ts_rt_fail(c, "too many indices for tensor of dimension %d (got %u)",
                      call->in[0].tag == TS_IV_TENSOR ? (int)call->in[0].u.t->ndim : 0, (unsigned)l->n);
  for (uint32_t k = 0; k < l->n; k++) {
    if (l->items[k].tag == TS_IV_NONE) idx[k] = NULL;
    else if (l->items[k].tag == TS_IV_TENSOR) idx[k] = l->items[k].u.t;
    else return ts_rt_fail(c, "argument %u: expected List[Optional[Tensor]]", (unsigned)i);
  }
  *n = l->n;
  return true;
}

/* ATen's canDispatchToMaskedFill: a one-element value, no accumulation, and
 * the indices one bool/uint8 mask among Nones. Then index_put_ is
 * masked_fill_ with value.item() (any value dtype), the mask lined up with
 * self's dims and broadcast over the rest. *done false: not this case. */
static bool ix_put_masked(ts_rt_ctx *c, ts_rt_tensor *self, ts_rt_tensor *const *idx, uint32_t n,
                          const ts_rt_tensor *value, bool *done) {
  *done = false;
  if (ts_rt_tensor_numel(value) != 1) return true;
  const ts_rt_tensor *mask = NULL;
  int32_t num_ind = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (!idx[k]) {
      num_ind++;
      continue;
    }
    if ((idx[k]->dtype != TS_DT_BOOL && idx[k]->dtype != TS_DT_UINT8) || mask) return true;
    mask = idx[k];
    for (int32_t j = 0; j < mask->ndim; j++) {
      int32_t src = num_ind + j;
      if (src >= self->ndim) return true; /* the general path says "too many indices" */
      if (mask->sizes[j] != self->sizes[src]) {
        char b1[IX_SHAPE_CAP], b2[IX_SHAPE_CAP];
        return ts_rt_fail(c, "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s "
                          "at index %d", ix_fmt_shape(b1, sizeof b1, mask->ndim, mask->sizes), (int)j,
                          ix_fmt_shape(b2, sizeof b2, self->ndim, self->sizes), (int)src);
      }
    }
    num_ind += mask->ndim;
  }
  if (!mask) return true; /* the general path refuses it */
  /* the mask's trailing dims: size 1 for every self dim after it */
  int64_t msizes[TS_RT_MAX_DIMS], mstrides[TS_RT_MAX_DIMS];
  int32_t mn = mask->ndim;
  memcpy(msizes, mask->sizes, sizeof(int64_t) * (size_t)mn);
  memcpy(mstrides, mask->strides, sizeof(int64_t) * (size_t)mn);
  for (int32_t d = num_ind; d < self->ndim && mn < TS_RT_MAX_DIMS; d++) {
    msizes[mn] = 1;
    mstrides[mn++] = 1;
  }
  ts_rt_tensor *m = ts_rt_tensor_view(c, mask, mask->offset, mn, msizes, mstrides);
  ts_rt_tensor *v = m ? ts_rt_tensor_view(c, value, value->offset, 0, NULL, NULL) : NULL;
  ts_rt_kernel_fn fill = ts_rt_kernel_by_name("aten::masked_fill_.Tensor");
  bool ok = false;
  if (v && !fill) {
    ts_rt_fail(c, "index_put_: no masked_fill_ kernel");
  } else if (v) {
    ts_iv in[3] = {ts_iv_tensor(self), ts_iv_tensor(m), ts_iv_tensor(v)}, out[1];
    ts_rt_call fc = {in, 3, out, 1, NULL};
    ok = fill(c, &fc);
    if (ok) ts_iv_release(out[0]);
  }
  if (m) ts_rt_tensor_release(m);
  if (v) ts_rt_tensor_release(v);
  *done = true;
  return ok;
}

/* The indexed positions of advanced indexing over `a`: the index tensors
 * (masks expanded to their nonzero coordinates) broadcast to one shape B,
 * and for each position of B the element offset of the indexed dims
 * (table); the result's dims are B's where the indexed dims are (first
 * when they are not adjacent) and a's other dims. */
typedef struct ix_adv {
  int32_t rn;                          /* result rank */
  int64_t rshape[TS_RT_MAX_DIMS];      /* result sizes */
  int64_t astride[TS_RT_MAX_DIMS];     /* per result dim: a's element stride (0 in B) */
  int64_t bstride[TS_RT_MAX_DIMS];     /* per result dim: stride in table (0 outside B) */
  int64_t *table;                      /* ts_rt_malloc'd, one offset per position of B */
} ix_adv;

/* Fills *p for a (which may gain dims of size 1 for 0-d bool indices: *ap
 * is the tensor to index, a new reference). False with PyTorch's errors:
 * index dtypes, mask shapes, too many indices, broadcasting, bounds. */
static bool ix_adv_make(ts_rt_ctx *c, const ts_rt_tensor *self, ts_rt_tensor *const *idx, uint32_t n, ix_adv *p,
                        ts_rt_tensor **ap) {
  p->table = NULL;
  ts_rt_tensor *a = (ts_rt_tensor *)self;
  ts_rt_tensor_retain(a);
  ts_rt_tensor *dimidx[TS_RT_MAX_DIMS] = {NULL};
  ts_rt_tensor *owned[TS_RT_MAX_DIMS * 2];
  uint32_t nowned = 0;
  bool ok = false;
  int32_t pos = 0, got = 0;
  char b1[IX_SHAPE_CAP], b2[IX_SHAPE_CAP];
  for (uint32_t i = 0; i < n; i++) {
    ts_rt_tensor *t = idx[i];
    if (!t) {
      pos++;
      continue;
    }
    ts_dtype dt = (ts_dtype)t->dtype;
    if (dt != TS_DT_INT64 && dt != TS_DT_BOOL && dt != TS_DT_UINT8) {
      ts_rt_fail(c, "tensors used as indices must be long, byte or bool tensors");
      goto done;
    }
    if (dt == TS_DT_INT64) {
      if (pos >= TS_RT_MAX_DIMS) {
        got = pos + 1;
        goto too_many;
      }
      dimidx[pos++] = t;
      continue;
    }
    if (t->ndim == 0) {
      /* a 0-d mask adds a dim of size 1 here (index 0 taken, or none) */
      ts_rt_tensor *u = ts_rt_unsqueeze(c, a, pos > a->ndim ? a->ndim : pos);
      if (!u) goto done;
      ts_rt_tensor_release(a);
      a = u;
      int64_t cnt = ts_rt_load_f64(ts_rt_tensor_data(t), dt) != 0.0 ? 1 : 0;
      ts_rt_tensor *z = ts_rt_tensor_new(c, TS_DT_INT64, 1, &cnt, true);
      if (!z) goto done;
      owned[nowned++] = z;
      dimidx[pos++] = z;
      continue;
    }
    for (int32_t k = 0; k < t->ndim; k++) {
      if (pos + k >= a->ndim) {
        got = pos + t->ndim;
        goto too_many;
      }
      if (t->sizes[k] != a->sizes[pos + k]) {
        ts_rt_fail(c, "The shape of the mask %s at index %d does not match the shape of the indexed tensor %s at "
                   "index %d", ix_fmt_shape(b1, sizeof b1, t->ndim, t->sizes), (int)k,
                   ix_fmt_shape(b2, sizeof b2, a->ndim, a->sizes), (int)(pos + k));
        goto done;
      }
    }
    ts_iv nin[1] = {ts_iv_tensor(t)}, nout[1];
    ts_rt_call nc = {nin, 1, nout, 1, NULL};
    ts_rt_kernel_fn nonzero = ts_rt_kernel_by_name("aten::nonzero");
    if (!nonzero) {
      ts_rt_fail(c, "index: no nonzero kernel");
      goto done;
    }
    if (!nonzero(c, &nc)) goto done;
    ts_rt_tensor *nz = nout[0].u.t;
    owned[nowned++] = nz;
    for (int32_t k = 0; k < t->ndim; k++) {
      ts_rt_tensor *col = ts_rt_select(c, nz, 1, k);
      if (!col) goto done;
      owned[nowned++] = col;
      dimidx[pos++] = col;
    }
  }
  got = pos;
  if (pos > a->ndim) {
  too_many:
    ts_rt_fail(c, "too many indices for tensor of dimension %d (got %d)", (int)self->ndim, (int)got);
    goto done;
  }
  int64_t bshape[TS_RT_MAX_DIMS];
  int32_t bnd = 0, first = -1, last = -1, count = 0;
  const ts_rt_tensor *seen[TS_RT_MAX_DIMS];
  int32_t nseen[TS_RT_MAX_DIMS];
  const int64_t *shapes[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < a->ndim; d++) {
    if (!dimidx[d]) continue;
    if (first < 0) first = d;
    last = d;
    seen[count] = dimidx[d];
    nseen[count] = dimidx[d]->ndim;
    shapes[count++] = dimidx[d]->sizes;
  }
  if (count == 0) {
    ts_rt_fail(c, "index_put_: at least one index must be a tensor");
    goto done;
  }
  /* infer_size over the index shapes */
  for (int32_t k = 0; k < count; k++) {
    int32_t m = bnd > nseen[k] ? bnd : nseen[k];
    int64_t res[TS_RT_MAX_DIMS];
    bool bad = false;
    for (int32_t i = m - 1; i >= 0; i--) {
      int32_t ia = i - (m - bnd), ib = i - (m - nseen[k]);
      int64_t sa = ia >= 0 ? bshape[ia] : 1, sb = ib >= 0 ? shapes[k][ib] : 1;
      if (sa != sb && sa != 1 && sb != 1) bad = true;
      res[i] = sa == 1 ? sb : sa;
    }
    if (bad) {
      char msg[IX_SHAPE_CAP * 4];
      size_t len = (size_t)snprintf(msg, sizeof msg, "shape mismatch: indexing tensors could not be broadcast "
                                                     "together with shapes ");
      for (int32_t e = 0; e < count && len + IX_SHAPE_CAP < sizeof msg; e++)
        len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", e ? ", " : "",
                                ix_fmt_shape(b1, sizeof b1, seen[e]->ndim, seen[e]->sizes));
      ts_rt_fail(c, "%s", msg);
      goto done;
    }
    bnd = m;
    memcpy(bshape, res, sizeof(int64_t) * (size_t)m);
  }
  int64_t bnumel = 1;
  for (int32_t d = 0; d < bnd; d++)
    if (!ix_mul(bnumel, bshape[d], &bnumel)) {
      ts_rt_fail(c, "index: result too large");
      goto done;
    }
  if ((int64_t)a->ndim - count + bnd > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "index: result has more than %d dimensions", TS_RT_MAX_DIMS);
    goto done;
  }
  p->table = ts_rt_calloc((size_t)(bnumel > 0 ? bnumel : 1), sizeof(int64_t));
  if (!p->table) {
    ts_rt_oom(c);
    goto done;
  }
  int32_t j = 0;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (!dimidx[d]) continue;
    ts_rt_tensor *e = ts_rt_expand(c, dimidx[d], bnd, bshape);
    ts_rt_tensor *ct = e ? ts_rt_tensor_contiguous(c, e) : NULL;
    if (e) ts_rt_tensor_release(e);
    if (!ct) goto done;
    const int64_t *vp = ts_rt_tensor_data(ct);
    int64_t size = a->sizes[d];
    for (int64_t k = 0; k < bnumel; k++) {
      int64_t v = vp[k];
      if (v < -size || v >= size) {
        ts_rt_tensor_release(ct);
        /* ATen numbers the dim among the indexed ones */
        ts_rt_fail(c, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, (int)j,
                   (long long)size);
        goto done;
      }
      p->table[k] += (v < 0 ? v + size : v) * a->strides[d];
    }
    ts_rt_tensor_release(ct);
    j++;
  }
  bool adjacent = last - first + 1 == count;
  int64_t bcontig[TS_RT_MAX_DIMS];
  ts_rt_strides_contiguous(bnd, bshape, bcontig);
  p->rn = 0;
  for (int32_t d = 0; d <= a->ndim; d++) {
    if (adjacent ? d == first : d == 0) {
      for (int32_t k = 0; k < bnd; k++) {
        p->rshape[p->rn] = bshape[k];
        p->astride[p->rn] = 0;
        p->bstride[p->rn++] = bcontig[k];
      }
    }
    if (d < a->ndim && !dimidx[d]) {
      p->rshape[p->rn] = a->sizes[d];
      p->astride[p->rn] = a->strides[d];
      p->bstride[p->rn++] = 0;
    }
  }
  ok = true;
done:
  for (uint32_t i = 0; i < nowned; i++) ts_rt_tensor_release(owned[i]);
  if (!ok) {
    ts_rt_free(p->table);
    p->table = NULL;
    ts_rt_tensor_release(a);
    a = NULL;
  }
  *ap = a;
  return ok;
}

/* is_expandable_to(shape, desired) */
static bool ix_expandable(int32_t n, const int64_t *s, int32_t dn, const int64_t *d) {
  if (n > dn) return false;
  for (int32_t i = 0; i < n; i++) {
    int64_t a = s[n - 1 - i], b = d[dn - 1 - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

/* index_put_(self, indices, values, accumulate) */
static bool ix_index_put_(ts_rt_ctx *c, ts_rt_tensor *self, ts_rt_tensor *const *idx, uint32_t n,
                          const ts_rt_tensor *value, bool accumulate) {
  if ((int64_t)n > (int64_t)self->ndim)
    return ts_rt_fail(c, "too many indices for tensor of dimension %d (got %u)", (int)self->ndim, (unsigned)n);
  if (!accumulate) {
    bool done = false;
    if (!ix_put_masked(c, self, idx, n, value, &done)) return false;
    if (done) return true;
  }
  if (!ix_no_overlap(c, self, value)) return false;
  for (uint32_t k = 0; k < n; k++)
    if (idx[k] && !ix_no_overlap(c, self, idx[k])) return false;
  ix_adv p;
  ts_rt_tensor *a = NULL;
  if (!ix_adv_make(c, self, idx, n, &p, &a)) return false;
  bool ok = false;
  ts_rt_tensor *ev = NULL;
  char b1[IX_SHAPE_CAP], b2[IX_SHAPE_CAP];
  if (!ix_expandable(value->ndim, value->sizes, p.rn, p.rshape)) {
    ts_rt_fail(c, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
               ix_fmt_shape(b1, sizeof b1, value->ndim, value->sizes), ix_fmt_shape(b2, sizeof b2, p.rn, p.rshape));
    goto done;
  }
  if (value->dtype != a->dtype) {
    ts_rt_fail(c, "Index put requires the source and destination dtypes match, got %s for the destination and %s "
               "for the source.", ts_rt_dtype_name((ts_dtype)a->dtype), ts_rt_dtype_name((ts_dtype)value->dtype));
    goto done;
  }
  ev = ts_rt_expand(c, value, p.rn, p.rshape);
  if (!ev) goto done;
  int64_t numel = 1;
  for (int32_t d = 0; d < p.rn; d++) numel *= p.rshape[d];
  ts_dtype dt = (ts_dtype)a->dtype;
  size_t esz = ts_dtype_size(dt);
  char *abase = (char *)a->storage->data;
  const char *vbase = (const char *)ev->storage->data;
  int64_t pos[TS_RT_MAX_DIMS] = {0}, offs[3] = {a->offset, 0, ev->offset};
  const int64_t *strides[3] = {p.astride, p.bstride, ev->strides};
  ix_op op = accumulate ? IX_ADD : IX_SET;
  for (int64_t k = 0; k < numel; k++) {
    ix_apply(op, abase + (size_t)(offs[0] + p.table[offs[1]]) * esz, vbase + (size_t)offs[2] * esz, dt);
    ix_step(p.rn, p.rshape, pos, 3, strides, offs);
  }
  ok = true;
done:
  if (ev) ts_rt_tensor_release(ev);
  ts_rt_free(p.table);
  ts_rt_tensor_release(a);
  return ok;
}

/* index_put_(self, indices, values, accumulate), .hacked_twin */
static bool ix_k_index_put_(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *self = NULL, *value = NULL, *idx[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool acc = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &self) || !ix_arg_indices(ctx, call, 1, idx, &n) ||
      !ts_rt_arg_tensor(ctx, call, 2, &value) || !ts_rt_arg_bool(ctx, call, 3, &acc))
    return false;
  if (!ix_index_put_(ctx, self, idx, n, value, acc)) return false;
  return ix_put_self(call, self);
}

/* index_put(self, ...): a copy of self, written. */
static bool ix_k_index_put(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *self = NULL, *value = NULL, *idx[TS_RT_MAX_DIMS];
  uint32_t n = 0;
  bool acc = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &self) || !ix_arg_indices(ctx, call, 1, idx, &n) ||
      !ts_rt_arg_tensor(ctx, call, 2, &value) || !ts_rt_arg_bool(ctx, call, 3, &acc))
    return false;
  ts_rt_tensor *r = ts_rt_clone(ctx, self);
  if (!r) return false;
  if (!ix_index_put_(ctx, r, idx, n, value, acc)) {
    ts_rt_tensor_release(r);
    return false;
  }
  return ix_put(call, r);
}

/* ------------------------------------------------- take, take_along_dim */

/* take(self, index): self's elements at the flat (row-major) positions in
 * index (int64; negative ones count from the end); index's shape. */
static bool ix_k_take(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *index = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &index)) return false;
  if (index->dtype != TS_DT_INT64)
    return ts_rt_fail(ctx, "take(): Expected a long tensor for index, but got %s",
                      ts_rt_dtype_name((ts_dtype)index->dtype));
  int64_t numel = ts_rt_tensor_numel(a), n = ts_rt_tensor_numel(index);
  if (numel == 0 && n != 0) return ts_rt_fail(ctx, "take(): tried to take from an empty tensor");
  ts_rt_tensor *r = ts_rt_tensor_new(ctx, (ts_dtype)a->dtype, index->ndim, index->sizes, false);
  if (!r) return false;
  size_t esz = ts_dtype_size((ts_dtype)a->dtype);
  char *o = ts_rt_tensor_data(r);
  const int64_t *ip = index->storage->data;
  const char *ap = a->storage->data;
  int64_t pos[TS_RT_MAX_DIMS] = {0}, off[1] = {index->offset};
  const int64_t *st[1] = {index->strides};
  for (int64_t k = 0; k < n; k++) {
    int64_t v = ip[off[0]];
    if (v < -numel || v >= numel) {
      ts_rt_tensor_release(r);
      return ts_rt_fail(ctx, "out of range: tried to access index %lld on a tensor of %lld elements.", (long long)v,
                        (long long)numel);
    }
    if (v < 0) v += numel;
    /* the element at flat position v of a (any strides) */
    int64_t e = a->offset;
    for (int32_t d = a->ndim - 1; d >= 0; d--) {
      e += (v % a->sizes[d]) * a->strides[d];
      v /= a->sizes[d];
    }
    memcpy(o + (size_t)k * esz, ap + (size_t)e * esz, esz);
    ix_step(index->ndim, index->sizes, pos, 1, st, off);
  }
  return ix_put(call, r);
}

/* broadcast_to(t, shape) where the shape is infer_size(a, b) */
static ts_rt_tensor *ix_broadcast_pair(ts_rt_ctx *c, const ts_rt_tensor *t, int32_t na, const int64_t *a, int32_t nb,
                                       const int64_t *b) {
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  if (!ts_rt_broadcast_shapes(c, na, a, nb, b, &nd, shape)) return NULL;
  return ts_rt_expand(c, t, nd, shape);
}

/* take_along_dim(self, indices, dim): gather along dim of self and indices
 * broadcast against each other outside dim; with dim None, gather over
 * both flattened (views: non-contiguous tensors fail as view(-1) does). */
static bool ix_k_take_along_dim(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *a = NULL, *index = NULL;
  int64_t dim = 0;
  bool has_dim = false;
  if (!ts_rt_arg_tensor(ctx, call, 0, &a) || !ts_rt_arg_tensor(ctx, call, 1, &index) ||
      !ts_rt_arg_opt_int(ctx, call, 2, &dim, &has_dim))
    return false;
  ts_rt_tensor *sa = NULL, *si = NULL;
  if (!has_dim) {
    int64_t m1 = -1;
    sa = ts_rt_view(ctx, a, 1, &m1);
    si = sa ? ts_rt_view(ctx, index, 1, &m1) : NULL;
    dim = 0;
  } else {
    if (a->ndim != index->ndim)
      return ts_rt_fail(ctx, "torch.take_along_dim(): input and indices should have the same number of dimensions, "
                        "but got %d dimensions for input, and %d dimensions for indices", (int)a->ndim,
                        (int)index->ndim);
    if (index->dtype != TS_DT_INT64)
      return ts_rt_fail(ctx, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                        ts_rt_dtype_name((ts_dtype)index->dtype));
    if (!ts_rt_wrap_dim(ctx, dim, a->ndim, &dim)) return false;
    int64_t sizes[TS_RT_MAX_DIMS];
    if (a->ndim > 0) {
      memcpy(sizes, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
      sizes[dim] = index->sizes[dim];
      si = ix_broadcast_pair(ctx, index, a->ndim, sizes, index->ndim, index->sizes);
      memcpy(sizes, index->sizes, sizeof(int64_t) * (size_t)index->ndim);
      sizes[dim] = a->sizes[dim];
      sa = si ? ix_broadcast_pair(ctx, a, index->ndim, sizes, a->ndim, a->sizes) : NULL;
    } else {
      sa = a;
      si = index;
      ts_rt_tensor_retain(sa);
      ts_rt_tensor_retain(si);
    }
  }
  bool ok = false;
  if (sa && si) {
    ts_iv in[4] = {ts_iv_tensor(sa), ts_iv_int(dim), ts_iv_tensor(si), ts_iv_bool(false)};
    ts_rt_kernel_fn gather = ts_rt_kernel_by_name("aten::gather");
    ts_rt_call sub = {in, 4, call->out, 1, NULL};
    ok = gather ? gather(ctx, &sub) : ts_rt_fail(ctx, "take_along_dim: no gather kernel");
  }
  if (sa) ts_rt_tensor_release(sa);
  if (si) ts_rt_tensor_release(si);
  return ok;
}

/* -------------------------------------------------------------- scatter */

/* One element of dtype dt holding the number v (converted as a store
 * converts: truncation toward zero into integers, nonzero into bool). */
static void ix_scalar_elem(ts_iv v, ts_dtype dt, char *buf) {
  if (v.tag == TS_IV_DOUBLE) ts_rt_store_f64(buf, dt, v.u.d);
  else ts_rt_store_i64(buf, dt, v.tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i);
}

/* A Scalar argument (int, float or bool). */
static bool ix_arg_scalar(ts_rt_ctx *c, ts_rt_call *call, uint32_t i, ts_iv *out) {
  if (!ts_rt_arg_check(c, call, i)) return false;
  ts_iv v = call->in[i];
  if (v.tag != TS_IV_INT && v.tag != TS_IV_DOUBLE && v.tag != TS_IV_BOOL) return ts_rt_arg_bad(c, call, i, "Scalar");
  *out = v;
  return true;
}

/* A reduction's name as the deprecated scatter (add, multiply) or
 * scatter_reduce (sum, prod, mean, amax, amin) names it: *mean for mean. */
static bool ix_reduce_op(ts_rt_ctx *c, const ts_rt_str *s, bool new_names, ix_op *op, bool *mean) {
  *mean = false;
  if (!new_names) {
    if (s->len == 3 && memcmp(s->data, "add", 3) == 0) *op = IX_ADD;
    else if (s->len == 8 && memcmp(s->data, "multiply", 8) == 0) *op = IX_MUL;
    else return ts_rt_fail(c, "reduce argument must be either add or multiply.");
    return true;
  }
  if (s->len == 3 && memcmp(s->data, "sum", 3) == 0) *op = IX_ADD;
  else if (s->len == 4 && memcmp(s->data, "prod", 4) == 0) *op = IX_MUL;
  else if (s->len == 4 && memcmp(s->data, "mean", 4) == 0) *op = IX_ADD, *mean = true;
  else if (s->len == 4 && memcmp(s->data, "amax", 4) == 0) *op = IX_MAX;
  else if (s->len == 4 && memcmp(s->data, "amin", 4) == 0) *op = IX_MIN;
  else return ts_rt_fail(c, "reduce argument must be either sum, prod, mean, amax or amin.");
  return true;
}

/* ATen's scatter_gather_dtype_check and scatter_shape_check (src NULL for
 * the value forms); dim already wrapped. */
static bool ix_scatter_check(ts_rt_ctx *c, const ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                             const ts_rt_tensor *src) {
  int64_t ni = ts_rt_tensor_numel(index);
  if (ni != 0 && index->dtype != TS_DT_INT64) return ts_rt_fail(c, "scatter(): Expected dtype int64 for index");
  if (src && src->dtype != self->dtype) return ts_rt_fail(c, "scatter(): Expected self.dtype to be equal to src.dtype");
  if (ni == 0) return true;
  int32_t sd = self->ndim ? self->ndim : 1, id = index->ndim ? index->ndim : 1;
  if (sd != id) return ts_rt_fail(c, "Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (int32_t d = 0; d < sd && !wrong; d++) {
    int64_t is = index->ndim ? index->sizes[d] : 1, ss = self->ndim ? self->sizes[d] : 1;
    if (d != dim && is > ss) wrong = true;
  }
  if (!wrong && src) {
    for (int32_t d = 0; d < sd && !wrong; d++) {
      int64_t is = index->ndim ? index->sizes[d] : 1, rd = d;
      /* src.size(d), which refuses a d past a src of fewer dims */
      if (src->ndim && !ts_rt_wrap_dim(c, d, src->ndim, &rd)) return false;
      int64_t rs = src->ndim ? src->sizes[rd] : 1;
      if (is > rs) wrong = true;
    }
  }
  char b1[IX_SHAPE_CAP], b2[IX_SHAPE_CAP], b3[IX_SHAPE_CAP];
  if (src) {
    if (wrong)
      return ts_rt_fail(c, "Expected index %s to be smaller than self %s apart from dimension %lld and to be smaller "
                        "size than src %s", ix_fmt_shape(b1, sizeof b1, index->ndim, index->sizes),
                        ix_fmt_shape(b2, sizeof b2, self->ndim, self->sizes), (long long)dim,
                        ix_fmt_shape(b3, sizeof b3, src->ndim, src->sizes));
    /* the kernel's own check, after the shape check */
    if ((src->ndim ? src->ndim : 1) != id)
      return ts_rt_fail(c, "Index tensor must have the same number of dimensions as src tensor");
  } else if (wrong) {
    return ts_rt_fail(c, "Expected index %s to be smaller than self %s apart from dimension %lld",
                      ix_fmt_shape(b1, sizeof b1, index->ndim, index->sizes),
                      ix_fmt_shape(b2, sizeof b2, self->ndim, self->sizes), (long long)dim);
  }
  return true;
}

/* The scatter walk: for every position p of index (row-major), self at p
 * with dim replaced by index[p] (bounds-checked) OP= src at p, or the one
 * element `value`. counts (not NULL): per element of self (row-major
 * linear index) the number of values written to it. */
static bool ix_scatter_walk(ts_rt_ctx *c, ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                            const ts_rt_tensor *src, const char *value, ix_op op, int64_t *counts) {
  int64_t n = ts_rt_tensor_numel(index);
  if (n == 0) return true;
  int32_t nd = index->ndim ? index->ndim : 1;
  int64_t isz[TS_RT_MAX_DIMS], ist[TS_RT_MAX_DIMS], sst[TS_RT_MAX_DIMS], rst[TS_RT_MAX_DIMS], lst[TS_RT_MAX_DIMS];
  int64_t ssz[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < nd; d++) {
    isz[d] = index->ndim ? index->sizes[d] : 1;
    ist[d] = index->ndim ? index->strides[d] : 0;
    ssz[d] = self->ndim ? self->sizes[d] : 1;
    sst[d] = self->ndim ? self->strides[d] : 0;
    rst[d] = src && d < src->ndim ? src->strides[d] : 0;
  }
  ts_rt_strides_contiguous(nd, ssz, lst);
  int64_t dsize = ssz[dim], dstride = sst[dim], lstride = lst[dim];
  sst[dim] = 0;
  lst[dim] = 0;
  ts_dtype dt = (ts_dtype)self->dtype;
  size_t esz = ts_dtype_size(dt);
  char *sp = (char *)self->storage->data;
  const char *rp = src ? (const char *)src->storage->data : NULL;
  const int64_t *ip = index->storage->data;
  int64_t pos[TS_RT_MAX_DIMS] = {0}, offs[4] = {index->offset, self->offset, src ? src->offset : 0, 0};
  const int64_t *strides[4] = {ist, sst, rst, lst};
  for (int64_t k = 0; k < n; k++) {
    int64_t v = ip[offs[0]];
    if (v < 0 || v >= dsize)
      return ts_rt_fail(c, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                        (long long)dim, (long long)dsize);
    ix_apply(op, sp + (size_t)(offs[1] + v * dstride) * esz, src ? rp + (size_t)offs[2] * esz : value, dt);
    if (counts) counts[offs[3] + v * lstride]++;
    ix_step(nd, isz, pos, 4, strides, offs);
  }
  return true;
}

/* The largest and smallest values of dt (infinities for floats): scatter_
 * reduce's identities for amax and amin when self is left out. */
static void ix_extreme(ts_dtype dt, bool lowest, char *buf) {
  switch (dt) {
  case TS_DT_UINT8: ts_rt_store_i64(buf, dt, lowest ? 0 : 255); return;
  case TS_DT_INT8: ts_rt_store_i64(buf, dt, lowest ? -128 : 127); return;
  case TS_DT_INT16: ts_rt_store_i64(buf, dt, lowest ? -32768 : 32767); return;
  case TS_DT_INT32: ts_rt_store_i64(buf, dt, lowest ? INT32_MIN : INT32_MAX); return;
  case TS_DT_INT64: ts_rt_store_i64(buf, dt, lowest ? INT64_MIN : INT64_MAX); return;
  case TS_DT_BOOL: ts_rt_store_i64(buf, dt, lowest ? 0 : 1); return;
  default: ts_rt_store_f64(buf, dt, lowest ? -INFINITY : INFINITY); return;
  }
}

/* scatter_ / scatter_add_ / scatter_reduce_ on self (in place). src NULL:
 * the value form (value a number). mean: scatter_reduce's mean (a sum,
 * then divided by the count of values, self included when include_self;
 * integers by floor division). */
static bool ix_scatter_(ts_rt_ctx *c, ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                        const ts_rt_tensor *src, ts_iv value, ix_op op, bool mean, bool include_self) {
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &dim)) return false;
  if (!ix_scatter_check(c, self, dim, index, src)) return false;
  ts_dtype dt = (ts_dtype)self->dtype;
  if (mean && dt == TS_DT_BOOL)
    return ts_rt_fail(c, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
  char one[8];
  if (!src) ix_scalar_elem(value, dt, one);
  if (!include_self) {
    char init[8];
    if (op == IX_MAX || op == IX_MIN) ix_extreme(dt, op == IX_MAX, init);
    else ts_rt_store_i64(init, dt, op == IX_MUL ? 1 : 0);
    if (!ix_scatter_walk(c, self, dim, index, NULL, init, IX_SET, NULL)) return false;
  }
  int64_t numel = ts_rt_tensor_numel(self);
  int64_t *counts = NULL;
  if (mean) {
    counts = ts_rt_calloc((size_t)(numel > 0 ? numel : 1), sizeof(int64_t));
    if (!counts) return ts_rt_oom(c);
  }
  bool ok = ix_scatter_walk(c, self, dim, index, src, src ? NULL : one, op, counts);
  if (ok && mean && numel > 0) {
    /* self / count where something was scattered (elsewhere count is 1) */
    size_t esz = ts_dtype_size(dt);
    char *sp = (char *)self->storage->data;
    bool is_float = ts_rt_dtype_is_float(dt);
    int64_t pos[TS_RT_MAX_DIMS] = {0}, off[1] = {self->offset};
    const int64_t *st[1] = {self->strides};
    for (int64_t k = 0; k < numel; k++) {
      int64_t cnt = counts[k] + (include_self ? 1 : 0);
      if (counts[k] > 0 && cnt > 1) {
        char *e = sp + (size_t)off[0] * esz;
        if (dt == TS_DT_FLOAT32) {
          float x;
          memcpy(&x, e, 4);
          x = x / (float)cnt;
          memcpy(e, &x, 4);
        } else if (is_float) {
          /* double divides in double; the half types through float */
          double x = ts_rt_load_f64(e, dt);
          ts_rt_store_f64(e, dt, dt == TS_DT_FLOAT64 ? x / (double)cnt : (double)((float)x / (float)cnt));
        } else {
          int64_t x = ts_rt_load_i64(e, dt), q = x / cnt;
          if ((x % cnt != 0) && ((x < 0) != (cnt < 0))) q--;
          ts_rt_store_i64(e, dt, q);
        }
      }
      ix_step(self->ndim, self->sizes, pos, 1, st, off);
    }
  }
  ts_rt_free(counts);
  return ok;
}

/* The kernels' arguments: (self, dim, index, src | value[, reduce]). */
typedef struct ix_scatter_args {
  ts_rt_tensor *self, *index, *src;
  int64_t dim;
  ts_iv value;
  ix_op op;
  bool mean, include_self;
} ix_scatter_args;

/* form: 's' src, 'v' value; reduce_at: the argument holding the reduce
 * name (0: none); new_names: scatter_reduce's names. */
static bool ix_scatter_args_get(ts_rt_ctx *c, ts_rt_call *call, char form, uint32_t reduce_at, bool new_names,
                                ix_scatter_args *a) {
  a->src = NULL;
  a->value = ts_iv_none();
  a->op = IX_SET;
  a->mean = false;
  a->include_self = true;
  if (!ts_rt_arg_tensor(c, call, 0, &a->self) || !ts_rt_arg_int(c, call, 1, &a->dim) ||
      !ts_rt_arg_tensor(c, call, 2, &a->index))
    return false;
  if (form == 's' ? !ts_rt_arg_tensor(c, call, 3, &a->src) : !ix_arg_scalar(c, call, 3, &a->value)) return false;
  if (reduce_at) {
    const ts_rt_str *r = NULL;
    if (!ts_rt_arg_str(c, call, reduce_at, &r) || !ix_reduce_op(c, r, new_names, &a->op, &a->mean)) return false;
  }
  if (new_names && !ts_rt_arg_bool(c, call, reduce_at + 1, &a->include_self)) return false;
  return true;
}

/* In place (self returned) or on a copy of self. */
static bool ix_scatter_run(ts_rt_ctx *c, ts_rt_call *call, const ix_scatter_args *a, bool inplace) {
  ts_rt_tensor *t = a->self;
  if (!inplace && !(t = ts_rt_clone(c, a->self))) return false;
  if (!ix_scatter_(c, t, a->dim, a->index, a->src, a->value, a->op, a->mean, a->include_self)) {
    if (!inplace) ts_rt_tensor_release(t);
    return false;
  }
  return inplace ? ix_put_self(call, t) : ix_put(call, t);
}

#define IX_SCATTER_KERNEL(fn, form, reduce_at, new_names, op0, inplace)                                             \
  static bool fn(ts_rt_ctx *ctx, ts_rt_call *call) {                                                                \
    ix_scatter_args a;                                                                                              \
    if (!ix_scatter_args_get(ctx, call, form, reduce_at, new_names, &a)) return false;                              \
    if (!(reduce_at)) a.op = op0;                                                                                   \
    return ix_scatter_run(ctx, call, &a, inplace);                                                                  \
  }

IX_SCATTER_KERNEL(ix_k_scatter__src, 's', 0, false, IX_SET, true)
IX_SCATTER_KERNEL(ix_k_scatter__value, 'v', 0, false, IX_SET, true)
IX_SCATTER_KERNEL(ix_k_scatter__reduce, 's', 4, false, IX_SET, true)
IX_SCATTER_KERNEL(ix_k_scatter__value_reduce, 'v', 4, false, IX_SET, true)
IX_SCATTER_KERNEL(ix_k_scatter_src, 's', 0, false, IX_SET, false)
IX_SCATTER_KERNEL(ix_k_scatter_value, 'v', 0, false, IX_SET, false)
IX_SCATTER_KERNEL(ix_k_scatter_reduce_old, 's', 4, false, IX_SET, false)
IX_SCATTER_KERNEL(ix_k_scatter_value_reduce, 'v', 4, false, IX_SET, false)
IX_SCATTER_KERNEL(ix_k_scatter_add_, 's', 0, false, IX_ADD, true)
IX_SCATTER_KERNEL(ix_k_scatter_add, 's', 0, false, IX_ADD, false)
IX_SCATTER_KERNEL(ix_k_scatter_reduce_, 's', 4, true, IX_SET, true)
IX_SCATTER_KERNEL(ix_k_scatter_reduce, 's', 4, true, IX_SET, false)

/* ------------------------------------------- index_add, index_copy, index_fill */

/* Index element k of a 0-d or 1-d int64/int32 tensor. */
static int64_t ix_index_at(const ts_rt_tensor *index, int64_t k) {
  const char *p = (const char *)index->storage->data;
  int64_t off = index->offset + (index->ndim ? k * index->strides[0] : 0);
  return index->dtype == TS_DT_INT32 ? ((const int32_t *)p)[off] : ((const int64_t *)p)[off];
}

/* Calls the kernel of schema `name` on in[0..nin); drops its result. */
static bool ix_call_drop(ts_rt_ctx *c, const char *name, ts_iv *in, uint32_t nin) {
  ts_rt_kernel_fn fn = ts_rt_kernel_by_name(name);
  if (!fn) return ts_rt_fail(c, "no kernel for %s", name);
  ts_iv out[1];
  ts_rt_call sub = {in, nin, out, 1, NULL};
  if (!fn(c, &sub)) return false;
  ts_iv_release(out[0]);
  return true;
}

/* index_add_(self, dim, index, source, alpha): as ATen's CPU loop: for a
 * self of 2 or more dims, self.select(dim, index[i]).add_(source.select(
 * dim, i), alpha) (add_'s broadcasting and errors); else element by
 * element, self[index[i]] += source[i] * alpha in self's dtype. */
static bool ix_index_add_(ts_rt_ctx *c, ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                          const ts_rt_tensor *src, ts_iv alpha) {
  char b1[IX_SHAPE_CAP];
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &dim)) return false;
  if (index->ndim > 1)
    return ts_rt_fail(c, "index_add_(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s",
                      (int)index->ndim, ts_rt_dtype_name((ts_dtype)index->dtype),
                      ix_fmt_shape(b1, sizeof b1, index->ndim, index->sizes));
  if (index->dtype != TS_DT_INT64 && index->dtype != TS_DT_INT32)
    return ts_rt_fail(c, "index_add_(): Expected dtype int32/int64 for index but got: %s",
                      ts_rt_dtype_name((ts_dtype)index->dtype));
  if (self->dtype != src->dtype)
    return ts_rt_fail(c, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                      ts_rt_dtype_name((ts_dtype)self->dtype), ts_rt_dtype_name((ts_dtype)src->dtype));
  if (!(dim == 0 || dim < src->ndim))
    return ts_rt_fail(c, "index_add_(): Indexing dim %lld is out of bounds of the source tensor with dim %d",
                      (long long)dim, (int)src->ndim);
  int64_t n = ts_rt_tensor_numel(index), ssize = src->ndim == 0 ? 1 : src->sizes[dim];
  if (n != ssize)
    return ts_rt_fail(c, "index_add_(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for "
                      "dim: %lld", (long long)n, (long long)ssize, (long long)dim);
  int64_t dsize = self->ndim ? self->sizes[dim] : 1;
  if (self->ndim > 1) {
    for (int64_t i = 0; i < n; i++) {
      int64_t v = ix_index_at(index, i);
      if (v < 0 || v >= dsize) return ts_rt_fail(c, "index out of range in self");
      ts_rt_tensor *ds = ts_rt_select(c, self, dim, v), *ss = ds ? ts_rt_select(c, src, dim, i) : NULL;
      bool ok = false;
      if (ss) {
        ts_iv in[3] = {ts_iv_tensor(ds), ts_iv_tensor(ss), alpha};
        ok = ix_call_drop(c, "aten::add_.Tensor", in, 3);
      }
      if (ds) ts_rt_tensor_release(ds);
      if (ss) ts_rt_tensor_release(ss);
      if (!ok) return false;
    }
    return true;
  }
  if (src->ndim > 1)
    return ts_rt_fail(c, "source.dim() (%d) must one or zero for given self.dim() (%d)", (int)src->ndim,
                      (int)self->ndim);
  ts_dtype dt = (ts_dtype)self->dtype;
  size_t esz = ts_dtype_size(dt);
  char a[8], tmp[8];
  ix_scalar_elem(alpha, dt, a);
  char *sp = (char *)self->storage->data;
  const char *rp = (const char *)src->storage->data;
  int64_t sstr = self->ndim ? self->strides[0] : 0, rstr = src->ndim ? src->strides[0] : 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ix_index_at(index, i);
    if (v < 0 || v >= dsize) return ts_rt_fail(c, "index out of range in self");
    memcpy(tmp, rp + (size_t)(src->offset + i * rstr) * esz, esz);
    ix_apply(IX_MUL, tmp, a, dt);
    ix_apply(IX_ADD, sp + (size_t)(self->offset + v * sstr) * esz, tmp, dt);
  }
  return true;
}

/* "3 5": a vector as ATen's index_copy_ message prints it. */
static const char *ix_fmt_sliced(char *buf, size_t cap, const ts_rt_tensor *t, int64_t dim) {
  size_t len = 0;
  buf[0] = 0;
  for (int32_t d = 0; d < t->ndim && len + 24 < cap; d++)
    if (d != dim) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", len ? " " : "", (long long)t->sizes[d]);
  return buf;
}

/* index_copy_(self, dim, index, source): self.select(dim, index[i]) =
 * source.select(dim, i), ATen's checks and messages. */
static bool ix_index_copy_(ts_rt_ctx *c, ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                           const ts_rt_tensor *src) {
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &dim)) return false;
  if (index->ndim >= 2)
    return ts_rt_fail(c, "index_copy_(): Index should have dimension 1 or 0 (got %d)", (int)index->ndim);
  int64_t n = ts_rt_tensor_numel(index);
  if (src->ndim == 0 && n != 1)
    return ts_rt_fail(c, "index_copy_(): When source is scalar, index should have one element (got %lld)",
                      (long long)n);
  if (src->ndim != self->ndim && src->ndim != 0 && self->ndim != 0)
    return ts_rt_fail(c, "index_copy_(): When source and destination are not scalars, their dimensionality must "
                      "match. Source dimensionality (%d), destination dimensionality (%d)", (int)src->ndim,
                      (int)self->ndim);
  if (index->dtype != TS_DT_INT64)
    return ts_rt_fail(c, "index_copy_(): Expected a long tensor for index, but got %s",
                      ts_rt_dtype_name((ts_dtype)index->dtype));
  if (self->dtype != src->dtype)
    return ts_rt_fail(c, "index_copy_(): self and source expected to have the same dtype, but got (self) %s and "
                      "(source) %s", ts_rt_dtype_name((ts_dtype)self->dtype), ts_rt_dtype_name((ts_dtype)src->dtype));
  bool same = self->ndim - (self->ndim > 0) == src->ndim - (src->ndim > 0);
  for (int32_t d = 0; same && d < self->ndim; d++)
    if (d != dim && self->sizes[d] != src->sizes[d]) same = false;
  if (!same) {
    char b1[IX_SHAPE_CAP], b2[IX_SHAPE_CAP];
    return ts_rt_fail(c, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                      "shape: %s at dimension %lld and source slice shape: %s at dimension 0.",
                      ix_fmt_sliced(b1, sizeof b1, self, dim), (long long)dim, ix_fmt_sliced(b2, sizeof b2, src, dim));
  }
  if (src->ndim != 0 && n != src->sizes[dim])
    return ts_rt_fail(c, "index_copy_(): Number of indices (%lld) should be equal to source.size(dim) (%lld)",
                      (long long)n, (long long)src->sizes[dim]);
  int64_t dsize = self->ndim ? self->sizes[dim] : 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ix_index_at(index, i);
    if (v < 0 || v >= dsize)
      return ts_rt_fail(c, "index_copy_(): index %lld is out of bounds for dimension %lld with size %lld",
                        (long long)v, (long long)dim, (long long)dsize);
    ts_rt_tensor *ds = self->ndim ? ts_rt_select(c, self, dim, v) : self;
    ts_rt_tensor *ss = ds && src->ndim ? ts_rt_select(c, src, dim, i) : (ts_rt_tensor *)src;
    bool ok = ds && ss && ts_rt_tensor_copy_(c, ds, ss);
    if (ds && ds != self) ts_rt_tensor_release(ds);
    if (ss && ss != src) ts_rt_tensor_release(ss);
    if (!ok) return false;
  }
  return true;
}

/* index_fill_(self, dim, index, value): self.select(dim, index[i]) =
 * value (a number or a 0-d tensor, converted to self's dtype); negative
 * indices count from the end. */
static bool ix_index_fill_(ts_rt_ctx *c, ts_rt_tensor *self, int64_t dim, const ts_rt_tensor *index,
                           const ts_rt_tensor *value) {
  if (!ts_rt_wrap_dim(c, dim, self->ndim, &dim)) return false;
  if (index->dtype != TS_DT_INT64) return ts_rt_fail(c, "index_fill_(): Expected dtype int64 for index.");
  if (index->ndim > 1) return ts_rt_fail(c, "Index has to be a vector/scalar");
  if (value->ndim != 0)
    return ts_rt_fail(c, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                      "dimension(s).", (int)value->ndim);
  int64_t n = ts_rt_tensor_numel(index), dsize = self->ndim ? self->sizes[dim] : 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ix_index_at(index, i);
    if (v < -dsize || v >= dsize)
      return ts_rt_fail(c, "index %lld is out of bounds for dimension %lld with size %lld", (long long)v,
                        (long long)dim, (long long)dsize);
    if (v < 0) v += dsize;
    ts_rt_tensor *ds = self->ndim ? ts_rt_select(c, self, dim, v) : self;
    bool ok = ds && ts_rt_tensor_copy_(c, ds, value);
    if (ds && ds != self) ts_rt_tensor_release(ds);
    if (!ok) return false;
  }
  return true;
}

/* The (self, dim, index, source) arguments. */
static bool ix_args4(ts_rt_ctx *c, ts_rt_call *call, ts_rt_tensor **self, int64_t *dim, ts_rt_tensor **index,
                     ts_rt_tensor **src) {
  return ts_rt_arg_tensor(c, call, 0, self) && ts_rt_arg_int(c, call, 1, dim) &&
         ts_rt_arg_tensor(c, call, 2, index) && ts_rt_arg_tensor(c, call, 3, src);
}

static bool ix_index_add_call(ts_rt_ctx *ctx, ts_rt_call *call, bool inplace) {
  ts_rt_tensor *self = NULL, *index = NULL, *src = NULL;
  int64_t dim = 0;
  ts_iv alpha;
  if (!ix_args4(ctx, call, &self, &dim, &index, &src) || !ix_arg_scalar(ctx, call, 4, &alpha)) return false;
  ts_rt_tensor *t = inplace ? self : ts_rt_clone(ctx, self);
  if (!t) return false;
  if (!ix_index_add_(ctx, t, dim, index, src, alpha)) {
    if (!inplace) ts_rt_tensor_release(t);
    return false;
  }
  return inplace ? ix_put_self(call, t) : ix_put(call, t);
}
static bool ix_k_index_add_(ts_rt_ctx *ctx, ts_rt_call *call) { return ix_index_add_call(ctx, call, true); }
static bool ix_k_index_add(ts_rt_ctx *ctx, ts_rt_call *call) { return ix_index_add_call(ctx, call, false); }

static bool ix_index_copy_call(ts_rt_ctx *ctx, ts_rt_call *call, bool inplace) {
  ts_rt_tensor *self = NULL, *index = NULL, *src = NULL;
  int64_t dim = 0;
  if (!ix_args4(ctx, call, &self, &dim, &index, &src)) return false;
  ts_rt_tensor *t = inplace ? self : ts_rt_clone(ctx, self);
  if (!t) return false;
  if (!ix_index_copy_(ctx, t, dim, index, src)) {
    if (!inplace) ts_rt_tensor_release(t);
    return false;
  }
  return inplace ? ix_put_self(call, t) : ix_put(call, t);
}
static bool ix_k_index_copy_(ts_rt_ctx *ctx, ts_rt_call *call) { return ix_index_copy_call(ctx, call, true); }
static bool ix_k_index_copy(ts_rt_ctx *ctx, ts_rt_call *call) { return ix_index_copy_call(ctx, call, false); }

/* index_fill .int_Scalar / .int_Tensor, in place or on a copy */
static bool ix_index_fill_call(ts_rt_ctx *ctx, ts_rt_call *call, bool tensor_value, bool inplace) {
  ts_rt_tensor *self = NULL, *index = NULL, *value = NULL;
  int64_t dim = 0;
  if (!ts_rt_arg_tensor(ctx, call, 0, &self) || !ts_rt_arg_int(ctx, call, 1, &dim) ||
      !ts_rt_arg_tensor(ctx, call, 2, &index))
    return false;
  if (tensor_value) {
    if (!ts_rt_arg_tensor(ctx, call, 3, &value)) return false;
    ts_rt_tensor_retain(value);
  } else {
    ts_iv v;
    if (!ix_arg_scalar(ctx, call, 3, &v)) return false;
    value = v.tag == TS_IV_DOUBLE ? ts_rt_tensor_scalar(ctx, TS_DT_FLOAT64, v.u.d, 0)
            : v.tag == TS_IV_BOOL ? ts_rt_tensor_scalar(ctx, TS_DT_BOOL, v.u.b, v.u.b)
                                  : ts_rt_tensor_scalar(ctx, TS_DT_INT64, 0, v.u.i);
    if (!value) return false;
  }
  ts_rt_tensor *t = inplace ? self : ts_rt_clone(ctx, self);
  bool ok = t && ix_index_fill_(ctx, t, dim, index, value);
  ts_rt_tensor_release(value);
  if (!ok) {
    if (t && !inplace) ts_rt_tensor_release(t);
    return false;
  }
  return inplace ? ix_put_self(call, t) : ix_put(call, t);
}
static bool ix_k_index_fill__scalar(ts_rt_ctx *ctx, ts_rt_call *call) {
  return ix_index_fill_call(ctx, call, false, true);
}
static bool ix_k_index_fill__tensor(ts_rt_ctx *ctx, ts_rt_call *call) { return ix_index_fill_call(ctx, call, true, true); }
static bool ix_k_index_fill_scalar(ts_rt_ctx *ctx, ts_rt_call *call) {
  return ix_index_fill_call(ctx, call, false, false);
}
static bool ix_k_index_fill_tensor(ts_rt_ctx *ctx, ts_rt_call *call) {
  return ix_index_fill_call(ctx, call, true, false);
}

/* ------------------------------------------------------- masked_scatter */

/* masked_scatter_(self, mask, source): where mask (broadcast to self) is
 * set, self takes source's next element (source read row-major). A mask
 * of any dtype but bool is read as ATen's CPU kernel reads it, as bytes:
 * the first byte of each element, which must be 0 or 1 (a float 1.0 reads
 * as 0: its low byte). */
static bool ix_masked_scatter_(ts_rt_ctx *c, ts_rt_tensor *self, const ts_rt_tensor *mask,
                               const ts_rt_tensor *src) {
  if (self->dtype != src->dtype)
    return ts_rt_fail(c, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                      ts_rt_dtype_name((ts_dtype)self->dtype), ts_rt_dtype_name((ts_dtype)src->dtype));
  ts_rt_tensor *m = ts_rt_expand(c, mask, self->ndim, self->sizes);
  if (!m) return false;
  ts_rt_tensor *sc = ts_rt_tensor_contiguous(c, (ts_rt_tensor *)src);
  if (!sc) {
    ts_rt_tensor_release(m);
    return false;
  }
  int64_t n = ts_rt_tensor_numel(self), avail = ts_rt_tensor_numel(sc), used = 0;
  size_t esz = ts_dtype_size((ts_dtype)self->dtype);
  char *sp = (char *)self->storage->data;
  const uint8_t *mp = m->storage->data;
  size_t msz = ts_dtype_size((ts_dtype)mask->dtype);
  const char *rp = ts_rt_tensor_data(sc);
  /* ATen's TensorIterator walks self in memory order (dims sorted by
   * self's strides, largest outermost), so source fills a transposed self
   * in its storage's order */
  int32_t nd = self->ndim;
  int64_t psz[TS_RT_MAX_DIMS], pst[TS_RT_MAX_DIMS], pmt[TS_RT_MAX_DIMS];
  for (int32_t d = 0; d < nd; d++) {
    int32_t j = d;
    while (j > 0 && pst[j - 1] < self->strides[d]) {
      psz[j] = psz[j - 1], pst[j] = pst[j - 1], pmt[j] = pmt[j - 1];
      j--;
    }
    psz[j] = self->sizes[d], pst[j] = self->strides[d], pmt[j] = m->strides[d];
  }
  int64_t pos[TS_RT_MAX_DIMS] = {0}, offs[2] = {self->offset, m->offset};
  const int64_t *st[2] = {pst, pmt};
  bool ok = true;
  for (int64_t k = 0; k < n && ok; k++) {
    uint8_t mv = mp[(size_t)offs[1] * msz];
    if (mask->dtype != TS_DT_BOOL && mv > 1) {
      ok = ts_rt_fail(c, "Mask tensor can take 0 and 1 values only");
    } else if (mv) {
      if (used >= avail) ok = ts_rt_fail(c, "Number of elements of source < number of ones in mask");
      else memcpy(sp + (size_t)offs[0] * esz, rp + (size_t)(used++) * esz, esz);
    }
    ix_step(nd, psz, pos, 2, st, offs);
  }
  ts_rt_tensor_release(m);
  ts_rt_tensor_release(sc);
  return ok;
}

static bool ix_k_masked_scatter_(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *self = NULL, *mask = NULL, *src = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &self) || !ts_rt_arg_tensor(ctx, call, 1, &mask) ||
      !ts_rt_arg_tensor(ctx, call, 2, &src))
    return false;
  if (!ix_masked_scatter_(ctx, self, mask, src)) return false;
  return ix_put_self(call, self);
}

/* masked_scatter(self, mask, source): self and mask broadcast together
 * (expand_outplace), then a copy of self written. */
static bool ix_k_masked_scatter(ts_rt_ctx *ctx, ts_rt_call *call) {
  ts_rt_tensor *self = NULL, *mask = NULL, *src = NULL;
  if (!ts_rt_arg_tensor(ctx, call, 0, &self) || !ts_rt_arg_tensor(ctx, call, 1, &mask) ||
      !ts_rt_arg_tensor(ctx, call, 2, &src))
    return false;
  int64_t shape[TS_RT_MAX_DIMS];
  int32_t nd = 0;
  if (!ts_rt_broadcast_shapes(ctx, mask->ndim, mask->sizes, self->ndim, self->sizes, &nd, shape)) return false;
  ts_rt_tensor *e = ts_rt_expand(ctx, self, nd, shape);
  ts_rt_tensor *t = e ? ts_rt_clone(ctx, e) : NULL;
  if (e) ts_rt_tensor_release(e);
  if (!t) return false;
  if (!ix_masked_scatter_(ctx, t, mask, src)) {
    ts_rt_tensor_release(t);
    return false;
  }
  return ix_put(call, t);
}

const ts_rt_kernel_def ts_rt_kernels_index[] = {
    {"aten::index_put_", ix_k_index_put_},
    {"aten::index_put_.hacked_twin", ix_k_index_put_},
    {"aten::index_put", ix_k_index_put},
    {"aten::index_put.hacked_twin", ix_k_index_put},
    {"aten::scatter_.src", ix_k_scatter__src},
    {"aten::scatter_.value", ix_k_scatter__value},
    {"aten::scatter_.reduce", ix_k_scatter__reduce},
    {"aten::scatter_.value_reduce", ix_k_scatter__value_reduce},
    {"aten::scatter.src", ix_k_scatter_src},
    {"aten::scatter.value", ix_k_scatter_value},
    {"aten::scatter.reduce", ix_k_scatter_reduce_old},
    {"aten::scatter.value_reduce", ix_k_scatter_value_reduce},
    {"aten::scatter_add_", ix_k_scatter_add_},
    {"aten::scatter_add", ix_k_scatter_add},
    {"aten::scatter_reduce_.two", ix_k_scatter_reduce_},
    {"aten::scatter_reduce.two", ix_k_scatter_reduce},
    {"aten::index_add_", ix_k_index_add_},
    {"aten::index_add", ix_k_index_add},
    {"aten::index_copy_", ix_k_index_copy_},
    {"aten::index_copy", ix_k_index_copy},
    {"aten::index_fill_.int_Scalar", ix_k_index_fill__scalar},
    {"aten::index_fill_.int_Tensor", ix_k_index_fill__tensor},
    {"aten::index_fill.int_Scalar", ix_k_index_fill_scalar},
    {"aten::index_fill.int_Tensor", ix_k_index_fill_tensor},
    {"aten::masked_scatter_", ix_k_masked_scatter_},
    {"aten::masked_scatter", ix_k_masked_scatter},
    {"aten::take", ix_k_take},
    {"aten::take_along_dim", ix_k_take_along_dim},
    {NULL, NULL},
};
