/* runtime/kernels/iter.c: the elementwise iteration engine (see iter.h). */
#include "iter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "[2, 3]" into buf. */
static void it_shape_str(char *buf, size_t cap, int32_t ndim, const int64_t *shape) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int32_t i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

bool ts_rt_iter_broadcast(ts_rt_ctx *c, int32_t n, const int32_t *ndims, const int64_t *const *shapes,
                          int32_t *out_ndim, int64_t *out) {
  int32_t nd = 0;
  int64_t cur[TS_RT_MAX_DIMS];
  for (int32_t k = 0; k < n; k++) {
    int32_t nb = ndims[k];
    const int64_t *b = shapes[k];
    int32_t m = nd > nb ? nd : nb;
    if (m > TS_RT_MAX_DIMS) return ts_rt_fail(c, "broadcast shape has more than %d dimensions", TS_RT_MAX_DIMS);
    int64_t res[TS_RT_MAX_DIMS];
    for (int32_t i = m - 1; i >= 0; i--) {
      int32_t off = m - 1 - i;
      int64_t sa = nd - 1 - off >= 0 ? cur[nd - 1 - off] : 1;
      int64_t sb = nb - 1 - off >= 0 ? b[nb - 1 - off] : 1;
      if (sa != sb && sa != 1 && sb != 1)
        return ts_rt_fail(c, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                             "dimension %d", (long long)sa, (long long)sb, (int)i);
      res[i] = sa == 1 ? sb : sa;
    }
    memcpy(cur, res, sizeof(int64_t) * (size_t)m);
    nd = m;
  }
  *out_ndim = nd;
  memcpy(out, cur, sizeof(int64_t) * (size_t)nd);
  return true;
}

/* Byte strides of t seen in the broadcast shape (0 where t is broadcast). */
static void it_bcast_strides(const ts_rt_tensor *t, int32_t nd, const int64_t *shape, int64_t *str) {
  int64_t es = (int64_t)ts_dtype_size((ts_dtype)t->dtype);
  for (int32_t i = 0; i < nd; i++) {
    int32_t ti = t->ndim - nd + i;
    if (ti < 0 || (t->sizes[ti] == 1 && shape[i] != 1)) str[i] = 0;
    else str[i] = t->strides[ti] * es;
  }
}

/* Gives an out= tensor the shape `shape` (contiguous), as ATen's
 * resize_output. */
static bool it_resize(ts_rt_ctx *c, ts_rt_tensor *t, int32_t nd, const int64_t *shape) {
  return ts_rt_tensor_resize_out(c, t, nd, shape, NULL);
}

/* TensorIterator's dimension order: which of two dimensions should be inner
 * (1: swap so d1 goes inner, -1: keep, 0: no opinion). */
static int it_should_swap(int32_t nops, const bool *use, int64_t (*str)[TS_RT_MAX_DIMS], const int64_t *shape,
                          int32_t d0, int32_t d1) {
  for (int32_t k = 0; k < nops; k++) {
    if (!use[k]) continue;
    int64_t s0 = str[k][d0], s1 = str[k][d1];
    if (s0 == 0 || s1 == 0) continue;
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    if (shape[d0] > shape[d1]) return 1;
  }
  return 0;
}

bool ts_rt_iter_build(ts_rt_ctx *c, ts_rt_iter *it, ts_rt_tensor **out, ts_dtype out_dt, unsigned flags,
                      const ts_rt_tensor *const *in, int32_t nin) {
  if (nin < 0 || nin + 1 > TS_RT_ITER_MAX_OPS) return ts_rt_fail(c, "too many operands for the iterator");
  /* The pointwise formulas compute over float, double and int64 only: a
   * complex operand is refused here rather than read as its real part. */
  bool cx = ts_dtype_is_complex(out_dt) || (*out && ts_dtype_is_complex((ts_dtype)(*out)->dtype));
  for (int32_t k = 0; k < nin && !cx; k++) cx = ts_dtype_is_complex((ts_dtype)in[k]->dtype);
  if (cx) return ts_rt_fail(c, "tsaot's pointwise kernels do not support complex tensors (ComplexFloat, ComplexDouble)");
  /* A given output takes part in the shape unless it may be resized, as in
   * TensorIterator (fill_ writes a 0-d value over all of self). */
  int32_t ndims[TS_RT_ITER_MAX_OPS];
  const int64_t *shapes[TS_RT_ITER_MAX_OPS];
  int32_t ns = 0;
  if (*out && !(flags & TS_RT_ITER_RESIZE_OUT)) {
    ndims[ns] = (*out)->ndim;
    shapes[ns++] = (*out)->sizes;
  }
  for (int32_t k = 0; k < nin; k++) {
    ndims[ns] = in[k]->ndim;
    shapes[ns++] = in[k]->sizes;
  }
  int32_t nd;
  int64_t shape[TS_RT_MAX_DIMS];
  if (!ts_rt_iter_broadcast(c, ns, ndims, shapes, &nd, shape)) return false;

  ts_rt_tensor *o = *out;
  bool use[TS_RT_ITER_MAX_OPS];
  use[0] = o != NULL;
  if (o) {
    bool same = o->ndim == nd && memcmp(o->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0;
    if (!same) {
      if (!(flags & TS_RT_ITER_RESIZE_OUT)) {
        char a[256], b[256];
        it_shape_str(a, sizeof a, o->ndim, o->sizes);
        it_shape_str(b, sizeof b, nd, shape);
        return ts_rt_fail(c, "output with shape %s doesn't match the broadcast shape %s", a, b);
      }
      if (!it_resize(c, o, nd, shape)) return false;
      use[0] = false;
    }
    for (int32_t i = 0; i < o->ndim; i++)
      if (o->sizes[i] > 1 && o->strides[i] == 0)
        return ts_rt_fail(c, "unsupported operation: more than one element of the written-to tensor refers to a "
                             "single memory location. Please clone() the tensor before performing the operation.");
  }

  int64_t str[TS_RT_ITER_MAX_OPS][TS_RT_MAX_DIMS];
  for (int32_t k = 0; k < nin; k++) {
    it_bcast_strides(in[k], nd, shape, str[1 + k]);
    use[1 + k] = true;
  }
  if (o) it_bcast_strides(o, nd, shape, str[0]);

  /* perm[i]: the tensor dimension at iteration position i (0 innermost). */
  int32_t perm[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  bool all_contig = !o;
  for (int32_t k = 0; k < nin && all_contig; k++)
    all_contig = in[k]->ndim == nd && memcmp(in[k]->sizes, shape, sizeof(int64_t) * (size_t)nd) == 0 &&
                 ts_rt_tensor_is_contiguous(in[k]);
  if (!all_contig) {
    for (int32_t i = 1; i < nd; i++) {
      int32_t d1 = i;
      for (int32_t d0 = i - 1; d0 >= 0; d0--) {
        int cmp = it_should_swap(nin + 1, use, str, shape, perm[d0], perm[d1]);
        if (cmp > 0) {
          int32_t t = perm[d0];
          perm[d0] = perm[d1];
          perm[d1] = t;
          d1 = d0;
        } else if (cmp < 0) {
          break;
        }
      }
    }
  }

  if (!o) {
    int64_t ostr[TS_RT_MAX_DIMS];
    int64_t acc = 1;
    for (int32_t i = 0; i < nd; i++) {
      ostr[perm[i]] = acc;
      acc *= shape[perm[i]] > 1 ? shape[perm[i]] : 1;
    }
    o = ts_rt_tensor_new(c, out_dt, nd, shape, false);
    if (!o) return false;
    if (!all_contig) memcpy(o->strides, ostr, sizeof(int64_t) * (size_t)nd);
    it_bcast_strides(o, nd, shape, str[0]);
    *out = o;
  }

  it->nops = nin + 1;
  it->out_ndim = nd;
  memcpy(it->out_shape, shape, sizeof(int64_t) * (size_t)nd);
  it->data[0] = (char *)ts_rt_tensor_data(o);
  for (int32_t k = 0; k < nin; k++) it->data[1 + k] = (char *)ts_rt_tensor_data(in[k]);
  it->numel = 1;
  for (int32_t i = 0; i < nd; i++) it->numel *= shape[i];

  /* Lay the dimensions out innermost first, then merge neighbours that step
   * through memory as one. */
  if (nd == 0) {
    it->ndim = 1;
    it->shape[0] = 1;
    for (int32_t k = 0; k < it->nops; k++) it->strides[k][0] = 0;
    return true;
  }
  for (int32_t i = 0; i < nd; i++) {
    it->shape[i] = shape[perm[i]];
    for (int32_t k = 0; k < it->nops; k++) it->strides[k][i] = str[k][perm[i]];
  }
  int32_t prev = 0;
  for (int32_t d = 1; d < nd; d++) {
    bool can = it->shape[prev] == 1 || it->shape[d] == 1;
    if (!can) {
      can = true;
      for (int32_t k = 0; k < it->nops && can; k++)
        can = it->shape[prev] * it->strides[k][prev] == it->strides[k][d];
    }
    if (can) {
      if (it->shape[prev] == 1)
        for (int32_t k = 0; k < it->nops; k++) it->strides[k][prev] = it->strides[k][d];
      it->shape[prev] *= it->shape[d];
    } else {
      prev++;
      if (prev != d) {
        for (int32_t k = 0; k < it->nops; k++) it->strides[k][prev] = it->strides[k][d];
        it->shape[prev] = it->shape[d];
      }
    }
  }
  it->ndim = prev + 1;
  return true;
}

typedef struct it_run_arg {
  const ts_rt_iter *it;
  ts_rt_iter_loop loop;
  void *arg;
} it_run_arg;

/* Elements [begin, end) in iteration order, one inner run at a time. */
static void it_range(void *p, int64_t begin, int64_t end) {
  const it_run_arg *r = p;
  const ts_rt_iter *it = r->it;
  int32_t nd = it->ndim, nops = it->nops;
  int64_t idx[TS_RT_MAX_DIMS];
  int64_t rem = begin;
  for (int32_t d = 0; d < nd; d++) {
    idx[d] = rem % it->shape[d];
    rem /= it->shape[d];
  }
  char *ptr[TS_RT_ITER_MAX_OPS];
  int64_t inner[TS_RT_ITER_MAX_OPS];
  for (int32_t k = 0; k < nops; k++) inner[k] = it->strides[k][0];
  int64_t cur = begin;
  while (cur < end) {
    for (int32_t k = 0; k < nops; k++) {
      char *q = it->data[k];
      for (int32_t d = 0; d < nd; d++) q += idx[d] * it->strides[k][d];
      ptr[k] = q;
    }
    int64_t n = it->shape[0] - idx[0];
    if (n > end - cur) n = end - cur;
    r->loop(r->arg, ptr, inner, n);
    cur += n;
    idx[0] += n;
    for (int32_t d = 0; d < nd - 1 && idx[d] == it->shape[d]; d++) {
      idx[d] = 0;
      idx[d + 1]++;
    }
  }
}

void ts_rt_iter_run(ts_rt_ctx *c, const ts_rt_iter *it, int64_t grain, ts_rt_iter_loop loop, void *arg) {
  if (it->numel == 0) return;
  it_run_arg r = {it, loop, arg};
  if (grain < 1) grain = 1;
  if (it->numel < 2 * grain) it_range(&r, 0, it->numel);
  else ts_rt_parallel_for(c, it->numel, grain, it_range, &r);
}
