/* runtime/kernels/list.c: TorchScript's list operations (register_prim_ops
 * and register_ops_utils in PyTorch): indexing, mutation (shared by every
 * reference to the list), concatenation, repetition, slicing, search,
 * sorting, comparison, and min/max/sum/any/all over lists of numbers.
 *
 * A new list keeps the element type: the node's output type when the kernel
 * runs inside a graph, else the input list's. */
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "runtime.h"

/* The element type for a new list: the node's declared output type, or
 * `fallback`. */
static const ts_type *ls_out_elem(const ts_rt_call *call, const ts_type *fallback) {
  const ts_node *n = call->node;
  if (n && n->noutputs > 0 && n->outputs[0]->type) {
    const ts_type *t = n->outputs[0]->type;
    if (t->kind == TS_TY_OPTIONAL && t->n == 1) t = t->elems[0];
    if (t->kind == TS_TY_LIST && t->n == 1) return t->elems[0];
  }
  return fallback;
}

static ts_iv ls_iv_list(ts_rt_list *l) {
  ts_iv v = {.u.l = l, .tag = TS_IV_LIST};
  return v;
}

static ts_iv ls_iv_str(ts_rt_str *s) {
  ts_iv v = {.u.s = s, .tag = TS_IV_STR};
  return v;
}

/* Appends a retained copy of v. */
static bool ls_push(ts_rt_ctx *c, ts_rt_list *l, ts_iv v) {
  ts_iv_retain(v);
  return ts_rt_list_append(c, l, v);
}

/* Python's index normalisation; false with PyTorch's message if out of
 * range. */
static bool ls_index(ts_rt_ctx *c, int64_t idx, uint32_t n, uint32_t *out) {
  int64_t i = idx < 0 ? idx + (int64_t)n : idx;
  if (i < 0 || i >= (int64_t)n) return ts_rt_fail(c, "list index out of range");
  *out = (uint32_t)i;
  return true;
}

/* PySlice_Unpack + PySlice_AdjustIndices, as PyTorch's
 * slice_indices_adjust: None bounds come as INT64_MAX. Returns the count. */
static bool ls_slice_adjust(ts_rt_ctx *c, int64_t length, int64_t *start, int64_t *stop, int64_t step,
                            int64_t *count) {
  if (step == 0) return ts_rt_fail(c, "List slice should have non-zero step");
  if (step < -INT64_MAX) return ts_rt_fail(c, "List slice step is out of bounds");
  if (*start == INT64_MAX) *start = step < 0 ? INT64_MAX : 0;
  if (*stop == INT64_MAX) *stop = step < 0 ? INT64_MIN : INT64_MAX;
  if (*start < 0) {
    *start += length;
    if (*start < 0) *start = step < 0 ? -1 : 0;
  } else if (*start >= length) {
    *start = step < 0 ? length - 1 : length;
  }
  if (*stop < 0) {
    *stop += length;
    if (*stop < 0) *stop = step < 0 ? -1 : 0;
  } else if (*stop >= length) {
    *stop = step < 0 ? length - 1 : length;
  }
  *count = 0;
  if (step < 0) {
    if (*stop < *start) *count = (*start - *stop - 1) / (-step) + 1;
  } else if (*start < *stop) {
    *count = (*stop - *start - 1) / step + 1;
  }
  return true;
}

/* Reads the (start, end, step) arguments of a slice op at in[1..3]. */
static bool ls_slice_args(ts_rt_ctx *c, const ts_rt_call *call, int64_t length, int64_t *start, int64_t *step,
                          int64_t *count) {
  int64_t end = INT64_MAX;
  bool has_start = false, has_end = false;
  *start = INT64_MAX;
  if (!ts_rt_arg_opt_int(c, call, 1, start, &has_start) || !ts_rt_arg_opt_int(c, call, 2, &end, &has_end) ||
      !ts_rt_arg_int(c, call, 3, step))
    return false;
  if (!has_start) *start = INT64_MAX;
  if (!has_end) end = INT64_MAX;
  return ls_slice_adjust(c, length, start, &end, *step, count);
}

/* ------------------------------------------------------------ comparisons */

static bool ls_is_num(ts_iv v) { return v.tag == TS_IV_INT || v.tag == TS_IV_DOUBLE || v.tag == TS_IV_BOOL; }

static double ls_num_d(ts_iv v) {
  return v.tag == TS_IV_DOUBLE ? v.u.d : v.tag == TS_IV_BOOL ? (double)v.u.b : (double)v.u.i;
}

static int ls_str_cmp(const ts_rt_str *a, const ts_rt_str *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int r = memcmp(a->data, b->data, n);
  if (r != 0) return r < 0 ? -1 : 1;
  return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

/* One element of a one-element tensor as a double (Tensor.lt/eq then
 * is_nonzero, for the element counts those accept). */
static bool ls_tensor_value(ts_rt_ctx *c, const ts_rt_tensor *t, double *out) {
  int64_t n = ts_rt_tensor_numel(t);
  if (n == 0) return ts_rt_fail(c, "Boolean value of Tensor with no values is ambiguous");
  if (n > 1) return ts_rt_fail(c, "Boolean value of Tensor with more than one value is ambiguous");
  *out = ts_rt_load_f64(ts_rt_tensor_data(t), (ts_dtype)t->dtype);
  return true;
}

/* Three-way comparison for sorting and min/max: numbers, bools, strings,
 * tuples of those (lexicographic) and one-element tensors. */
static bool ls_compare(ts_rt_ctx *c, ts_iv a, ts_iv b, int *out) {
  if (a.tag == TS_IV_INT && b.tag == TS_IV_INT) {
    *out = a.u.i < b.u.i ? -1 : a.u.i > b.u.i ? 1 : 0;
    return true;
  }
  if (ls_is_num(a) && ls_is_num(b)) {
    double x = ls_num_d(a), y = ls_num_d(b);
    *out = x < y ? -1 : x > y ? 1 : 0;
    return true;
  }
  if (a.tag == TS_IV_STR && b.tag == TS_IV_STR) {
    *out = ls_str_cmp(a.u.s, b.u.s);
    return true;
  }
  if (a.tag == TS_IV_TUPLE && b.tag == TS_IV_TUPLE) {
    uint32_t n = a.u.tup->n < b.u.tup->n ? a.u.tup->n : b.u.tup->n;
    for (uint32_t i = 0; i < n; i++) {
      if (!ls_compare(c, a.u.tup->items[i], b.u.tup->items[i], out)) return false;
      if (*out != 0) return true;
    }
    *out = a.u.tup->n < b.u.tup->n ? -1 : a.u.tup->n > b.u.tup->n ? 1 : 0;
    return true;
  }
  if (a.tag == TS_IV_TENSOR && b.tag == TS_IV_TENSOR) {
    double x = 0, y = 0;
    if (!ls_tensor_value(c, a.u.t, &x) || !ls_tensor_value(c, b.u.t, &y)) return false;
    *out = x < y ? -1 : x > y ? 1 : 0;
    return true;
  }
  return ts_rt_fail(c, "'<' not supported between instances of '%s' and '%s'", ts_iv_tag_name(a), ts_iv_tag_name(b));
}

/* Element equality of typed lists (C++ == on the element type: NaN differs
 * from itself). */
static bool ls_elem_eq(ts_iv a, ts_iv b) {
  if (ls_is_num(a) && ls_is_num(b)) {
    if (a.tag != TS_IV_DOUBLE && b.tag != TS_IV_DOUBLE) {
      int64_t x = a.tag == TS_IV_BOOL ? a.u.b : a.u.i, y = b.tag == TS_IV_BOOL ? b.u.b : b.u.i;
      return x == y;
    }
    return ls_num_d(a) == ls_num_d(b);
  }
  if (a.tag == TS_IV_STR && b.tag == TS_IV_STR) return ls_str_cmp(a.u.s, b.u.s) == 0;
  return ts_iv_equal(a, b);
}

/* ------------------------------------------------------------------ ops */

static bool ls_len(ts_rt_ctx *c, ts_rt_call *call) {
  if (!ts_rt_arg_check(c, call, 0)) return false;
  ts_iv v = call->in[0];
  if (v.tag == TS_IV_LIST) call->out[0] = ts_iv_int(v.u.l->n);
  else if (v.tag == TS_IV_TUPLE) call->out[0] = ts_iv_int(v.u.tup->n);
  else return ts_rt_arg_bad(c, call, 0, "List");
  return true;
}

static bool ls_getitem(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  int64_t idx = 0;
  uint32_t i = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_int(c, call, 1, &idx) || !ls_index(c, idx, l->n, &i)) return false;
  ts_iv_retain(l->items[i]);
  call->out[0] = l->items[i];
  return true;
}

/* l[idx] = el; returns l. */
static bool ls_setitem(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  int64_t idx = 0;
  uint32_t i = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_int(c, call, 1, &idx) || !ts_rt_arg_check(c, call, 2) ||
      !ls_index(c, idx, l->n, &i))
    return false;
  ts_iv old = l->items[i];
  ts_iv_retain(call->in[2]);
  l->items[i] = call->in[2];
  ts_iv_release(old);
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

static bool ls_append(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_check(c, call, 1) || !ls_push(c, l, call->in[1])) return false;
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

/* Appends every item of `src` to `dst` (src may be dst: its length is read
 * once). */
static bool ls_extend_from(ts_rt_ctx *c, ts_rt_list *dst, const ts_rt_list *src) {
  uint32_t n = src->n;
  for (uint32_t i = 0; i < n; i++)
    if (!ls_push(c, dst, src->items[i])) return false;
  return true;
}

static bool ls_extend(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *a = NULL, *b = NULL;
  return ts_rt_arg_list(c, call, 0, &a) && ts_rt_arg_list(c, call, 1, &b) && ls_extend_from(c, a, b);
}

/* insert(idx, el): clamped like Python's list.insert. */
static bool ls_insert(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  int64_t idx = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_int(c, call, 1, &idx) || !ts_rt_arg_check(c, call, 2)) return false;
  int64_t n = l->n;
  int64_t pos = idx < 0 ? idx + n : idx;
  if (pos < 0) pos = 0;
  if (pos > n) pos = n;
  if (!ls_push(c, l, call->in[2])) return false;
  ts_iv v = l->items[n];
  memmove(&l->items[pos + 1], &l->items[pos], (size_t)(n - pos) * sizeof(ts_iv));
  l->items[pos] = v;
  return true;
}

/* Removes item i and hands its reference to *out. */
static void ls_take(ts_rt_list *l, uint32_t i, ts_iv *out) {
  *out = l->items[i];
  memmove(&l->items[i], &l->items[i + 1], (size_t)(l->n - i - 1) * sizeof(ts_iv));
  l->n--;
}

static bool ls_pop_impl(ts_rt_ctx *c, ts_rt_call *call, const char *empty_msg, ts_iv *out) {
  ts_rt_list *l = NULL;
  int64_t idx = 0;
  uint32_t i = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_int(c, call, 1, &idx)) return false;
  if (l->n == 0) return ts_rt_fail(c, "%s", empty_msg);
  if (!ls_index(c, idx, l->n, &i)) return false;
  ls_take(l, i, out);
  return true;
}

static bool ls_pop(ts_rt_ctx *c, ts_rt_call *call) {
  return ls_pop_impl(c, call, "pop from empty list", &call->out[0]);
}

static bool ls_delete(ts_rt_ctx *c, ts_rt_call *call) {
  ts_iv v = ts_iv_none();
  if (!ls_pop_impl(c, call, "pop index out of range", &v)) return false;
  ts_iv_release(v);
  return true;
}

/* A new list (element type from the node, else `src`'s) with src's items. */
static ts_rt_list *ls_copy(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_list *src, uint32_t cap) {
  ts_rt_list *r = ts_rt_list_new(c, ls_out_elem(call, src->elem), cap);
  if (!r) return NULL;
  if (!ls_extend_from(c, r, src)) {
    ts_iv_release(ls_iv_list(r));
    return NULL;
  }
  return r;
}

/* list(l) / l.copy(). */
static bool ls_list_copy(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  ts_rt_list *r = ls_copy(c, call, l, l->n);
  if (!r) return false;
  call->out[0] = ls_iv_list(r);
  return true;
}

/* a + b: a new list. */
static bool ls_add(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *a = NULL, *b = NULL;
  if (!ts_rt_arg_list(c, call, 0, &a) || !ts_rt_arg_list(c, call, 1, &b)) return false;
  if ((uint64_t)a->n + b->n > UINT32_MAX) return ts_rt_oom(c);
  ts_rt_list *r = ls_copy(c, call, a, a->n + b->n);
  if (!r) return false;
  if (!ls_extend_from(c, r, b)) {
    ts_iv_release(ls_iv_list(r));
    return false;
  }
  call->out[0] = ls_iv_list(r);
  return true;
}

/* a += b: extends a and returns it. */
static bool ls_add_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *a = NULL, *b = NULL;
  if (!ts_rt_arg_list(c, call, 0, &a) || !ts_rt_arg_list(c, call, 1, &b) || !ls_extend_from(c, a, b)) return false;
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

/* l * n, a new list; n <= 0 gives []. */
static bool ls_mul_new(ts_rt_ctx *c, ts_rt_call *call, uint32_t li, uint32_t ni) {
  ts_rt_list *l = NULL;
  int64_t n = 0;
  if (!ts_rt_arg_list(c, call, li, &l) || !ts_rt_arg_int(c, call, ni, &n)) return false;
  /* PyTorch reserves size * n elements: a negative n fails there */
  if (n < 0 && l->n > 0) return ts_rt_fail(c, "vector::reserve");
  if (n < 0) n = 0;
  if (l->n > 0 && (uint64_t)n > UINT32_MAX / l->n) return ts_rt_oom(c);
  ts_rt_list *r = ts_rt_list_new(c, ls_out_elem(call, l->elem), (uint32_t)((uint64_t)n * l->n));
  if (!r) return false;
  for (int64_t k = 0; k < n; k++) {
    if (!ls_extend_from(c, r, l)) {
      ts_iv_release(ls_iv_list(r));
      return false;
    }
  }
  call->out[0] = ls_iv_list(r);
  return true;
}

static bool ls_mul_left(ts_rt_ctx *c, ts_rt_call *call) { return ls_mul_new(c, call, 0, 1); }
static bool ls_mul_right(ts_rt_ctx *c, ts_rt_call *call) { return ls_mul_new(c, call, 1, 0); }

static void ls_clear(ts_rt_list *l) {
  while (l->n > 0) {
    l->n--;
    ts_iv_release(l->items[l->n]);
  }
}

/* l *= n: repeats in place, returns l. */
static bool ls_mul_(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  int64_t n = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_int(c, call, 1, &n)) return false;
  if (n <= 0) {
    ls_clear(l);
  } else if (n > 1) {
    uint32_t size = l->n;
    if (size > 0 && (uint64_t)n > UINT32_MAX / size) return ts_rt_oom(c);
    for (int64_t k = 1; k < n; k++)
      for (uint32_t j = 0; j < size; j++)
        if (!ls_push(c, l, l->items[j])) return false;
  }
  ts_iv_retain(call->in[0]);
  call->out[0] = call->in[0];
  return true;
}

static bool ls_slice(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  int64_t start = 0, step = 1, count = 0;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ls_slice_args(c, call, l->n, &start, &step, &count)) return false;
  ts_rt_list *r = ts_rt_list_new(c, ls_out_elem(call, l->elem), (uint32_t)count);
  if (!r) return false;
  for (int64_t k = 0, i = start; k < count; k++, i += step) {
    if (!ls_push(c, r, l->items[i])) {
      ts_iv_release(ls_iv_list(r));
      return false;
    }
  }
  call->out[0] = ls_iv_list(r);
  return true;
}

static bool ls_contains(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_check(c, call, 1)) return false;
  bool found = false;
  for (uint32_t i = 0; i < l->n && !found; i++) found = ls_elem_eq(l->items[i], call->in[1]);
  call->out[0] = ts_iv_bool(found);
  return true;
}

/* l.index(el): the first position, or "'el' is not in list". */
static bool ls_index_of(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_check(c, call, 1)) return false;
  for (uint32_t i = 0; i < l->n; i++) {
    bool eq = false;
    ts_iv x = l->items[i], y = call->in[1];
    if (x.tag == TS_IV_TENSOR && y.tag == TS_IV_TENSOR) {
      /* Tensor.eq(...).is_nonzero(), for the one-element tensors it accepts */
      double u = 0, v = 0;
      if (!ls_tensor_value(c, y.u.t, &u) || !ls_tensor_value(c, x.u.t, &v)) return false;
      eq = u == v;
    } else {
      eq = ls_elem_eq(x, y);
    }
    if (eq) {
      call->out[0] = ts_iv_int(i);
      return true;
    }
  }
  ts_buf b = {0};
  ts_iv_str(&b, call->in[1]);
  ts_rt_fail(c, "'%s' is not in list", b.data ? b.data : "");
  ts_buf_free(&b);
  return false;
}

/* a == b for typed lists. Tensor lists compare elementwise with
 * Tensor.eq(...).is_nonzero(). */
static bool ls_equal_lists(ts_rt_ctx *c, const ts_rt_list *a, const ts_rt_list *b, bool *eq) {
  *eq = false;
  if (a->n != b->n) return true;
  for (uint32_t i = 0; i < a->n; i++) {
    ts_iv x = a->items[i], y = b->items[i];
    if (x.tag == TS_IV_TENSOR && y.tag == TS_IV_TENSOR) {
      double u = 0, v = 0;
      if (!ls_tensor_value(c, x.u.t, &u) || !ls_tensor_value(c, y.u.t, &v)) return false;
      if (u != v) return true;
    } else if (!ls_elem_eq(x, y)) {
      return true;
    }
  }
  *eq = true;
  return true;
}

static bool ls_eq_impl(ts_rt_ctx *c, ts_rt_call *call, bool negate) {
  ts_rt_list *a = NULL, *b = NULL;
  bool eq = false;
  if (!ts_rt_arg_list(c, call, 0, &a) || !ts_rt_arg_list(c, call, 1, &b) || !ls_equal_lists(c, a, b, &eq)) return false;
  call->out[0] = ts_iv_bool(eq != negate);
  return true;
}

static bool ls_eq(ts_rt_ctx *c, ts_rt_call *call) { return ls_eq_impl(c, call, false); }
static bool ls_ne(ts_rt_ctx *c, ts_rt_call *call) { return ls_eq_impl(c, call, true); }

/* Stable merge sort of items[0..n) (descending when `reverse`). */
static bool ls_sort_items(ts_rt_ctx *c, ts_iv *items, uint32_t n, bool reverse) {
  if (n < 2) return true;
  ts_iv *tmp = ts_rt_malloc((size_t)n * sizeof(ts_iv));
  if (!tmp) return ts_rt_oom(c);
  for (uint64_t width = 1; width < n; width *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * width) {
      uint64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      uint64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        int cmp = 0;
        if (!ls_compare(c, items[j], items[i], &cmp)) {
          ts_rt_free(tmp);
          return false;
        }
        /* take from the right run only when strictly before the left item */
        bool right_first = reverse ? cmp > 0 : cmp < 0;
        tmp[k++] = right_first ? items[j++] : items[i++];
      }
      while (i < mid) tmp[k++] = items[i++];
      while (j < hi) tmp[k++] = items[j++];
      memcpy(&items[lo], &tmp[lo], (size_t)(hi - lo) * sizeof(ts_iv));
    }
  }
  ts_rt_free(tmp);
  return true;
}

static bool ls_sort(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  bool reverse = false;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_bool(c, call, 1, &reverse)) return false;
  /* sort a copy of the order, so that a failed comparison leaves l intact */
  if (l->n < 2) return true;
  ts_iv *items = ts_rt_malloc((size_t)l->n * sizeof(ts_iv));
  if (!items) return ts_rt_oom(c);
  memcpy(items, l->items, (size_t)l->n * sizeof(ts_iv));
  bool ok = ls_sort_items(c, items, l->n, reverse);
  if (ok) memcpy(l->items, items, (size_t)l->n * sizeof(ts_iv));
  ts_rt_free(items);
  return ok;
}

static bool ls_sorted(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  ts_rt_list *r = ls_copy(c, call, l, l->n);
  if (!r) return false;
  if (!ls_sort_items(c, r->items, r->n, false)) {
    ts_iv_release(ls_iv_list(r));
    return false;
  }
  call->out[0] = ls_iv_list(r);
  return true;
}

/* prim::min/max of two lists: lexicographic, returning one of the inputs
 * itself (as PyTorch's minList/maxList, which pop r first). */
static bool ls_minmax_lists(ts_rt_ctx *c, ts_rt_call *call, bool is_max) {
  ts_rt_list *l = NULL, *r = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l) || !ts_rt_arg_list(c, call, 1, &r)) return false;
  const ts_rt_list *a = r, *b = l;
  uint32_t n = a->n < b->n ? a->n : b->n;
  ts_iv pick = call->in[0];
  bool decided = false;
  for (uint32_t i = 0; i < n && !decided; i++) {
    if (ls_elem_eq(a->items[i], b->items[i])) continue;
    int cmp = 0;
    if (!ls_compare(c, a->items[i], b->items[i], &cmp)) return false;
    pick = (is_max ? cmp > 0 : cmp < 0) ? call->in[1] : call->in[0];
    decided = true;
  }
  if (!decided) pick = (is_max ? b->n > a->n : b->n < a->n) ? call->in[0] : call->in[1];
  ts_iv_retain(pick);
  call->out[0] = pick;
  return true;
}

static bool ls_min_lists(ts_rt_ctx *c, ts_rt_call *call) { return ls_minmax_lists(c, call, false); }
static bool ls_max_lists(ts_rt_ctx *c, ts_rt_call *call) { return ls_minmax_lists(c, call, true); }

/* min(l) / max(l) of a list of numbers or bools. */
static bool ls_minmax_self(ts_rt_ctx *c, ts_rt_call *call, bool is_max) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  if (l->n == 0) return ts_rt_fail(c, "%s() arg is an empty sequence", is_max ? "max" : "min");
  ts_iv best = l->items[0];
  for (uint32_t i = 1; i < l->n; i++) {
    int cmp = 0;
    if (!ls_compare(c, l->items[i], best, &cmp)) return false;
    if (is_max ? cmp > 0 : cmp < 0) best = l->items[i];
  }
  ts_iv_retain(best);
  call->out[0] = best;
  return true;
}

static bool ls_min_self(ts_rt_ctx *c, ts_rt_call *call) { return ls_minmax_self(c, call, false); }
static bool ls_max_self(ts_rt_ctx *c, ts_rt_call *call) { return ls_minmax_self(c, call, true); }

/* sum(int[]) and sum(bool[]) accumulate in a C++ `int` (32 bits, wrapping)
 * in PyTorch 1.13; sum(float[]) in double. */
static bool ls_sum_int(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  uint32_t s = 0;
  for (uint32_t i = 0; i < l->n; i++) {
    ts_iv v = l->items[i];
    s += (uint32_t)(uint64_t)(v.tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i);
  }
  call->out[0] = ts_iv_int((int32_t)s);
  return true;
}

static bool ls_sum_float(ts_rt_ctx *c, ts_rt_call *call) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  double s = 0;
  for (uint32_t i = 0; i < l->n; i++) s += ls_num_d(l->items[i]);
  call->out[0] = ts_iv_double(s);
  return true;
}

static bool ls_truthy(ts_iv v) {
  if (v.tag == TS_IV_STR) return v.u.s->len != 0;
  return ls_num_d(v) != 0;
}

static bool ls_any_all(ts_rt_ctx *c, ts_rt_call *call, bool any) {
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_list(c, call, 0, &l)) return false;
  bool r = !any;
  for (uint32_t i = 0; i < l->n; i++) {
    if (ls_truthy(l->items[i]) == any) {
      r = any;
      break;
    }
  }
  call->out[0] = ts_iv_bool(r);
  return true;
}

static bool ls_any(ts_rt_ctx *c, ts_rt_call *call) { return ls_any_all(c, call, true); }
static bool ls_all(ts_rt_ctx *c, ts_rt_call *call) { return ls_any_all(c, call, false); }

/* list(str): one single-character string per byte. */
static bool ls_list_str(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  if (s->len > UINT32_MAX) return ts_rt_oom(c);
  ts_rt_list *r = ts_rt_list_new(c, ts_type_leaf(TS_TY_STR), (uint32_t)s->len);
  if (!r) return false;
  for (size_t i = 0; i < s->len; i++) {
    ts_rt_str *ch = ts_rt_str_new(c, &s->data[i], 1);
    if (!ch || !ts_rt_list_append(c, r, ls_iv_str(ch))) {
      ts_iv_release(ls_iv_list(r));
      return false;
    }
  }
  call->out[0] = ls_iv_list(r);
  return true;
}

const ts_rt_kernel_def ts_rt_kernels_list[] = {
    {"aten::len.t", ls_len}, {"aten::len.any", ls_len},
    {"aten::__getitem__.t", ls_getitem}, {"aten::select.t", ls_getitem},
    {"aten::_set_item.t", ls_setitem},
    {"aten::append.t", ls_append}, {"aten::extend.t", ls_extend}, {"aten::insert.t", ls_insert},
    {"aten::pop.t", ls_pop}, {"aten::Delete.t", ls_delete},
    {"aten::list.t", ls_list_copy}, {"aten::copy.t", ls_list_copy}, {"aten::list", ls_list_str},
    {"aten::add.t", ls_add}, {"aten::add_.t", ls_add_},
    {"aten::mul.left_t", ls_mul_left}, {"aten::mul.right_", ls_mul_right}, {"aten::mul_.t", ls_mul_},
    {"aten::slice.t", ls_slice},
    {"aten::__contains__.int_list", ls_contains}, {"aten::__contains__.str_list", ls_contains},
    {"aten::__contains__.float_list", ls_contains},
    {"aten::index.list_int", ls_index_of}, {"aten::index.list_float", ls_index_of},
    {"aten::index.list_bool", ls_index_of}, {"aten::index.list_str", ls_index_of},
    {"aten::index.list_Tensor", ls_index_of},
    {"aten::eq.int_list", ls_eq}, {"aten::eq.float_list", ls_eq}, {"aten::eq.bool_list", ls_eq},
    {"aten::eq.str_list", ls_eq}, {"aten::eq.Tensor_list", ls_eq},
    {"aten::ne.int_list", ls_ne}, {"aten::ne.float_list", ls_ne}, {"aten::ne.bool_list", ls_ne},
    {"aten::ne.str_list", ls_ne}, {"aten::ne.Tensor_list", ls_ne},
    {"aten::sort.int", ls_sort}, {"aten::sort.float", ls_sort}, {"aten::sort.bool", ls_sort},
    {"aten::sort.str", ls_sort}, {"aten::sort.any", ls_sort},
    {"aten::sort.Tensor", ls_sort},
    {"aten::sorted.int", ls_sorted}, {"aten::sorted.float", ls_sorted}, {"aten::sorted.bool", ls_sorted},
    {"aten::sorted.str", ls_sorted}, {"aten::sorted.any", ls_sorted},
    {"aten::sorted.Tensor", ls_sorted},
    {"prim::min.int_list", ls_min_lists}, {"prim::min.float_list", ls_min_lists},
    {"prim::min.bool_list", ls_min_lists},
    {"prim::max.int_list", ls_max_lists}, {"prim::max.float_list", ls_max_lists},
    {"prim::max.bool_list", ls_max_lists},
    {"prim::min.self_int", ls_min_self}, {"prim::min.self_float", ls_min_self}, {"prim::min.self_bool", ls_min_self},
    {"prim::max.self_int", ls_max_self}, {"prim::max.self_float", ls_max_self}, {"prim::max.self_bool", ls_max_self},
    {"aten::sum.int", ls_sum_int}, {"aten::sum.bool", ls_sum_int}, {"aten::sum.float", ls_sum_float},
    {"aten::any.str", ls_any}, {"aten::any.int", ls_any}, {"aten::any.float", ls_any}, {"aten::any.bool", ls_any},
    {"aten::all.int", ls_all}, {"aten::all.float", ls_all}, {"aten::all.bool", ls_all},
    {NULL, NULL},
};
