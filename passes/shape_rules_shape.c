/* passes/shape_rules_shape.c: shape rules of the ops that move data around
 * rather than compute it: views (view, reshape, flatten, transpose, permute,
 * squeeze, unsqueeze, select, slice, narrow, expand), casts (to, type_as,
 * cpu, contiguous, clone), factories (zeros, ones, full, empty, eye, arange,
 * *_like, new_*, linspace, logspace, tril/triu_indices, tensor, as_tensor,
 * scalar_tensor), joins and splits (cat, stack, chunk, split, unbind,
 * tensor_split), indexing (index_select, gather, index, embedding,
 * masked_select, nonzero), padding and repeating, list element access.
 *
 * Views keep their input's dtype and, where the input's strides are known,
 * get the strides ATen computes for them; copies and factories are
 * contiguous (factories always, copies when their input is). A size that
 * only the data decides (nonzero, masked_select, boolean masks) is unknown.
 * Sizes are computed with symbols where that is exact: view(x, [-1, 4]) of
 * an x of SS(-2) x 4 elements is SS(-2) x 4; a product of two unknowns is
 * unknown. */
#include "shape_rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

/* out gets in's dtype, device and requires_grad, and no sizes. */
static void sr_like(ts_sr_shape *out, const ts_sr_shape *in) {
  ts_sr_unknown(out);
  out->dtype = in->dtype;
  out->device = in->device;
  out->requires_grad = in->requires_grad;
}

/* A list element as a size: TS_SR_UNKNOWN becomes -1. */
static int64_t sr_sz(int64_t v) { return v == TS_SR_UNKNOWN ? -1 : v; }

/* Element count as a known product and a multiset of symbols. */
typedef struct sr_numel {
  bool known; /* false: some size is unknown (or it overflows) */
  int64_t prod;
  int32_t nsym;
  int64_t syms[TS_SR_MAX_RANK];
} sr_numel;

static void sr_numel_of(const int64_t *sizes, int32_t n, int32_t skip, sr_numel *out) {
  out->known = true;
  out->prod = 1;
  out->nsym = 0;
  for (int32_t k = 0; k < n; k++) {
    if (k == skip)
      continue;
    int64_t s = sizes[k];
    if (s <= -2)
      out->syms[out->nsym++] = s;
    else if (s < 0)
      out->known = false;
    else if (s != 0 && out->prod > INT64_MAX / s)
      out->known = false;
    else
      out->prod *= s;
  }
}

/* The size that makes `part` hold as many elements as `whole` (a -1 in a
 * view): -1 when that is not exact. */
static int64_t sr_infer(const sr_numel *whole, const sr_numel *part) {
  if (!whole->known || !part->known || part->prod == 0)
    return -1;
  int64_t extra[TS_SR_MAX_RANK];
  int32_t nextra = 0;
  bool used[TS_SR_MAX_RANK] = {false};
  for (int32_t i = 0; i < whole->nsym; i++) {
    bool found = false;
    for (int32_t j = 0; j < part->nsym && !found; j++)
      if (!used[j] && part->syms[j] == whole->syms[i])
        used[j] = found = true;
    if (!found)
      extra[nextra++] = whole->syms[i];
  }
  for (int32_t j = 0; j < part->nsym; j++)
    if (!used[j])
      return -1;
  if (whole->prod % part->prod != 0)
    return -1;
  int64_t q = whole->prod / part->prod;
  if (nextra == 0)
    return q;
  return nextra == 1 && q == 1 ? extra[0] : -1;
}

/* A product of sizes as one size: known, one symbol times ones, or -1. */
static int64_t sr_product(const int64_t *sizes, int32_t n) {
  sr_numel m;
  sr_numel_of(sizes, n, -1, &m);
  if (!m.known)
    return -1;
  if (m.nsym == 0)
    return m.prod;
  return m.nsym == 1 && m.prod == 1 ? m.syms[0] : -1;
}

/* Sizes of a reshape to `req` (n entries, one -1 allowed) of `in`: false if
 * they cannot be right (two -1s, a negative size, a known element count
 * that differs). */
static bool sr_reshape_sizes(const ts_sr_shape *in, const int64_t *req, int32_t n, int64_t *out) {
  int32_t infer = -1;
  for (int32_t k = 0; k < n; k++) {
    if (req[k] == -1) {
      if (infer >= 0)
        return false;
      infer = k;
    } else if (req[k] < 0 && req[k] > -2 && req[k] != TS_SR_UNKNOWN) {
      return false;
    }
    out[k] = sr_sz(req[k]);
  }
  if (in->rank < 0) {
    if (infer >= 0)
      out[infer] = -1;
    return true;
  }
  sr_numel whole, part;
  sr_numel_of(in->sizes, in->rank, -1, &whole);
  sr_numel_of(out, n, infer, &part);
  if (infer >= 0) {
    out[infer] = sr_infer(&whole, &part);
    return true;
  }
  if (whole.known && part.known && whole.nsym == 0 && part.nsym == 0 && whole.prod != part.prod)
    return false;
  return true;
}

/* ---------------------------------------------------------------- views */

/* view(self, size), reshape(self, shape): a contiguous input gives a
 * contiguous view; reshape of anything else may copy. */
static void sr_view(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t req[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (ts_sr_size_list(c, 1, req, &n, TS_SR_MAX_RANK)) {
    if (!sr_reshape_sizes(&in, req, n, out.sizes))
      return;
    out.rank = n;
    if (ts_sr_is_contiguous(&in))
      ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* view.dtype: the same sizes when the element size is the same. */
static void sr_view_dtype(ts_sr_call *c) {
  ts_sr_shape in, out;
  int8_t dt;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_dtype_arg(c, 1, &dt) || dt == TS_DT_NONE)
    return;
  if (in.dtype != TS_DT_NONE && ts_dtype_size((ts_dtype)in.dtype) == ts_dtype_size((ts_dtype)dt))
    out = in;
  else
    sr_like(&out, &in);
  out.dtype = dt;
  ts_sr_set(c, 0, &out);
}

/* view_as, reshape_as, expand_as(self, other): other's sizes. */
static void sr_as_other(ts_sr_call *c) {
  ts_sr_shape in, other, out;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &other))
    return;
  sr_like(&out, &in);
  out.rank = other.rank;
  if (other.rank >= 0)
    memcpy(out.sizes, other.sizes, (size_t)other.rank * sizeof *out.sizes);
  if (c->node->kind != TS_K_aten_expand_as && ts_sr_is_contiguous(&in))
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* flatten(self, start_dim, end_dim) */
static void sr_flatten(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t s, e;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 0 || !ts_sr_int(c, 1, &s) || !ts_sr_int(c, 2, &e)) {
    ts_sr_set(c, 0, &out);
    return;
  }
  if (in.rank == 0) {
    out.rank = 1;
    out.sizes[0] = 1;
    ts_sr_contiguous(&out);
    ts_sr_set(c, 0, &out);
    return;
  }
  if (!ts_sr_wrap_dim(s, in.rank, &s) || !ts_sr_wrap_dim(e, in.rank, &e) || s > e)
    return;
  if (s == e) {
    ts_sr_set(c, 0, &in); /* flatten returns self */
    return;
  }
  int32_t r = 0;
  for (int64_t k = 0; k < s; k++)
    out.sizes[r++] = in.sizes[k];
  out.sizes[r++] = sr_product(in.sizes + s, (int32_t)(e - s + 1));
  for (int64_t k = e + 1; k < in.rank; k++)
    out.sizes[r++] = in.sizes[k];
  out.rank = r;
  if (ts_sr_is_contiguous(&in))
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* unflatten(self, dim, sizes) */
static void sr_unflatten(ts_sr_call *c) {
  ts_sr_shape in, out, piece;
  int64_t dim, req[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 1 || !ts_sr_int(c, 1, &dim) || !ts_sr_wrap_dim(dim, in.rank, &dim) ||
      !ts_sr_size_list(c, 2, req, &n, TS_SR_MAX_RANK) || in.rank - 1 + n > TS_SR_MAX_RANK) {
    ts_sr_set(c, 0, &out);
    return;
  }
  sr_like(&piece, &in);
  piece.rank = 1;
  piece.sizes[0] = in.sizes[dim];
  int64_t sizes[TS_SR_MAX_RANK];
  if (!sr_reshape_sizes(&piece, req, n, sizes))
    return;
  int32_t r = 0;
  for (int64_t k = 0; k < dim; k++)
    out.sizes[r++] = in.sizes[k];
  for (int32_t k = 0; k < n; k++)
    out.sizes[r++] = sizes[k];
  for (int64_t k = dim + 1; k < in.rank; k++)
    out.sizes[r++] = in.sizes[k];
  out.rank = r;
  if (ts_sr_is_contiguous(&in))
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

static void sr_swap(int64_t *a, int64_t i, int64_t j) {
  int64_t t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/* transpose(self, dim0, dim1) */
static void sr_transpose(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t a, b;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 0 || !ts_sr_int(c, 1, &a) || !ts_sr_int(c, 2, &b)) {
    ts_sr_shape out;
    sr_like(&out, &in);
    out.rank = in.rank; /* the rank stays */
    for (int32_t k = 0; k < in.rank; k++)
      out.sizes[k] = -1;
    ts_sr_set(c, 0, &out);
    return;
  }
  if (!ts_sr_wrap_dim(a, in.rank, &a) || !ts_sr_wrap_dim(b, in.rank, &b))
    return;
  if (in.rank > 0) {
    sr_swap(in.sizes, a, b);
    sr_swap(in.strides, a, b);
  }
  ts_sr_set(c, 0, &in);
}

/* t(self): transpose(0, 1) of a 2-d tensor; 0-d and 1-d stay. */
static void sr_t(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank > 2)
    return; /* fails at run time */
  if (in.rank == 2) {
    sr_swap(in.sizes, 0, 1);
    sr_swap(in.strides, 0, 1);
  }
  ts_sr_set(c, 0, &in);
}

/* permute(self, dims) */
static void sr_permute(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t dims[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (!ts_sr_int_list(c, 1, dims, &n, TS_SR_MAX_RANK)) {
    /* the rank is the list's length, when known */
    uint32_t cnt;
    if (ts_sp_list_items(c->node->inputs[1], &cnt) && cnt <= TS_SR_MAX_RANK) {
      out.rank = (int32_t)cnt;
      for (uint32_t k = 0; k < cnt; k++)
        out.sizes[k] = -1;
    }
    ts_sr_set(c, 0, &out);
    return;
  }
  if (in.rank >= 0 && in.rank != n)
    return;
  bool seen[TS_SR_MAX_RANK] = {false};
  for (int32_t k = 0; k < n; k++) {
    int64_t d;
    if (!ts_sr_wrap_dim(dims[k], n, &d) || seen[d])
      return;
    seen[d] = true;
    dims[k] = d;
  }
  out.rank = n;
  out.has_strides = in.rank >= 0 && in.has_strides;
  for (int32_t k = 0; k < n; k++) {
    out.sizes[k] = in.rank >= 0 ? in.sizes[dims[k]] : -1;
    if (out.has_strides)
      out.strides[k] = in.strides[dims[k]];
  }
  ts_sr_set(c, 0, &out);
}

/* unsqueeze(self, dim): stride as ATen's inferUnsqueezeGeometry. */
static void sr_unsqueeze(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t d;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 0 || in.rank >= TS_SR_MAX_RANK || !ts_sr_int(c, 1, &d)) {
    if (in.rank >= 0 && in.rank < TS_SR_MAX_RANK) {
      out.rank = in.rank + 1;
      for (int32_t k = 0; k < out.rank; k++)
        out.sizes[k] = -1;
    }
    ts_sr_set(c, 0, &out);
    return;
  }
  if (!ts_sr_wrap_dim(d, in.rank + 1, &d))
    return;
  out.rank = in.rank + 1;
  out.has_strides = in.has_strides;
  for (int32_t k = 0, j = 0; k < out.rank; k++) {
    if (k == d) {
      out.sizes[k] = 1;
      if (in.has_strides) {
        if (d >= in.rank)
          out.strides[k] = 1;
        else if (in.sizes[d] < 0 || !ts_sr_mul(in.sizes[d], in.strides[d], &out.strides[k]))
          out.has_strides = false;
      }
      continue;
    }
    out.sizes[k] = in.sizes[j];
    out.strides[k] = in.strides[j];
    j++;
  }
  ts_sr_set(c, 0, &out);
}

/* squeeze(self) and squeeze.dim(self, dim): a dimension of unknown size
 * may or may not be 1, so the rank is then unknown. */
static void sr_squeeze(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  bool one_dim = c->schema->nargs == 2;
  int64_t d = -1;
  if (one_dim) {
    if (!ts_sr_int(c, 1, &d)) {
      ts_sr_set(c, 0, &out);
      return;
    }
    if (!ts_sr_wrap_dim(d, in.rank, &d))
      return;
    if (in.rank == 0) {
      ts_sr_set(c, 0, &in);
      return;
    }
  }
  int32_t r = 0;
  for (int32_t k = 0; k < in.rank; k++) {
    bool considered = !one_dim || k == d;
    if (considered && in.sizes[k] < 0) {
      ts_sr_set(c, 0, &out); /* rank unknown */
      return;
    }
    if (considered && in.sizes[k] == 1)
      continue;
    out.sizes[r] = in.sizes[k];
    out.strides[r] = in.strides[k];
    r++;
  }
  out.rank = r;
  out.has_strides = in.has_strides;
  ts_sr_set(c, 0, &out);
}

/* select(self, dim, index) */
static void sr_select(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t d, idx;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 1 || !ts_sr_int(c, 1, &d)) {
    if (in.rank >= 1) {
      out.rank = in.rank - 1;
      for (int32_t k = 0; k < out.rank; k++)
        out.sizes[k] = -1;
    }
    ts_sr_set(c, 0, &out);
    return;
  }
  if (!ts_sr_wrap_dim(d, in.rank, &d))
    return;
  if (ts_sr_int(c, 2, &idx) && in.sizes[d] >= 0 && (idx < -in.sizes[d] || idx >= in.sizes[d]))
    return; /* index out of range at run time */
  int32_t r = 0;
  for (int32_t k = 0; k < in.rank; k++) {
    if (k == d)
      continue;
    out.sizes[r] = in.sizes[k];
    out.strides[r] = in.strides[k];
    r++;
  }
  out.rank = r;
  out.has_strides = in.has_strides;
  ts_sr_set(c, 0, &out);
}

/* The length of a slice [start, end) by step of a dimension of size n, as
 * ATen clamps it; start/end INT64_MIN for None. -1 if unknown. */
static int64_t sr_slice_len(int64_t n, int64_t start, int64_t end, int64_t step, bool start_known, bool end_known) {
  if (start_known && end_known && start == 0 && end == INT64_MAX && step == 1)
    return n; /* all of it, symbols included */
  if (n < 0 || !start_known || !end_known)
    return -1;
  if (start < 0)
    start += n;
  if (end < 0)
    end += n;
  if (start < 0)
    start = 0;
  else if (start > n)
    start = n;
  if (end < start)
    end = start;
  else if (end > n)
    end = n;
  int64_t len = end - start;
  return len / step + (len % step != 0);
}

/* A slice bound: a constant (negative ones count from the end) or a known
 * size; not a symbol, which the length arithmetic cannot use. */
static bool sr_bound(const ts_sr_call *c, uint32_t i, int64_t *out) {
  if (ts_sr_int(c, i, out))
    return true;
  return ts_sr_size(c, i, out) && *out >= 0;
}

/* slice(self, dim, start, end, step) */
static void sr_slice(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t d, step = 1, start = 0, end = INT64_MAX;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 1 || !ts_sr_int(c, 1, &d) || !ts_sr_wrap_dim(d, in.rank, &d) || !ts_sr_int(c, 4, &step)) {
    if (in.rank >= 0) {
      out.rank = in.rank;
      for (int32_t k = 0; k < in.rank; k++)
        out.sizes[k] = -1;
    }
    ts_sr_set(c, 0, &out);
    return;
  }
  if (step <= 0)
    return; /* "slice step must be positive" */
  bool sk = ts_sr_is_none(c, 2) || sr_bound(c, 2, &start);
  bool ek = ts_sr_is_none(c, 3) || sr_bound(c, 3, &end);
  out = in;
  out.sizes[d] = sr_slice_len(in.sizes[d], start, end, step, sk, ek);
  if (in.has_strides && !ts_sr_mul(in.strides[d], step, &out.strides[d]))
    out.has_strides = false;
  ts_sr_set(c, 0, &out);
}

/* narrow(self, dim, start, length) */
static void sr_narrow(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t d, len;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 1 || !ts_sr_int(c, 1, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    ts_sr_shape out;
    sr_like(&out, &in);
    ts_sr_set(c, 0, &out);
    return;
  }
  if (ts_sr_int(c, 3, &len)) {
    if (len < 0)
      return; /* "narrow(): length must be non-negative" */
  } else if (!ts_sr_size(c, 3, &len)) {
    len = -1;
  }
  in.sizes[d] = len;
  ts_sr_set(c, 0, &in);
}

/* expand(self, size, implicit): -1 keeps a size; new dimensions lead. */
static void sr_expand(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t req[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (!ts_sr_size_list(c, 1, req, &n, TS_SR_MAX_RANK) || in.rank < 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  if (n < in.rank)
    return;
  out.rank = n;
  out.has_strides = in.has_strides;
  for (int32_t k = 0; k < n; k++) {
    int32_t j = k - (n - in.rank);
    int64_t want = req[k], have = j >= 0 ? in.sizes[j] : 1;
    if (want == -1) {
      if (j < 0)
        return; /* -1 for a new leading dimension */
      out.sizes[k] = have;
      if (in.has_strides)
        out.strides[k] = in.strides[j];
      continue;
    }
    if (want == TS_SR_UNKNOWN) {
      out.sizes[k] = have >= 0 && have != 1 ? have : -1;
      out.has_strides = false;
      continue;
    }
    if (want < 0 && want > -2)
      return;
    if (have >= 0 && have != 1 && want >= 0 && want != have)
      return; /* "The expanded size of the tensor ... must match" */
    out.sizes[k] = want;
    if (out.has_strides) {
      if (j >= 0 && have == want)
        out.strides[k] = in.strides[j];
      else if (j < 0 || have == 1)
        out.strides[k] = 0;
      else
        out.has_strides = false;
    }
  }
  ts_sr_set(c, 0, &out);
}

/* repeat(self, repeats) */
static void sr_repeat(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t rep[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (!ts_sr_size_list(c, 1, rep, &n, TS_SR_MAX_RANK) || in.rank < 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  if (n < in.rank)
    return;
  out.rank = n;
  for (int32_t k = 0; k < n; k++) {
    int32_t j = k - (n - in.rank);
    int64_t have = j >= 0 ? in.sizes[j] : 1, r = rep[k], prod;
    if (r >= 0 && have >= 0 && ts_sr_mul(have, r, &prod))
      out.sizes[k] = prod;
    else if (r == 1)
      out.sizes[k] = have;
    else if (have == 1 && r != TS_SR_UNKNOWN && r <= -2)
      out.sizes[k] = r;
    else
      out.sizes[k] = -1;
  }
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* The input's type unchanged: detach, prim::data, dropout in eval mode,
 * flip, roll. */
static void sr_same_type(ts_sr_call *c) {
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR)
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
}

/* Same sizes and dtype, a new tensor (flip, roll, dropout): contiguous when
 * the input is. */
static void sr_copy_like(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_is_contiguous(&in))
    in.has_strides = false;
  ts_sr_set(c, 0, &in);
}

/* contiguous(self, memory_format), clone(self, memory_format?) */
static void sr_contiguous(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t fmt = -1;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  bool none = ts_sr_is_none(c, 1);
  if (!none && !ts_sr_int(c, 1, &fmt))
    fmt = -1;
  /* MemoryFormat: 0 contiguous_format, 1 preserve_format */
  if (fmt == 0 || ((none || fmt == 1) && ts_sr_is_contiguous(&in)))
    ts_sr_contiguous(&in);
  else
    in.has_strides = false;
  ts_sr_set(c, 0, &in);
}

/* ---------------------------------------------------------------- casts */

/* A Device argument: a constant, or prim::device(t) of a t whose device is
 * known; unknown (TS_DEV_NONE) otherwise. */
static void sr_device(const ts_sr_call *c, uint32_t i, ts_device *out) {
  ts_cval dev;
  const ts_value *v = i < c->node->ninputs ? c->node->inputs[i] : NULL;
  out->type = TS_DEV_NONE;
  out->index = -1;
  if (!v)
    return;
  if (ts_pass_const_get(v, &dev) && dev.kind == TS_CV_DEVICE) {
    *out = dev.dev;
  } else if (ts_node_is(v->node, TS_K_prim_device) && v->node->ninputs == 1) {
    const ts_type *t = v->node->inputs[0]->type;
    if (t->kind == TS_TY_TENSOR && t->tensor)
      *out = t->tensor->device;
  }
}

/* The result of a cast of `in` to dtype dt (TS_DT_NONE: the dtype is
 * kept; -2: not known): self itself when nothing changes and no copy is
 * asked for, else a copy, whose strides are known when it is contiguous. */
static void sr_cast(ts_sr_call *c, const ts_sr_shape *in, int8_t dt, int copy_arg) {
  ts_sr_shape out = *in;
  bool copy = true;
  bool copy_known = copy_arg >= 0 && ts_sr_bool(c, (uint32_t)copy_arg, &copy);
  if (dt == -2)
    out.dtype = TS_DT_NONE;
  else if (dt != TS_DT_NONE)
    out.dtype = dt;
  bool same = dt == TS_DT_NONE || (dt != -2 && in->dtype != TS_DT_NONE && dt == in->dtype);
  if (!(same && copy_known && !copy) && !ts_sr_is_contiguous(in))
    out.has_strides = false;
  ts_sr_set(c, 0, &out);
}

/* to.dtype(self, dtype, non_blocking, copy, memory_format) */
static void sr_to_dtype(ts_sr_call *c) {
  ts_sr_shape in;
  int8_t dt;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_dtype_arg(c, 1, &dt) || dt == TS_DT_NONE)
    dt = -2; /* ScalarType is not optional here */
  sr_cast(c, &in, dt, 3);
}

/* to.device(self, device, dtype, non_blocking, copy, memory_format) */
static void sr_to_device(ts_sr_call *c) {
  ts_sr_shape in;
  int8_t dt;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_dtype_arg(c, 2, &dt) || dt == TS_DT_NONE)
    dt = -2;
  sr_device(c, 1, &in.device);
  sr_cast(c, &in, dt, 4);
}

/* to.other(self, other, non_blocking, copy, memory_format) */
static void sr_to_other(ts_sr_call *c) {
  ts_sr_shape in, other;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &other))
    return;
  in.device = other.device;
  sr_cast(c, &in, other.dtype == TS_DT_NONE ? -2 : other.dtype, 3);
}

/* to.dtype_layout(self, *, dtype, layout, device, pin_memory, non_blocking,
 * copy, memory_format) */
static void sr_to_dtype_layout(ts_sr_call *c) {
  ts_sr_shape in;
  int8_t dt;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_dtype_arg(c, 1, &dt))
    dt = -2;
  if (!ts_sr_is_none(c, 3))
    sr_device(c, 3, &in.device);
  sr_cast(c, &in, dt, 6);
}

/* to.prim_Device(self, device?, dtype?, non_blocking, copy),
 * to.prim_dtype(self, dtype?, non_blocking, copy), to.prim_other(self, ...) */
static void sr_to_prim(ts_sr_call *c) {
  ts_sr_shape in;
  int8_t dt = TS_DT_NONE;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const char *ov = c->schema->overload;
  int dt_arg = strcmp(ov, "prim_Device") == 0 ? 2 : strcmp(ov, "prim_dtype") == 0 ? 1 : -1;
  int copy_arg = dt_arg < 0 ? 2 : dt_arg + 2;
  if (dt_arg >= 0 && !ts_sr_dtype_arg(c, (uint32_t)dt_arg, &dt))
    dt = -2;
  if (dt_arg == 2 && !ts_sr_is_none(c, 1))
    sr_device(c, 1, &in.device);
  sr_cast(c, &in, dt, copy_arg);
}

/* type_as(self, other) */
static void sr_type_as(ts_sr_call *c) {
  ts_sr_shape in, other;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &other))
    return;
  sr_cast(c, &in, other.dtype == TS_DT_NONE ? -2 : other.dtype, -1);
}

/* ------------------------------------------------------------ factories */

/* The device of a Device? argument: None is the CPU (the default). */
static void sr_device_arg(const ts_sr_call *c, uint32_t i, ts_sr_shape *out) {
  out->device.type = TS_DEV_NONE;
  out->device.index = -1;
  if (i >= c->node->ninputs || ts_sr_is_none(c, i))
    out->device.type = TS_DEV_CPU;
  else
    sr_device(c, i, &out->device);
}

/* The index of the argument named `name`, or -1. */
static int sr_arg(const ts_sr_call *c, const char *name) {
  for (uint32_t i = 0; i < c->schema->nargs; i++)
    if (strcmp(c->schema->args[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* A fresh tensor of `sizes` (n of them, TS_SR_UNKNOWN allowed; n < 0:
 * unknown rank) whose dtype is the dtype argument or `dflt`. */
static void sr_factory(ts_sr_call *c, const int64_t *sizes, int32_t n, int8_t dflt) {
  ts_sr_shape out;
  ts_sr_unknown(&out);
  int di = sr_arg(c, "dtype");
  int8_t dt = TS_DT_NONE;
  if (di >= 0 && !ts_sr_dtype_arg(c, (uint32_t)di, &dt))
    dt = -2; /* not known */
  out.dtype = dt == -2 ? TS_DT_NONE : dt == TS_DT_NONE ? dflt : dt;
  sr_device_arg(c, (uint32_t)sr_arg(c, "device"), &out);
  out.requires_grad = 0;
  if (n >= 0) {
    for (int32_t k = 0; k < n; k++) {
      if (sizes[k] < 0 && sizes[k] > -2)
        return; /* a negative size fails at run time */
      out.sizes[k] = sr_sz(sizes[k]);
    }
    out.rank = n;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* zeros, ones, empty (size, *, dtype, ...): float32 by default */
static void sr_zeros(ts_sr_call *c) {
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_size_list(c, 0, sizes, &n, TS_SR_MAX_RANK))
    n = -1;
  sr_factory(c, sizes, n, TS_DT_FLOAT32);
}

/* The dtype a number argument gives (full, tensor, arange): int -> int64,
 * float -> the default float32, bool -> bool. */
static int8_t sr_number_dtype_of(ts_type_kind k) {
  switch (k) {
  case TS_TY_INT: return TS_DT_INT64;
  case TS_TY_FLOAT: return TS_DT_FLOAT32;
  case TS_TY_BOOL: return TS_DT_BOOL;
  default: return TS_DT_NONE;
  }
}

/* full(size, fill_value, *, dtype, ...): the dtype follows fill_value */
static void sr_full(ts_sr_call *c) {
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_size_list(c, 0, sizes, &n, TS_SR_MAX_RANK))
    n = -1;
  sr_factory(c, sizes, n, c->node->ninputs > 1 ? sr_number_dtype_of(ts_sr_number_kind(c, 1)) : TS_DT_NONE);
}

/* eye(n), eye.m(n, m) */
static void sr_eye(ts_sr_call *c) {
  int64_t sizes[2];
  if (!ts_sr_size(c, 0, &sizes[0]))
    sizes[0] = TS_SR_UNKNOWN;
  sizes[1] = sizes[0];
  if (c->schema->overload[0] && !ts_sr_size(c, 1, &sizes[1]))
    sizes[1] = TS_SR_UNKNOWN;
  sr_factory(c, sizes, 2, TS_DT_FLOAT32);
}

/* arange(end), arange.start(start, end), arange.start_step(start, end,
 * step): int64 unless a bound is a float; ceil((end - start) / step)
 * elements when the bounds are constants. */
static void sr_arange(ts_sr_call *c) {
  int nb = c->schema->overload[0] == 0 ? 1 : strcmp(c->schema->overload, "start") == 0 ? 2 : 3;
  double b[3] = {0, 0, 1};
  bool known = true, has_float = false, has_unknown = false;
  for (int k = 0; k < nb && (uint32_t)k < c->node->ninputs; k++) {
    ts_type_kind t = ts_sr_number_kind(c, (uint32_t)k);
    has_float = has_float || t == TS_TY_FLOAT;
    has_unknown = has_unknown || (t != TS_TY_INT && t != TS_TY_BOOL && t != TS_TY_FLOAT);
    double v;
    if (!ts_sr_double(c, (uint32_t)k, &v))
      known = false;
    else
      b[nb == 1 ? 1 : k] = v;
  }
  int8_t dt = has_float ? TS_DT_FLOAT32 : has_unknown ? TS_DT_NONE : TS_DT_INT64;
  int64_t size = TS_SR_UNKNOWN;
  if (known) {
    double len = ceil((b[1] - b[0]) / b[2]);
    if (!(len >= 0 && len < 1e15))
      return; /* a zero step or bounds inconsistent with its sign fail */
    size = (int64_t)len;
  }
  sr_factory(c, &size, 1, dt);
}

/* zeros_like, ones_like, empty_like(self, *, dtype, ...), full_like(self,
 * fill_value, *, dtype, ...): self's sizes, and its dtype unless given */
static void sr_like_factory(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  ts_sr_unknown(&out);
  int di = sr_arg(c, "dtype");
  int8_t dt;
  if (!ts_sr_dtype_arg(c, (uint32_t)di, &dt))
    out.dtype = TS_DT_NONE;
  else
    out.dtype = dt == TS_DT_NONE ? in.dtype : dt;
  int dev = sr_arg(c, "device");
  if (ts_sr_is_none(c, (uint32_t)dev))
    out.device = in.device;
  else
    sr_device_arg(c, (uint32_t)dev, &out);
  out.requires_grad = 0;
  out.rank = in.rank;
  if (in.rank > 0)
    memcpy(out.sizes, in.sizes, (size_t)in.rank * sizeof *in.sizes);
  /* MemoryFormat: 0 contiguous_format, 1 preserve_format (None too) */
  uint32_t mf = (uint32_t)sr_arg(c, "memory_format");
  int64_t fmt = -1;
  bool preserve = mf >= c->node->ninputs || ts_sr_is_none(c, mf) || (ts_sr_int(c, mf, &fmt) && fmt == 1);
  if ((ts_sr_int(c, mf, &fmt) && fmt == 0) || (preserve && ts_sr_is_contiguous(&in)))
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* aten::tensor.int/float/bool(t, *, dtype, device, requires_grad): 0-d */
static void sr_tensor_scalar(ts_sr_call *c) {
  sr_factory(c, NULL, 0, sr_number_dtype_of(ts_sr_number_kind(c, 0)));
}

/* aten::tensor(t[] data, ...): 1-d when data is a list of numbers */
static void sr_tensor_list(ts_sr_call *c) {
  const ts_type *lt = c->node->inputs[0]->type;
  if (lt->kind != TS_TY_LIST)
    return;
  int8_t dt = sr_number_dtype_of(lt->elems[0]->kind);
  uint32_t n;
  if (dt != TS_DT_NONE && ts_sp_list_items(c->node->inputs[0], &n) && n <= INT32_MAX) {
    int64_t size = n;
    sr_factory(c, &size, 1, dt);
  } else if (dt != TS_DT_NONE) {
    int64_t size = TS_SR_UNKNOWN;
    sr_factory(c, &size, 1, dt);
  } else {
    sr_factory(c, NULL, -1, TS_DT_NONE);
  }
}

/* as_tensor(Tensor data, *, dtype, device): data itself unless the dtype
 * changes, then a converted copy */
static void sr_as_tensor(ts_sr_call *c) {
  ts_sr_shape in;
  int8_t dt;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_dtype_arg(c, 1, &dt))
    dt = -2;
  if (dt == TS_DT_NONE || (dt != -2 && dt == in.dtype))
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
  else
    sr_cast(c, &in, dt, -1);
}

/* scalar_tensor(s, *, dtype, ...): 0-d, float32 unless given */
static void sr_scalar_tensor(ts_sr_call *c) { sr_factory(c, NULL, 0, TS_DT_FLOAT32); }

/* new_zeros, new_ones, new_empty (self, size, *, dtype, ...), new_full
 * (self, size, fill_value, *, dtype, ...): self's dtype unless given */
static void sr_new_factory(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (!ts_sr_size_list(c, 1, sizes, &n, TS_SR_MAX_RANK))
    n = -1;
  sr_factory(c, sizes, n, in.dtype);
}

/* new_empty_strided(self, size, stride, *, dtype, ...): the given strides */
static void sr_new_empty_strided(ts_sr_call *c) {
  sr_new_factory(c);
  ts_sr_shape out;
  int64_t strides[TS_SR_MAX_RANK];
  int32_t ns;
  const ts_type *t = c->node->outputs[0]->type;
  if (t->kind != TS_TY_TENSOR || !t->tensor || t->tensor->rank < 0)
    return;
  ts_sr_unknown(&out);
  out.dtype = t->tensor->dtype;
  out.device = t->tensor->device;
  out.requires_grad = t->tensor->requires_grad;
  out.rank = t->tensor->rank;
  if (out.rank > 0) /* a 0-d type has no sizes array */
    memcpy(out.sizes, t->tensor->sizes, sizeof(int64_t) * (size_t)out.rank);
  if (ts_sr_int_list(c, 2, strides, &ns, TS_SR_MAX_RANK) && ns == out.rank && ns > 0) {
    memcpy(out.strides, strides, sizeof(int64_t) * (size_t)ns);
    out.has_strides = true;
  }
  ts_sr_set(c, 0, &out);
}

/* linspace / logspace (start, end, steps, ...): steps elements, float32
 * unless given */
static void sr_linspace(ts_sr_call *c) {
  int64_t steps;
  if (!ts_sr_size(c, 2, &steps))
    steps = TS_SR_UNKNOWN;
  sr_factory(c, &steps, 1, TS_DT_FLOAT32);
}

/* tril_indices / triu_indices (row, col, offset, *, dtype=int64, ...):
 * [2, N], N counted when the arguments are constants */
static void sr_tri_indices(ts_sr_call *c) {
  int64_t row, col, off, sizes[2] = {2, TS_SR_UNKNOWN};
  bool upper = c->node->kind == TS_K_aten_triu_indices;
  if (ts_sr_int(c, 0, &row) && ts_sr_int(c, 1, &col) && ts_sr_int(c, 2, &off) && row >= 0 && col >= 0 &&
      row <= INT32_MAX && col <= INT32_MAX && off > -INT32_MAX && off < INT32_MAX) {
    int64_t n = 0;
    for (int64_t r = 0; r < row; r++) {
      int64_t lo = upper ? (r + off > 0 ? r + off : 0) : 0;
      int64_t hi = upper ? col : (r + off + 1 < col ? r + off + 1 : col);
      if (hi > lo)
        n += hi - lo;
    }
    sizes[1] = n;
  }
  sr_factory(c, sizes, 2, TS_DT_INT64);
}

/* prim::NumToTensor(Scalar/bool): 0-d int64, float64 or bool */
static void sr_num_to_tensor(ts_sr_call *c) {
  ts_sr_shape out;
  ts_sr_unknown(&out);
  const ts_type *t = c->node->inputs[0]->type;
  out.dtype = t->kind == TS_TY_INT ? TS_DT_INT64 : t->kind == TS_TY_FLOAT ? TS_DT_FLOAT64
              : t->kind == TS_TY_BOOL ? TS_DT_BOOL : TS_DT_NONE;
  out.rank = 0;
  out.has_strides = true;
  out.device.type = TS_DEV_CPU;
  out.requires_grad = 0;
  ts_sr_set(c, 0, &out);
}

/* ------------------------------------------------------ joins and splits */

enum { SR_MAX_LIST = 256 };

/* Two sizes that must be equal at run time: a known one wins. */
static int64_t sr_same_size(int64_t a, int64_t b) {
  if (a == b)
    return a;
  if (a >= 0)
    return a;
  if (b >= 0)
    return b;
  return a <= -2 ? a : b;
}

/* cat(tensors, dim): legacy 1-d empty tensors are skipped, as ATen does. */
static void sr_cat_in(ts_sr_call *c, ts_sr_shape *ts) {
  uint32_t n;
  int64_t d;
  ts_sr_shape out;
  ts_sr_unknown(&out);
  bool have_dim = ts_sr_int(c, 1, &d);
  if (!ts_sr_tensor_list(c, 0, ts, &n, SR_MAX_LIST)) {
    /* the element type of the list, when it is refined */
    const ts_type *lt = c->node->inputs[0]->type;
    if (lt->kind == TS_TY_LIST && lt->elems[0]->kind == TS_TY_TENSOR && lt->elems[0]->tensor) {
      const ts_tensor_info *ti = lt->elems[0]->tensor;
      out.dtype = ti->dtype;
      out.device = ti->device;
      out.requires_grad = ti->requires_grad;
      if (ti->rank > 1 && have_dim && ts_sr_wrap_dim(d, ti->rank, &d)) {
        out.rank = ti->rank;
        for (int32_t k = 0; k < ti->rank; k++)
          out.sizes[k] = k == d ? -1 : ti->sizes[k];
      }
    }
    ts_sr_set(c, 0, &out);
    return;
  }
  int32_t rank = -2;
  bool contiguous = true;
  const ts_sr_shape *metas[SR_MAX_LIST];
  uint32_t nm = 0;
  ts_dtype dt = TS_DT_NONE;
  bool dt_known = true;
  for (uint32_t k = 0; k < n; k++) {
    const ts_sr_shape *t = &ts[k];
    metas[nm++] = t;
    if (t->dtype == TS_DT_NONE)
      dt_known = false;
    else
      dt = dt == TS_DT_NONE ? (ts_dtype)t->dtype : ts_type_promote(dt, (ts_dtype)t->dtype);
    if (t->rank < 0) {
      rank = -1;
      continue;
    }
    if (t->rank == 1 && t->sizes[0] == 0)
      continue;
    contiguous = contiguous && ts_sr_is_contiguous(t);
    if (rank == -1)
      continue;
    if (rank == -2) {
      rank = t->rank;
      out.rank = t->rank;
      memcpy(out.sizes, t->sizes, (size_t)t->rank * sizeof *t->sizes);
      if (!have_dim || !ts_sr_wrap_dim(d, rank, &d)) {
        if (have_dim)
          return;
        rank = -1;
      }
      continue;
    }
    if (t->rank != rank)
      return; /* "Tensors must have same number of dimensions" */
    for (int32_t j = 0; j < rank; j++) {
      if (j == d) {
        int64_t a = out.sizes[j], b = t->sizes[j];
        out.sizes[j] = a >= 0 && b >= 0 && a <= INT64_MAX - b ? a + b : -1;
      } else {
        if (out.sizes[j] >= 0 && t->sizes[j] >= 0 && out.sizes[j] != t->sizes[j])
          return; /* sizes must match except in the cat dimension */
        out.sizes[j] = sr_same_size(out.sizes[j], t->sizes[j]);
      }
    }
  }
  out.dtype = dt_known ? (int8_t)dt : TS_DT_NONE;
  ts_sr_meta_from(&out, metas, nm);
  if (rank == -2) { /* every input was skipped: a 1-d empty result */
    out.rank = 1;
    out.sizes[0] = 0;
  } else if (rank < 0) {
    out.rank = -1;
  }
  if (contiguous)
    ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* sr_cat_in with its scratch on the heap (no large thread-local arrays). */
static void sr_cat(ts_sr_call *c) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_LIST);
  if (scratch)
    sr_cat_in(c, scratch);
  free(scratch);
}

/* stack(tensors, dim): every input the same size, a new dimension of the
 * input count. */
static void sr_stack_in(ts_sr_call *c, ts_sr_shape *ts) {
  uint32_t n;
  int64_t d;
  ts_sr_shape out;
  ts_sr_unknown(&out);
  if (!ts_sr_tensor_list(c, 0, ts, &n, SR_MAX_LIST) || n == 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  const ts_sr_shape *metas[SR_MAX_LIST];
  ts_dtype dt = (ts_dtype)ts[0].dtype;
  out = ts[0];
  for (uint32_t k = 0; k < n; k++) {
    metas[k] = &ts[k];
    dt = dt == TS_DT_NONE || ts[k].dtype == TS_DT_NONE ? TS_DT_NONE : ts_type_promote(dt, (ts_dtype)ts[k].dtype);
    if (k == 0)
      continue;
    if (out.rank < 0 || ts[k].rank < 0) {
      out.rank = -1;
      continue;
    }
    if (ts[k].rank != out.rank)
      return;
    for (int32_t j = 0; j < out.rank; j++) {
      if (out.sizes[j] >= 0 && ts[k].sizes[j] >= 0 && out.sizes[j] != ts[k].sizes[j])
        return; /* "stack expects each tensor to be equal size" */
      out.sizes[j] = sr_same_size(out.sizes[j], ts[k].sizes[j]);
    }
  }
  out.dtype = (int8_t)dt;
  ts_sr_meta_from(&out, metas, n);
  if (out.rank >= 0 && out.rank < TS_SR_MAX_RANK && ts_sr_int(c, 1, &d) && ts_sr_wrap_dim(d, out.rank + 1, &d)) {
    memmove(out.sizes + d + 1, out.sizes + d, (size_t)(out.rank - d) * sizeof *out.sizes);
    out.sizes[d] = n;
    out.rank++;
  } else {
    out.rank = -1;
  }
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* sr_stack_in with its scratch on the heap (no large thread-local arrays). */
static void sr_stack(ts_sr_call *c) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_LIST);
  if (scratch)
    sr_stack_in(c, scratch);
  free(scratch);
}

/* Pieces of `in` along d of the given sizes (views: strides kept). */
static void sr_set_pieces_in(ts_sr_call *c, const ts_sr_shape *in, int64_t d, const int64_t *sizes, uint32_t n,
                             ts_sr_shape *ps) {
  if (n > SR_MAX_LIST)
    return;
  for (uint32_t k = 0; k < n; k++) {
    ps[k] = *in;
    ps[k].sizes[d] = sizes[k];
  }
  ts_sr_set_list(c, 0, ps, n);
}

/* sr_set_pieces_in with its scratch on the heap (no large thread-local arrays). */
static void sr_set_pieces(ts_sr_call *c, const ts_sr_shape *in, int64_t d, const int64_t *sizes, uint32_t n) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_LIST);
  if (scratch)
    sr_set_pieces_in(c, in, d, sizes, n, scratch);
  free(scratch);
}

/* A Tensor[] output whose element count is not known, each element p. */
static void sr_set_list_elem(ts_sr_call *c, const ts_sr_shape *elem) {
  const ts_sr_shape p = *elem;
  ts_value *v = c->node->outputs[0];
  if (v->type->kind != TS_TY_LIST || v->type->elems[0]->kind != TS_TY_TENSOR || !ts_sp_list_read_only(v))
    return;
  ts_tensor_info ti = {.dtype = p.dtype, .requires_grad = p.requires_grad, .undefined = -1, .device = p.device,
                       .rank = p.rank, .sizes = p.rank > 0 ? p.sizes : NULL,
                       .strides = p.rank > 0 && p.has_strides ? p.strides : NULL};
  ts_arena *a = &c->node->graph->arena;
  const ts_type *et = ts_type_tensor(a, &ti);
  const ts_type *lt = et ? ts_type_list(a, et) : NULL;
  if (!lt)
    c->oom = true;
  else
    ts_value_set_type(v, lt);
}

/* When the count of pieces is not known: one unknown size along d (d < 0:
 * nothing known of the pieces' sizes). */
static void sr_set_unknown_pieces(ts_sr_call *c, const ts_sr_shape *in, int64_t d) {
  ts_sr_shape p = *in;
  if (in->rank >= 0 && d >= 0)
    p.sizes[d] = -1;
  else
    sr_like(&p, in);
  sr_set_list_elem(c, &p);
}

/* split(size, split_size): pieces of split_size, the last smaller, as
 * ATen's split (at least one piece). */
static uint32_t sr_split_sizes(int64_t size, int64_t ss, int64_t *out, uint32_t max) {
  if (size < 0 || (ss <= 0 && size != 0) || ss < 0)
    return 0;
  int64_t n = ss > 0 ? size / ss + (size % ss != 0) : 1;
  if (n < 1)
    n = 1;
  if ((uint64_t)n > max)
    return 0;
  for (int64_t k = 0; k < n; k++)
    out[k] = ss;
  out[n - 1] = size - ss * (n - 1); /* ss * (n - 1) < size: no overflow */
  if (size == 0)
    out[0] = 0;
  return (uint32_t)n;
}

uint32_t ts_sr_chunk_sizes(int64_t size, int64_t chunks, int64_t *out, uint32_t max) {
  if (chunks <= 0 || size < 0)
    return 0;
  int64_t ss = size / chunks + (size % chunks != 0);
  if (ss == 0 && size == 0) {
    if ((uint64_t)chunks > max)
      return 0;
    for (int64_t k = 0; k < chunks; k++)
      out[k] = 0;
    return (uint32_t)chunks;
  }
  return sr_split_sizes(size, ss, out, max);
}

/* chunk(self, chunks, dim), split.Tensor(self, split_size, dim) */
static void sr_chunk(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t d, k, sizes[SR_MAX_LIST];
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 1 || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    sr_set_unknown_pieces(c, &in, -1);
    return;
  }
  uint32_t n = 0;
  if (ts_sr_int(c, 1, &k) && in.sizes[d] >= 0)
    n = c->node->kind == TS_K_aten_chunk ? ts_sr_chunk_sizes(in.sizes[d], k, sizes, SR_MAX_LIST)
                                         : sr_split_sizes(in.sizes[d], k, sizes, SR_MAX_LIST);
  if (n)
    sr_set_pieces(c, &in, d, sizes, n);
  else
    sr_set_unknown_pieces(c, &in, d);
}

/* split(self, int[] split_sizes, dim) and its aliases */
static void sr_split_with_sizes(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t d, sizes[SR_MAX_LIST];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 1 || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    sr_set_unknown_pieces(c, &in, -1);
    return;
  }
  if (!ts_sr_size_list(c, 1, sizes, &n, SR_MAX_LIST)) {
    sr_set_unknown_pieces(c, &in, d);
    return;
  }
  int64_t total = 0;
  bool all = true;
  for (int32_t k = 0; k < n; k++) {
    if (sizes[k] == TS_SR_UNKNOWN || sizes[k] < 0)
      all = false, sizes[k] = sr_sz(sizes[k]);
    else if (!ts_sr_add(total, sizes[k], &total))
      return; /* cannot sum to any size */
  }
  if (all && in.sizes[d] >= 0 && total != in.sizes[d])
    return; /* "split_with_sizes expects split_sizes to sum exactly to ..." */
  sr_set_pieces(c, &in, d, sizes, (uint32_t)n);
}

/* unbind(self, dim): one select per index */
static void sr_unbind_in(ts_sr_call *c, ts_sr_shape *ps) {
  ts_sr_shape in, p;
  int64_t d;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 1 || !ts_sr_int(c, 1, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    sr_set_unknown_pieces(c, &in, -1);
    return;
  }
  p = in;
  for (int32_t k = (int32_t)d; k + 1 < in.rank; k++) {
    p.sizes[k] = in.sizes[k + 1];
    p.strides[k] = in.strides[k + 1];
  }
  p.rank = in.rank - 1;
  int64_t n = in.sizes[d];
  if (n < 0 || n > SR_MAX_LIST) {
    sr_set_list_elem(c, &p); /* the element type does not depend on the count */
    return;
  }
  for (int64_t k = 0; k < n; k++)
    ps[k] = p;
  ts_sr_set_list(c, 0, ps, (uint32_t)n);
}

/* sr_unbind_in with its scratch on the heap (no large thread-local arrays). */
static void sr_unbind(ts_sr_call *c) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_LIST);
  if (scratch)
    sr_unbind_in(c, scratch);
  free(scratch);
}

/* tensor_split.sections(self, sections, dim), .indices(self, indices, dim) */
static void sr_tensor_split(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t d, sizes[SR_MAX_LIST];
  if (!ts_sr_tensor(c, 0, &in))
    return;
  if (in.rank < 1 || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d) || in.sizes[d] < 0) {
    sr_set_unknown_pieces(c, &in, in.rank >= 1 && ts_sr_int(c, 2, &d) && ts_sr_wrap_dim(d, in.rank, &d) ? d : -1);
    return;
  }
  int64_t size = in.sizes[d];
  uint32_t n = 0;
  if (strcmp(c->schema->overload, "sections") == 0) {
    int64_t s;
    if (!ts_sr_int(c, 1, &s) || s <= 0 || s > SR_MAX_LIST) {
      sr_set_unknown_pieces(c, &in, d);
      return;
    }
    /* the first size % s pieces get one more */
    for (int64_t k = 0; k < s; k++)
      sizes[k] = size / s + (k < size % s ? 1 : 0);
    n = (uint32_t)s;
  } else {
    int64_t idx[SR_MAX_LIST];
    int32_t ni;
    if (!ts_sr_int_list(c, 1, idx, &ni, SR_MAX_LIST - 1)) {
      sr_set_unknown_pieces(c, &in, d);
      return;
    }
    int64_t prev = 0;
    for (int32_t k = 0; k <= ni; k++) {
      int64_t end = k < ni ? idx[k] : size;
      if (end < 0)
        end += size;
      if (end < 0)
        end = 0;
      if (end > size)
        end = size;
      sizes[k] = end > prev ? end - prev : 0;
      if (end > prev)
        prev = end;
    }
    n = (uint32_t)ni + 1;
  }
  sr_set_pieces(c, &in, d, sizes, n);
}

/* broadcast_tensors(tensors) */
static void sr_broadcast_tensors_in(ts_sr_call *c, ts_sr_shape *ts) {
  uint32_t n;
  if (!ts_sr_tensor_list(c, 0, ts, &n, SR_MAX_LIST) || n == 0)
    return;
  ts_sr_shape b = ts[0];
  for (uint32_t k = 1; k < n; k++)
    if (!ts_sr_broadcast(&b, &ts[k]))
      return;
  for (uint32_t k = 0; k < n; k++) {
    int8_t dt = ts[k].dtype;
    ts_sr_shape m = b;
    m.dtype = dt;
    m.device = ts[k].device;
    m.requires_grad = ts[k].requires_grad;
    m.has_strides = false;
    ts[k] = m;
  }
  ts_sr_set_list(c, 0, ts, n);
}

/* sr_broadcast_tensors_in with its scratch on the heap (no large thread-local arrays). */
static void sr_broadcast_tensors(ts_sr_call *c) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_LIST);
  if (scratch)
    sr_broadcast_tensors_in(c, scratch);
  free(scratch);
}

/* ------------------------------------------------------------- indexing */

/* The number of elements of a 0-d or 1-d index, or -1. */
static int64_t sr_index_len(const ts_sr_shape *ix) {
  if (ix->rank == 0)
    return 1;
  return ix->rank == 1 ? ix->sizes[0] : -1;
}

/* index_select(self, dim, index) */
static void sr_index_select(ts_sr_call *c) {
  ts_sr_shape in, ix, out;
  int64_t d;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 2, &ix))
    return;
  sr_like(&out, &in);
  if (in.rank >= 0 && ts_sr_int(c, 1, &d) && ts_sr_wrap_dim(d, in.rank, &d)) {
    out = in;
    if (in.rank > 0)
      out.sizes[d] = sr_index_len(&ix);
    const ts_sr_shape *m[2] = {&in, &ix};
    ts_sr_meta_from(&out, m, 2);
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* gather(self, dim, index): index's sizes, self's dtype */
static void sr_gather(ts_sr_call *c) {
  ts_sr_shape in, ix, out;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 2, &ix))
    return;
  out = ix;
  out.dtype = in.dtype;
  const ts_sr_shape *m[2] = {&in, &ix};
  ts_sr_meta_from(&out, m, 2);
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* embedding(weight, indices, ...): indices' sizes and the row length */
static void sr_embedding(ts_sr_call *c) {
  ts_sr_shape w, ix, out;
  if (!ts_sr_tensor(c, 0, &w) || !ts_sr_tensor(c, 1, &ix))
    return;
  sr_like(&out, &w);
  if (ix.rank >= 0 && ix.rank < TS_SR_MAX_RANK && w.rank == 2) {
    out.rank = ix.rank + 1;
    memcpy(out.sizes, ix.sizes, (size_t)ix.rank * sizeof *ix.sizes);
    out.sizes[ix.rank] = w.sizes[1];
    ts_sr_contiguous(&out);
  }
  const ts_sr_shape *m[2] = {&w, &ix};
  ts_sr_meta_from(&out, m, 2);
  ts_sr_set(c, 0, &out);
}

/* index.Tensor(self, indices): advanced indexing. Integer indices are
 * broadcast together; a boolean mask stands for the nonzero() of it (one
 * dimension of unknown size for as many dimensions as it has). The result
 * has the broadcast dimensions where the indexed ones were when the
 * indices are adjacent, else first. */
static void sr_index(ts_sr_call *c) {
  ts_sr_shape in, out, b;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  uint32_t n;
  ts_value *const *items = ts_sp_list_items(c->node->inputs[1], &n);
  if (!items || in.rank < 0 || n > (uint32_t)in.rank) {
    ts_sr_set(c, 0, &out);
    return;
  }
  ts_sr_unknown(&b);
  b.rank = 0;
  int32_t dim = 0, first = -1, last = -1;
  bool adjacent = true, known = true;
  int32_t consumed[TS_SR_MAX_RANK]; /* self dim -> 1 if indexed */
  for (int32_t k = 0; k < in.rank; k++)
    consumed[k] = 0;
  for (uint32_t k = 0; k < n; k++) {
    const ts_value *v = items[k];
    ts_cval cv;
    if (v->type->kind == TS_TY_NONE || (ts_pass_const_get(v, &cv) && cv.kind == TS_CV_NONE)) {
      dim++;
      continue;
    }
    const ts_type *t = v->type;
    if (t->kind == TS_TY_OPTIONAL)
      t = t->elems[0];
    if (t->kind != TS_TY_TENSOR || !t->tensor || t->tensor->rank < 0 || t->tensor->dtype == TS_DT_NONE) {
      known = false;
      break;
    }
    const ts_tensor_info *ti = t->tensor;
    ts_sr_shape ix;
    ts_sr_unknown(&ix);
    int32_t span = 1;
    if (ti->dtype == TS_DT_BOOL || ti->dtype == TS_DT_UINT8) {
      span = ti->rank;
      ix.rank = 1;
      ix.sizes[0] = -1;
    } else {
      ix.rank = ti->rank;
      for (int32_t j = 0; j < ti->rank; j++)
        ix.sizes[j] = ti->sizes[j];
    }
    if (dim + span > in.rank)
      return; /* too many indices */
    if (first >= 0 && last != dim - 1)
      adjacent = false;
    if (first < 0)
      first = dim;
    for (int32_t j = 0; j < span; j++)
      consumed[dim + j] = 1;
    dim += span;
    last = dim - 1;
    if (!ts_sr_broadcast(&b, &ix))
      return;
  }
  if (!known || first < 0 || b.rank < 0) {
    ts_sr_set(c, 0, &out);
    return;
  }
  int32_t r = 0;
  if (!adjacent) {
    for (int32_t j = 0; j < b.rank; j++)
      out.sizes[r++] = b.sizes[j];
    for (int32_t k = 0; k < in.rank; k++)
      if (!consumed[k])
        out.sizes[r++] = in.sizes[k];
  } else {
    for (int32_t k = 0; k < first; k++)
      out.sizes[r++] = in.sizes[k];
    for (int32_t j = 0; j < b.rank; j++)
      out.sizes[r++] = b.sizes[j];
    for (int32_t k = last + 1; k < in.rank; k++)
      out.sizes[r++] = in.sizes[k];
  }
  if (r > TS_SR_MAX_RANK)
    return;
  out.rank = r;
  ts_sr_set(c, 0, &out);
}

/* masked_select(self, mask): 1-d, as many elements as the mask has true */
static void sr_masked_select(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  out.rank = 1;
  out.sizes[0] = -1;
  ts_sr_set(c, 0, &out);
}

/* nonzero(self): int64 [count, rank] */
static void sr_nonzero(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  out.dtype = TS_DT_INT64;
  out.rank = 2;
  out.sizes[0] = -1;
  out.sizes[1] = in.rank >= 0 ? in.rank : -1;
  ts_sr_set(c, 0, &out);
}

/* constant_pad_nd(self, pad, value), pad(self, pad, mode, value): pad
 * pairs from the last dimension on */
static void sr_pad(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t pad[2 * TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  sr_like(&out, &in);
  if (in.rank < 0 || !ts_sr_int_list(c, 1, pad, &n, 2 * TS_SR_MAX_RANK)) {
    out.rank = in.rank;
    for (int32_t k = 0; k < in.rank; k++)
      out.sizes[k] = -1;
    ts_sr_set(c, 0, &out);
    return;
  }
  if (n % 2 || n / 2 > in.rank)
    return;
  out = in;
  for (int32_t k = 0; k < n / 2; k++) {
    int32_t d = in.rank - 1 - k;
    int64_t s = in.sizes[d], lo = pad[2 * k], hi = pad[2 * k + 1];
    if (s >= 0) {
      int64_t r;
      if (!ts_sr_add(s, lo, &r) || !ts_sr_add(r, hi, &r) || r < 0)
        return;
      out.sizes[d] = r;
    } else if (lo != 0 || hi != 0) {
      out.sizes[d] = -1;
    }
  }
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* ---------------------------------------------------------------- lists */

/* __getitem__.t(list, idx): the list's element, exactly when the list is a
 * read-only ListConstruct and idx a constant */
static void sr_getitem(ts_sr_call *c) {
  const ts_value *l = c->node->inputs[0];
  if (l->type->kind != TS_TY_LIST)
    return;
  uint32_t n;
  int64_t idx;
  ts_value *const *items = ts_sp_list_items(l, &n);
  if (items && ts_sr_int(c, 1, &idx) && idx >= -(int64_t)n && idx < (int64_t)n) {
    ts_sr_set_type(c, 0, items[idx < 0 ? idx + (int64_t)n : idx]->type);
    return;
  }
  ts_sr_set_type(c, 0, l->type->elems[0]);
}

const ts_sr_def ts_sr_rules_shape[] = {
    {"aten::view", sr_view},
    {"aten::reshape", sr_view},
    {"aten::view.dtype", sr_view_dtype},
    {"aten::view_as", sr_as_other},
    {"aten::reshape_as", sr_as_other},
    {"aten::expand_as", sr_as_other},
    {"aten::flatten.using_ints", sr_flatten},
    {"aten::unflatten.int", sr_unflatten},
    {"aten::transpose.int", sr_transpose},
    {"aten::t", sr_t},
    {"aten::permute", sr_permute},
    {"aten::unsqueeze", sr_unsqueeze},
    {"aten::squeeze", sr_squeeze},
    {"aten::squeeze.dim", sr_squeeze},
    {"aten::select.int", sr_select},
    {"aten::slice.Tensor", sr_slice},
    {"aten::narrow", sr_narrow},
    {"aten::narrow.Tensor", sr_narrow},
    {"aten::expand", sr_expand},
    {"aten::repeat", sr_repeat},
    {"aten::detach", sr_same_type},
    {"prim::data", sr_same_type},
    {"aten::flip", sr_copy_like},
    {"aten::roll", sr_copy_like},
    {"aten::contiguous", sr_contiguous},
    {"aten::clone", sr_contiguous},
    {"aten::to.dtype", sr_to_dtype},
    {"aten::to.device", sr_to_device},
    {"aten::to.other", sr_to_other},
    {"aten::to.dtype_layout", sr_to_dtype_layout},
    {"aten::to.prim_Device", sr_to_prim},
    {"aten::to.prim_dtype", sr_to_prim},
    {"aten::to.prim_other", sr_to_prim},
    {"aten::type_as", sr_type_as},
    {"aten::cpu", sr_same_type},
    {"aten::zeros", sr_zeros},
    {"aten::ones", sr_zeros},
    {"aten::empty.memory_format", sr_zeros},
    {"aten::full", sr_full},
    {"aten::eye", sr_eye},
    {"aten::eye.m", sr_eye},
    {"aten::arange", sr_arange},
    {"aten::arange.start", sr_arange},
    {"aten::arange.start_step", sr_arange},
    {"aten::zeros_like", sr_like_factory},
    {"aten::ones_like", sr_like_factory},
    {"aten::empty_like", sr_like_factory},
    {"aten::full_like", sr_like_factory},
    {"aten::tensor.int", sr_tensor_scalar},
    {"aten::tensor.float", sr_tensor_scalar},
    {"aten::tensor.bool", sr_tensor_scalar},
    {"aten::tensor", sr_tensor_list},
    {"aten::as_tensor.int", sr_tensor_scalar},
    {"aten::as_tensor.float", sr_tensor_scalar},
    {"aten::as_tensor.bool", sr_tensor_scalar},
    {"aten::as_tensor.list", sr_tensor_list},
    {"aten::as_tensor", sr_as_tensor},
    {"aten::scalar_tensor", sr_scalar_tensor},
    {"aten::new_zeros", sr_new_factory},
    {"aten::new_ones", sr_new_factory},
    {"aten::new_empty", sr_new_factory},
    {"aten::new_full", sr_new_factory},
    {"aten::new_empty_strided", sr_new_empty_strided},
    {"aten::linspace", sr_linspace},
    {"aten::logspace", sr_linspace},
    {"aten::tril_indices", sr_tri_indices},
    {"aten::triu_indices", sr_tri_indices},
    {"prim::NumToTensor.Scalar", sr_num_to_tensor},
    {"prim::NumToTensor.bool", sr_num_to_tensor},
    {"aten::cat", sr_cat},
    {"aten::stack", sr_stack},
    {"aten::chunk", sr_chunk},
    {"aten::split.Tensor", sr_chunk},
    {"aten::split.sizes", sr_split_with_sizes},
    {"aten::split", sr_split_with_sizes},
    {"aten::split_with_sizes", sr_split_with_sizes},
    {"aten::unbind.int", sr_unbind},
    {"aten::tensor_split.sections", sr_tensor_split},
    {"aten::tensor_split.indices", sr_tensor_split},
    {"aten::broadcast_tensors", sr_broadcast_tensors},
    {"aten::index_select", sr_index_select},
    {"aten::gather", sr_gather},
    {"aten::embedding", sr_embedding},
    {"aten::index.Tensor", sr_index},
    {"aten::index.Tensor_hacked_twin", sr_index},
    {"aten::masked_select", sr_masked_select},
    {"aten::nonzero", sr_nonzero},
    {"aten::constant_pad_nd", sr_pad},
    {"aten::pad", sr_pad},
    {"aten::__getitem__.t", sr_getitem},
    {NULL, NULL},
};
