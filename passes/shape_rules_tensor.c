/* passes/shape_rules_tensor.c: shape rules of the tensor ops that write
 * through indices, gather, scan or lay elements out anew
 * (runtime/kernels/index.c, layout.c, scan.c): index_put, scatter,
 * scatter_add, scatter_reduce, index_add, index_copy, index_fill,
 * masked_scatter, take, take_along_dim, meshgrid, tril/triu, diag,
 * diagonal, diag_embed, diagflat, tile, repeat_interleave, one_hot, cross,
 * cummax/cummin, logcumsumexp, copy; einsum (einsum.c); the unique family,
 * searchsorted, bucketize, histc, bincount, msort (search.c).
 *
 * In-place forms keep self's type (strides included: they return self);
 * out-of-place forms are new tensors, contiguous when self is (the kernels
 * clone self contiguously), else with unknown strides; ops that build their
 * result afresh give contiguous tensors. Sizes only the data decides
 * (repeat_interleave by a tensor, one_hot without num_classes) are
 * unknown. */
#include "shape_rules.h"

#include <stdlib.h>
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

/* A new contiguous tensor of self's dtype and the given sizes (n < 0:
 * unknown rank), device and requires_grad from the inputs ms[0..nm). */
static void sr_fresh(ts_sr_call *c, int8_t dtype, const int64_t *sizes, int32_t n, const ts_sr_shape *const *ms,
                     uint32_t nm) {
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = dtype;
  ts_sr_meta_from(&out, ms, nm);
  if (n >= 0) {
    out.rank = n;
    if (n > 0) /* sizes may be NULL for a 0-d result */
      memcpy(out.sizes, sizes, sizeof(int64_t) * (size_t)n);
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* self's sizes and dtype, contiguous (tril, triu, logcumsumexp) */
static void sr_contig_of_self(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  sr_fresh(c, in.dtype, in.sizes, in.rank, m, 1);
}

/* -------------------------------------------------------------- gathers */

/* take(self, index): index's sizes, self's dtype */
static void sr_take(ts_sr_call *c) {
  ts_sr_shape in, ix;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &ix))
    return;
  const ts_sr_shape *m[2] = {&in, &ix};
  sr_fresh(c, in.dtype, ix.sizes, ix.rank, m, 2);
}

/* take_along_dim(self, indices, dim): with dim, self and indices broadcast
 * outside dim, indices' size along it; without, indices flattened */
static void sr_take_along_dim(ts_sr_call *c) {
  ts_sr_shape in, ix;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &ix))
    return;
  const ts_sr_shape *m[2] = {&in, &ix};
  if (ts_sr_is_none(c, 2)) {
    int64_t n = -1;
    if (ix.rank >= 0) {
      n = 1;
      for (int32_t k = 0; k < ix.rank && n >= 0; k++)
        if (ix.sizes[k] < 0 || !ts_sr_mul(n, ix.sizes[k], &n))
          n = -1;
    }
    sr_fresh(c, in.dtype, &n, 1, m, 2);
    return;
  }
  int64_t d;
  if (in.rank < 0 || ix.rank != in.rank || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
    sr_fresh(c, in.dtype, NULL, -1, m, 2);
    return;
  }
  ts_sr_shape a = in;
  if (in.rank > 0) {
    a.sizes[d] = ix.sizes[d];
    if (!ts_sr_broadcast(&a, &ix))
      return;
  }
  sr_fresh(c, in.dtype, a.sizes, a.rank, m, 2);
}

/* masked_scatter(self, mask, source): self and mask broadcast, self's
 * dtype, a new contiguous tensor */
static void sr_masked_scatter(ts_sr_call *c) {
  ts_sr_shape in, mk;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_tensor(c, 1, &mk))
    return;
  const ts_sr_shape *m[2] = {&in, &mk};
  ts_sr_shape a = in;
  if (!ts_sr_broadcast(&a, &mk))
    return;
  sr_fresh(c, in.dtype, a.sizes, a.rank, m, 2);
}

/* ---------------------------------------------------------------- einsum */

/* Broadcasts size s into *bs as einsum does (1 gives way; a known size
 * beats an unknown one, which may only be 1 or equal): false when two known
 * sizes clash (fails at run time). */
static bool sr_es_size(int64_t *bs, int64_t s) {
  if (s == 1 || s == *bs)
    return true;
  if (*bs == 1)
    *bs = s;
  else if (s >= 0 && *bs >= 0)
    return false;
  else if (s >= 0)
    *bs = s;
  else if (*bs < 0)
    *bs = -1; /* two different unknowns */
  return true;
}

static int sr_es_label(unsigned char ch) {
  return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26 : -1;
}

/* einsum(equation, tensors): the output's sizes from a constant equation
 * (runtime/kernels/einsum.c's parse: labels broadcast across operands, the
 * ellipsis' dims right-aligned); strides unknown (a permuted product). The
 * dtype is the operands' one when they share a floating one (integers may
 * widen in its sums). */
static void sr_einsum_in(ts_sr_call *c, ts_sr_shape *ops) {
  enum { NOPS = 16, NL = 52 };
  uint32_t n = 0;
  ts_cval eq;
  if (!ts_pass_const_get(c->node->inputs[0], &eq) || eq.kind != TS_CV_STR ||
      !ts_sr_tensor_list(c, 1, ops, &n, NOPS) || n == 0)
    return;
  int64_t lsize[NL], ell[TS_SR_MAX_RANK];
  int32_t count[NL] = {0}, ell_num = 0;
  for (int k = 0; k < NL; k++)
    lsize[k] = 1;
  for (int k = 0; k < TS_SR_MAX_RANK; k++)
    ell[k] = 1;
  size_t arrow = eq.len;
  for (size_t i = 0; i + 1 < eq.len; i++)
    if (eq.s[i] == '-' && eq.s[i + 1] == '>') {
      arrow = i;
      break;
    }
  /* two passes over the inputs: the ellipsis' width, then the sizes */
  for (int pass = 0; pass < 2; pass++) {
    uint32_t op = 0;
    size_t start = 0;
    for (size_t i = 0; i <= arrow; i++) {
      if (i < arrow && eq.s[i] != ',')
        continue;
      if (op >= n || ops[op].rank < 0)
        return;
      int32_t nl = 0, dim = 0;
      bool has_ell = false;
      for (size_t k = start; k < i; k++)
        if (eq.s[k] == '.')
          has_ell = true, k += 2;
        else if (eq.s[k] != ' ')
          nl++;
      int32_t width = has_ell ? ops[op].rank - nl : 0;
      if (width < 0 || (!has_ell && nl != ops[op].rank))
        return;
      if (pass == 0) {
        if (width > ell_num)
          ell_num = width;
      } else {
        for (size_t k = start; k < i; k++) {
          unsigned char ch = (unsigned char)eq.s[k];
          if (ch == ' ')
            continue;
          if (ch == '.') {
            for (int32_t j = ell_num - width; j < ell_num; j++)
              if (!sr_es_size(&ell[j], ops[op].sizes[dim++]))
                return;
            k += 2;
            continue;
          }
          int l = sr_es_label(ch);
          if (l < 0 || !sr_es_size(&lsize[l], ops[op].sizes[dim++]))
            return;
          count[l]++;
        }
      }
      op++;
      start = i + 1;
    }
    if (op != n)
      return;
  }
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t rank = 0;
  if (arrow == eq.len) {
    for (int32_t j = 0; j < ell_num; j++)
      sizes[rank++] = ell[j];
    for (int l = 0; l < NL && rank < TS_SR_MAX_RANK; l++)
      if (count[l] == 1)
        sizes[rank++] = lsize[l];
  } else {
    for (size_t i = arrow + 2; i < eq.len; i++) {
      unsigned char ch = (unsigned char)eq.s[i];
      if (ch == ' ')
        continue;
      if (ch == '.') {
        for (int32_t j = 0; j < ell_num && rank < TS_SR_MAX_RANK; j++)
          sizes[rank++] = ell[j];
        i += 2;
        continue;
      }
      int l = sr_es_label(ch);
      if (l < 0 || count[l] == 0 || rank >= TS_SR_MAX_RANK)
        return;
      sizes[rank++] = lsize[l];
    }
  }
  int8_t dt = ops[0].dtype;
  for (uint32_t i = 1; i < n; i++)
    if (ops[i].dtype != dt)
      dt = TS_DT_NONE;
  if (!ts_dtype_is_float(dt))
    dt = TS_DT_NONE;
  const ts_sr_shape *m[NOPS];
  for (uint32_t i = 0; i < n; i++)
    m[i] = &ops[i];
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = dt;
  ts_sr_meta_from(&out, m, n);
  out.rank = rank;
  memcpy(out.sizes, sizes, sizeof(int64_t) * (size_t)rank);
  ts_sr_set(c, 0, &out);
}

/* sr_einsum_in with its scratch on the heap (no large thread-local arrays). */
static void sr_einsum(ts_sr_call *c) {
  enum { NOPS = 16, NL = 52 };
  ts_sr_shape *scratch = ts_sr_shapes_new(c, NOPS);
  if (scratch)
    sr_einsum_in(c, scratch);
  free(scratch);
}

/* ---------------------------------------------- search.c: sort, search, count */

/* A 1-d int64 tensor of n elements (-1 unknown), meta from m[0..nm). */
static void sr_long_vec(ts_sr_call *c, uint32_t out, int64_t n, const ts_sr_shape *const *m, uint32_t nm) {
  ts_sr_shape o;
  ts_sr_unknown(&o);
  o.dtype = TS_DT_INT64;
  ts_sr_meta_from(&o, m, nm);
  o.rank = 1;
  o.sizes[0] = n;
  ts_sr_contiguous(&o);
  ts_sr_set(c, out, &o);
}

/* _unique2 / unique_consecutive without dim: values 1-d (size unknown),
 * inverse in self's shape when asked (or, for _unique2, with the counts),
 * counts 1-d; what is not asked is empty. */
static void sr_unique_flat(ts_sr_call *c, uint32_t inv_at, bool inv_with_counts) {
  ts_sr_shape in;
  bool inv, cnt;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_bool(c, inv_at, &inv) || !ts_sr_bool(c, inv_at + 1, &cnt))
    return;
  if (inv_with_counts)
    inv = inv || cnt;
  const ts_sr_shape *m[1] = {&in};
  int64_t u = -1;
  sr_fresh(c, in.dtype, &u, 1, m, 1);
  if (inv) {
    ts_sr_shape o;
    ts_sr_unknown(&o);
    o.dtype = TS_DT_INT64;
    ts_sr_meta_from(&o, m, 1);
    if (in.rank >= 0) {
      o.rank = in.rank;
      memcpy(o.sizes, in.sizes, sizeof(int64_t) * (size_t)in.rank);
      ts_sr_contiguous(&o);
    }
    ts_sr_set(c, 1, &o);
  } else {
    sr_long_vec(c, 1, 0, m, 1);
  }
  sr_long_vec(c, 2, cnt ? -1 : 0, m, 1);
}

static void sr_unique2(ts_sr_call *c) { sr_unique_flat(c, 2, true); }

/* unique_dim / unique_dim_consecutive (and unique_consecutive with a dim
 * other than a 1-d tensor's 0): self's rank, dim's size unknown; inverse
 * [self.size(dim)], counts 1-d, both always. */
static void sr_unique_dim_at(ts_sr_call *c, int64_t dim) {
  ts_sr_shape in;
  int64_t d;
  if (!ts_sr_tensor(c, 0, &in) || in.rank <= 0 || !ts_sr_wrap_dim(dim, in.rank, &d))
    return;
  const ts_sr_shape *m[1] = {&in};
  ts_sr_shape o = in;
  o.sizes[d] = -1;
  sr_fresh(c, in.dtype, o.sizes, o.rank, m, 1);
  sr_long_vec(c, 1, in.sizes[d], m, 1);
  sr_long_vec(c, 2, -1, m, 1);
}

static void sr_unique_dim(ts_sr_call *c) {
  int64_t dim;
  if (ts_sr_int(c, 1, &dim))
    sr_unique_dim_at(c, dim);
}

static void sr_unique_consecutive(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t dim;
  if (ts_sr_is_none(c, 3)) {
    sr_unique_flat(c, 1, false);
    return;
  }
  if (!ts_sr_tensor(c, 0, &in) || in.rank < 0 || !ts_sr_int(c, 3, &dim))
    return;
  if (dim == 0 && in.rank == 1)
    sr_unique_flat(c, 1, false);
  else
    sr_unique_dim_at(c, dim);
}

/* searchsorted / bucketize: the values' shape (0-d for a Scalar), int64 or
 * int32 (out_int32) */
static void sr_search(ts_sr_call *c, int values_at, uint32_t out_int32_at, uint32_t nt) {
  ts_sr_shape t[2];
  bool i32;
  if (!ts_sr_bool(c, out_int32_at, &i32))
    return;
  for (uint32_t i = 0; i < nt; i++)
    if (!ts_sr_tensor(c, i == 0 ? 0 : 1, &t[i]))
      return;
  const ts_sr_shape *m[2] = {&t[0], &t[1]};
  int8_t dt = i32 ? TS_DT_INT32 : TS_DT_INT64;
  if (values_at < 0) {
    sr_fresh(c, dt, NULL, 0, m, nt);
    return;
  }
  const ts_sr_shape *v = &t[values_at];
  sr_fresh(c, dt, v->sizes, v->rank, m, nt);
}

static void sr_searchsorted_tensor(ts_sr_call *c) { sr_search(c, 1, 2, 2); }
static void sr_searchsorted_scalar(ts_sr_call *c) { sr_search(c, -1, 2, 1); }
static void sr_bucketize_tensor(ts_sr_call *c) { sr_search(c, 0, 2, 2); }

static void sr_bucketize_scalar(ts_sr_call *c) {
  ts_sr_shape b;
  bool i32;
  if (!ts_sr_tensor(c, 1, &b) || !ts_sr_bool(c, 2, &i32))
    return;
  const ts_sr_shape *m[1] = {&b};
  sr_fresh(c, i32 ? TS_DT_INT32 : TS_DT_INT64, NULL, 0, m, 1);
}

/* histc(self, bins): [bins] of self's dtype */
static void sr_histc(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t bins;
  if (!ts_sr_tensor(c, 0, &in) || !ts_sr_int(c, 1, &bins) || bins <= 0)
    return;
  const ts_sr_shape *m[1] = {&in};
  sr_fresh(c, in.dtype, &bins, 1, m, 1);
}

/* bincount(self, weights): 1-d, its length the data's; int64 counts,
 * float32 sums of float32 weights, float64 of any other (an empty self:
 * int64 zeros) */
static void sr_bincount(ts_sr_call *c) {
  ts_sr_shape in, w;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  int8_t dt = TS_DT_INT64;
  const ts_sr_shape *m[2] = {&in, &w};
  uint32_t nm = 1;
  if (!ts_sr_is_none(c, 1)) {
    if (!ts_sr_tensor(c, 1, &w) || w.dtype == TS_DT_NONE)
      return;
    dt = w.dtype == TS_DT_FLOAT32 ? TS_DT_FLOAT32 : TS_DT_FLOAT64;
    nm = 2;
    /* an empty self gives int64 zeros whatever the weights */
    if (in.rank != 1 || in.sizes[0] < 0)
      dt = TS_DT_NONE;
    else if (in.sizes[0] == 0)
      dt = TS_DT_INT64;
  }
  int64_t n = -1;
  sr_fresh(c, dt, &n, 1, m, nm);
}

/* ------------------------------------------------------------ meshgrid */

enum { SR_MAX_GRIDS = 64 };

/* meshgrid(tensors[, indexing]): as many grids as tensors, each of the
 * tensors' lengths (the first two swapped for "xy"), views of the inputs
 * (strides left unknown). */
static void sr_meshgrid_in(ts_sr_call *c, ts_sr_shape *ts, ts_sr_shape *grids) {
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

/* sr_meshgrid_in with its scratch on the heap (no large thread-local arrays). */
static void sr_meshgrid(ts_sr_call *c) {
  ts_sr_shape *scratch = ts_sr_shapes_new(c, SR_MAX_GRIDS + SR_MAX_GRIDS);
  if (scratch)
    sr_meshgrid_in(c, scratch, scratch + SR_MAX_GRIDS);
  free(scratch);
}

/* ---------------------------------------------------------------- diag */

/* The length of the offset diagonal of dims of sizes s1, s2 (-1 unknown). */
static int64_t sr_diag_len(int64_t s1, int64_t s2, int64_t off) {
  if (s1 < 0 || s2 < 0)
    return -1;
  int64_t n = off >= 0 ? (s1 < s2 - off ? s1 : s2 - off) : (s1 + off < s2 ? s1 + off : s2);
  return n > 0 ? n : 0;
}

/* diagonal(self, offset, dim1, dim2): a view; strides from self's */
static void sr_diagonal(ts_sr_call *c) {
  ts_sr_shape in, out;
  int64_t off, d1, d2;
  if (!ts_sr_tensor(c, 0, &in) || in.rank < 2 || !ts_sr_int(c, 1, &off) || !ts_sr_int(c, 2, &d1) ||
      !ts_sr_int(c, 3, &d2) || !ts_sr_wrap_dim(d1, in.rank, &d1) || !ts_sr_wrap_dim(d2, in.rank, &d2) || d1 == d2)
    return;
  out = in;
  int32_t n = 0;
  for (int32_t d = 0; d < in.rank; d++) {
    if (d == d1 || d == d2)
      continue;
    out.sizes[n] = in.sizes[d];
    out.strides[n++] = in.strides[d];
  }
  out.sizes[n] = sr_diag_len(in.sizes[d1], in.sizes[d2], off);
  out.strides[n++] = in.has_strides ? in.strides[d1] + in.strides[d2] : 0;
  out.rank = n;
  ts_sr_set(c, 0, &out);
}

/* diag_embed(self, offset, dim1, dim2): one more dim */
static void sr_diag_embed(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t off, d1, d2;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  if (in.rank < 1 || in.rank + 1 > TS_SR_MAX_RANK || !ts_sr_int(c, 1, &off) || !ts_sr_int(c, 2, &d1) ||
      !ts_sr_int(c, 3, &d2) || !ts_sr_wrap_dim(d1, in.rank + 1, &d1) || !ts_sr_wrap_dim(d2, in.rank + 1, &d2) ||
      d1 == d2 || off < -INT32_MAX || off > INT32_MAX) {
    sr_fresh(c, in.dtype, NULL, -1, m, 1);
    return;
  }
  int64_t last = in.sizes[in.rank - 1], len = last < 0 ? -1 : last + (off < 0 ? -off : off);
  int64_t sizes[TS_SR_MAX_RANK];
  int64_t lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1;
  for (int32_t d = 0, j = 0; d <= in.rank; d++)
    sizes[d] = d == lo || d == hi ? len : in.sizes[j++];
  sr_fresh(c, in.dtype, sizes, in.rank + 1, m, 1);
}

/* diag(self, diagonal): a vector's matrix, or a matrix's diagonal */
static void sr_diag(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t k;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  if (!ts_sr_int(c, 1, &k) || k < -INT32_MAX || k > INT32_MAX || (in.rank != 1 && in.rank != 2)) {
    if (in.rank < 0)
      sr_fresh(c, in.dtype, NULL, -1, m, 1);
    return;
  }
  int64_t sizes[2];
  if (in.rank == 1) {
    sizes[0] = sizes[1] = in.sizes[0] < 0 ? -1 : in.sizes[0] + (k < 0 ? -k : k);
    sr_fresh(c, in.dtype, sizes, 2, m, 1);
  } else {
    sizes[0] = sr_diag_len(in.sizes[0], in.sizes[1], k);
    sr_fresh(c, in.dtype, sizes, 1, m, 1);
  }
}

/* diagflat(self, offset): the square matrix of self's elements */
static void sr_diagflat(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t k, n = -1;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  if (in.rank >= 0 && ts_sr_int(c, 1, &k) && k > -INT32_MAX && k < INT32_MAX) {
    n = 1;
    for (int32_t d = 0; d < in.rank && n >= 0; d++)
      if (in.sizes[d] < 0 || !ts_sr_mul(n, in.sizes[d], &n))
        n = -1;
    if (n >= 0 && !ts_sr_add(n, k < 0 ? -k : k, &n))
      n = -1;
  }
  int64_t sizes[2] = {n, n};
  sr_fresh(c, in.dtype, sizes, 2, m, 1);
}

/* ------------------------------------------------- tile, repeat_interleave */

/* tile(self, dims): repeat with dims padded by ones to self's rank */
static void sr_tile(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t dims[TS_SR_MAX_RANK];
  int32_t n;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  if (in.rank < 0 || !ts_sr_int_list(c, 1, dims, &n, TS_SR_MAX_RANK)) {
    sr_fresh(c, in.dtype, NULL, -1, m, 1);
    return;
  }
  int32_t r = n > in.rank ? n : in.rank;
  int64_t sizes[TS_SR_MAX_RANK];
  for (int32_t k = 0; k < r; k++) {
    int32_t i = k - (r - in.rank), j = k - (r - n);
    int64_t have = i >= 0 ? in.sizes[i] : 1, rep = j >= 0 ? dims[j] : 1;
    if (rep < 0)
      return; /* fails at run time */
    if (have < 0 || !ts_sr_mul(have, rep, &sizes[k]))
      sizes[k] = rep == 1 ? have : -1;
  }
  sr_fresh(c, in.dtype, sizes, r, m, 1);
}

/* repeat_interleave.Tensor(repeats, output_size): 1-d, repeats' dtype */
static void sr_repeat_index(ts_sr_call *c) {
  ts_sr_shape rep;
  int64_t n = -1;
  if (!ts_sr_tensor(c, 0, &rep))
    return;
  if (!ts_sr_is_none(c, 1) && !ts_sr_int(c, 1, &n))
    n = -1;
  const ts_sr_shape *m[1] = {&rep};
  sr_fresh(c, rep.dtype, &n, 1, m, 1);
}

/* repeat_interleave.self_int / .self_Tensor (self, repeats, dim,
 * output_size): self (flattened without dim) with dim's size multiplied by
 * an int repeats, else output_size or unknown */
static void sr_repeat_interleave(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  bool by_int = strcmp(c->schema->overload, "self_int") == 0;
  int64_t reps = -1, osize = -1, d = 0;
  if (by_int && (!ts_sr_int(c, 1, &reps) || reps < 0))
    reps = -1;
  if (!ts_sr_is_none(c, 3) && !ts_sr_int(c, 3, &osize))
    osize = -1;
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t n;
  if (ts_sr_is_none(c, 2)) {
    n = 1;
    sizes[0] = -1;
    if (in.rank >= 0) {
      int64_t numel = 1;
      for (int32_t k = 0; k < in.rank && numel >= 0; k++)
        if (in.sizes[k] < 0 || !ts_sr_mul(numel, in.sizes[k], &numel))
          numel = -1;
      if (numel >= 0 && reps >= 0 && !ts_sr_mul(numel, reps, &sizes[0]))
        sizes[0] = -1;
    }
  } else {
    if (in.rank < 1 || !ts_sr_int(c, 2, &d) || !ts_sr_wrap_dim(d, in.rank, &d)) {
      sr_fresh(c, in.dtype, NULL, -1, m, 1);
      return;
    }
    n = in.rank;
    memcpy(sizes, in.sizes, sizeof(int64_t) * (size_t)n);
    if (in.sizes[d] < 0 || reps < 0 || !ts_sr_mul(in.sizes[d], reps, &sizes[d]))
      sizes[d] = -1;
  }
  if (osize >= 0)
    sizes[d] = osize;
  sr_fresh(c, in.dtype, sizes, n, m, 1);
}

/* ------------------------------------------------------ one_hot, cross */

/* one_hot(self, num_classes): self's sizes and num_classes, int64 */
static void sr_one_hot(ts_sr_call *c) {
  ts_sr_shape in;
  int64_t nc;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  if (in.rank < 0 || in.rank + 1 > TS_SR_MAX_RANK) {
    sr_fresh(c, TS_DT_INT64, NULL, -1, m, 1);
    return;
  }
  int64_t sizes[TS_SR_MAX_RANK];
  memcpy(sizes, in.sizes, sizeof(int64_t) * (size_t)in.rank);
  sizes[in.rank] = ts_sr_int(c, 1, &nc) && nc >= 0 ? nc : -1;
  sr_fresh(c, TS_DT_INT64, sizes, in.rank + 1, m, 1);
}

/* cross(self, other, dim), linalg_cross(self, other, dim): the broadcast
 * shape, self's dtype */
static void sr_cross(ts_sr_call *c) {
  ts_sr_shape a, b;
  if (!ts_sr_tensor(c, 0, &a) || !ts_sr_tensor(c, 1, &b))
    return;
  const ts_sr_shape *m[2] = {&a, &b};
  ts_sr_shape o = a;
  if (a.rank >= 0 && b.rank >= 0 && a.rank != b.rank)
    return; /* fails at run time */
  if (!ts_sr_broadcast(&o, &b))
    return;
  sr_fresh(c, a.dtype, o.sizes, o.rank, m, 2);
}

/* --------------------------------------------------------------- scans */

/* cummax / cummin (self, dim): values like self, int64 indices */
static void sr_cumext(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in))
    return;
  const ts_sr_shape *m[1] = {&in};
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = in.dtype;
  ts_sr_meta_from(&out, m, 1);
  if (in.rank >= 0) {
    out.rank = in.rank;
    memcpy(out.sizes, in.sizes, sizeof(int64_t) * (size_t)in.rank);
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  out.dtype = TS_DT_INT64;
  ts_sr_set(c, 1, &out);
}

const ts_sr_def ts_sr_rules_tensor[] = {
    {"aten::index_put_", sr_self},
    {"aten::index_put_.hacked_twin", sr_self},
    {"aten::index_put", sr_copy_of_self},
    {"aten::index_put.hacked_twin", sr_copy_of_self},
    {"aten::scatter_.src", sr_self},
    {"aten::scatter_.value", sr_self},
    {"aten::scatter_.reduce", sr_self},
    {"aten::scatter_.value_reduce", sr_self},
    {"aten::scatter_add_", sr_self},
    {"aten::scatter_reduce_.two", sr_self},
    {"aten::index_add_", sr_self},
    {"aten::index_copy_", sr_self},
    {"aten::index_fill_.int_Scalar", sr_self},
    {"aten::index_fill_.int_Tensor", sr_self},
    {"aten::masked_scatter_", sr_self},
    {"aten::scatter.src", sr_copy_of_self},
    {"aten::scatter.value", sr_copy_of_self},
    {"aten::scatter.reduce", sr_copy_of_self},
    {"aten::scatter.value_reduce", sr_copy_of_self},
    {"aten::scatter_add", sr_copy_of_self},
    {"aten::scatter_reduce.two", sr_copy_of_self},
    {"aten::index_add", sr_copy_of_self},
    {"aten::index_copy", sr_copy_of_self},
    {"aten::index_fill.int_Scalar", sr_copy_of_self},
    {"aten::index_fill.int_Tensor", sr_copy_of_self},
    {"aten::masked_scatter", sr_masked_scatter},
    {"aten::einsum", sr_einsum},
    {"aten::_unique2", sr_unique2},
    {"aten::unique_consecutive", sr_unique_consecutive},
    {"aten::unique_dim", sr_unique_dim},
    {"aten::unique_dim_consecutive", sr_unique_dim},
    {"aten::searchsorted.Tensor", sr_searchsorted_tensor},
    {"aten::searchsorted.Scalar", sr_searchsorted_scalar},
    {"aten::bucketize.Tensor", sr_bucketize_tensor},
    {"aten::bucketize.Scalar", sr_bucketize_scalar},
    {"aten::histc", sr_histc},
    {"aten::bincount", sr_bincount},
    {"aten::msort", sr_contig_of_self},
    {"aten::meshgrid", sr_meshgrid},
    {"aten::meshgrid.indexing", sr_meshgrid},
    {"aten::take", sr_take},
    {"aten::take_along_dim", sr_take_along_dim},
    {"aten::copy", sr_copy_of_self},
    {"aten::tril", sr_contig_of_self},
    {"aten::triu", sr_contig_of_self},
    {"aten::diagonal", sr_diagonal},
    {"aten::diag", sr_diag},
    {"aten::diag_embed", sr_diag_embed},
    {"aten::diagflat", sr_diagflat},
    {"aten::tile", sr_tile},
    {"aten::repeat_interleave.Tensor", sr_repeat_index},
    {"aten::repeat_interleave.self_Tensor", sr_repeat_interleave},
    {"aten::repeat_interleave.self_int", sr_repeat_interleave},
    {"aten::one_hot", sr_one_hot},
    {"aten::cross", sr_cross},
    {"aten::linalg_cross", sr_cross},
    {"aten::cummax", sr_cumext},
    {"aten::cummin", sr_cumext},
    {"aten::logcumsumexp", sr_contig_of_self},
    {NULL, NULL},
};
