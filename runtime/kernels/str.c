/* runtime/kernels/str.c: TorchScript's str methods, as PyTorch 1.13's
 * register_prim_ops.cpp implements them: byte strings with ASCII
 * semantics (lower/upper touch only A-Z/a-z, as ::tolower in the C locale),
 * index arithmetic of std::string, and its error messages. */
#include <string.h>

#include "args.h"
#include "runtime.h"

static ts_iv st_iv(ts_rt_str *s) {
  ts_iv v = {.u.s = s, .tag = TS_IV_STR};
  return v;
}

/* Sets out[0] to a new string of b's bytes; frees b. */
static bool st_from_buf(ts_rt_ctx *c, ts_rt_call *call, ts_buf *b) {
  if (b->failed) {
    ts_buf_free(b);
    return ts_rt_oom(c);
  }
  ts_rt_str *s = ts_rt_str_new(c, b->data ? b->data : "", b->len);
  ts_buf_free(b);
  if (!s) return false;
  call->out[0] = st_iv(s);
  return true;
}

static bool st_new(ts_rt_ctx *c, ts_rt_call *call, const char *p, size_t n) {
  ts_rt_str *s = ts_rt_str_new(c, p, n);
  if (!s) return false;
  call->out[0] = st_iv(s);
  return true;
}

/* std::string::find(needle, from): the position or SIZE_MAX. */
static size_t st_find(const char *h, size_t hn, const char *n, size_t nn, size_t from) {
  if (from > hn || nn > hn - from) return SIZE_MAX;
  if (nn == 0) return from;
  for (size_t i = from; i + nn <= hn; i++)
    if (h[i] == n[0] && memcmp(h + i, n, nn) == 0) return i;
  return SIZE_MAX;
}

static int st_cmp(const ts_rt_str *a, const ts_rt_str *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int r = memcmp(a->data, b->data, n);
  if (r != 0) return r;
  return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

static bool st_two(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_str **a, const ts_rt_str **b) {
  return ts_rt_arg_str(c, call, 0, a) && ts_rt_arg_str(c, call, 1, b);
}

static bool st_add(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *a = NULL, *b = NULL;
  if (!st_two(c, call, &a, &b)) return false;
  ts_buf out = {0};
  ts_buf_putn(&out, a->data, a->len);
  ts_buf_putn(&out, b->data, b->len);
  return st_from_buf(c, call, &out);
}

typedef enum st_cmp_op { ST_EQ, ST_NE, ST_LT, ST_LE, ST_GT, ST_GE } st_cmp_op;

static bool st_compare(ts_rt_ctx *c, ts_rt_call *call, st_cmp_op op) {
  const ts_rt_str *a = NULL, *b = NULL;
  if (!st_two(c, call, &a, &b)) return false;
  int r = st_cmp(a, b);
  bool v;
  switch (op) {
  case ST_EQ: v = r == 0; break;
  case ST_NE: v = r != 0; break;
  case ST_LT: v = r < 0; break;
  case ST_LE: v = r <= 0; break;
  case ST_GT: v = r > 0; break;
  default: v = r >= 0; break;
  }
  call->out[0] = ts_iv_bool(v);
  return true;
}

static bool st_eq(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_EQ); }
static bool st_ne(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_NE); }
static bool st_lt(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_LT); }
static bool st_le(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_LE); }
static bool st_gt(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_GT); }
static bool st_ge(ts_rt_ctx *c, ts_rt_call *call) { return st_compare(c, call, ST_GE); }

static bool st_len(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  call->out[0] = ts_iv_int((int64_t)s->len);
  return true;
}

/* s[i]: negative i counts from the end; out of range fails as
 * std::string::at does in PyTorch. */
static bool st_getitem(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  int64_t i = 0;
  if (!ts_rt_arg_str(c, call, 0, &s) || !ts_rt_arg_int(c, call, 1, &i)) return false;
  int64_t k = i < 0 ? i + (int64_t)s->len : i;
  if (k < 0 || (uint64_t)k >= s->len)
    return ts_rt_fail(c, "basic_string::at: __n (which is %llu) >= this->size() (which is %llu)",
                      (unsigned long long)(uint64_t)k, (unsigned long long)s->len);
  return st_new(c, call, &s->data[k], 1);
}

/* s[start:end:step] with Python's slice rules (slice_indices_adjust). */
static bool st_slice(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL;
  int64_t start = INT64_MAX, end = INT64_MAX, step = 1;
  bool has_start = false, has_end = false;
  if (!ts_rt_arg_str(c, call, 0, &s) || !ts_rt_arg_opt_int(c, call, 1, &start, &has_start) ||
      !ts_rt_arg_opt_int(c, call, 2, &end, &has_end) || !ts_rt_arg_int(c, call, 3, &step))
    return false;
  if (!has_start) start = INT64_MAX;
  if (!has_end) end = INT64_MAX;
  if (step == 0) return ts_rt_fail(c, "List slice should have non-zero step");
  if (step < -INT64_MAX) return ts_rt_fail(c, "List slice step is out of bounds");
  int64_t length = (int64_t)s->len;
  if (start == INT64_MAX) start = step < 0 ? INT64_MAX : 0;
  if (end == INT64_MAX) end = step < 0 ? INT64_MIN : INT64_MAX;
  if (start < 0) {
    start += length;
    if (start < 0) start = step < 0 ? -1 : 0;
  } else if (start >= length) {
    start = step < 0 ? length - 1 : length;
  }
  if (end < 0) {
    end += length;
    if (end < 0) end = step < 0 ? -1 : 0;
  } else if (end >= length) {
    end = step < 0 ? length - 1 : length;
  }
  int64_t count = 0;
  if (step < 0) {
    if (end < start) count = (start - end - 1) / (-step) + 1;
  } else if (start < end) {
    count = (end - start - 1) / step + 1;
  }
  ts_buf out = {0};
  for (int64_t k = 0, i = start; k < count; k++, i += step) ts_buf_putc(&out, s->data[i]);
  return st_from_buf(c, call, &out);
}

static bool st_in_set(char ch, const ts_rt_str *chars) { return memchr(chars->data, ch, chars->len) != NULL; }

/* strip(chars): std::string's find_last_not_of / find_first_not_of. */
static bool st_strip(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL, *chars = NULL;
  if (!st_two(c, call, &s, &chars)) return false;
  size_t lo = 0, hi = s->len;
  while (hi > 0 && st_in_set(s->data[hi - 1], chars)) hi--;
  while (lo < hi && st_in_set(s->data[lo], chars)) lo++;
  return st_new(c, call, s->data + lo, hi - lo);
}

static bool st_map_case(ts_rt_ctx *c, ts_rt_call *call, bool upper) {
  const ts_rt_str *s = NULL;
  if (!ts_rt_arg_str(c, call, 0, &s)) return false;
  ts_rt_str *r = ts_rt_str_new(c, s->data, s->len);
  if (!r) return false;
  for (size_t i = 0; i < r->len; i++) {
    char ch = r->data[i];
    if (upper && ch >= 'a' && ch <= 'z') r->data[i] = (char)(ch - 'a' + 'A');
    if (!upper && ch >= 'A' && ch <= 'Z') r->data[i] = (char)(ch - 'A' + 'a');
  }
  call->out[0] = st_iv(r);
  return true;
}

static bool st_lower(ts_rt_ctx *c, ts_rt_call *call) { return st_map_case(c, call, false); }
static bool st_upper(ts_rt_ctx *c, ts_rt_call *call) { return st_map_case(c, call, true); }

static bool st_list_add(ts_rt_ctx *c, ts_rt_list *l, const char *p, size_t n) {
  ts_rt_str *s = ts_rt_str_new(c, p, n);
  return s && ts_rt_list_append(c, l, st_iv(s));
}

/* The bytes splitNoneSeparator treats as whitespace (its UTF-8 line
 * separators contribute their bytes one by one, as std::string's
 * find_first_of does). */
static bool st_is_split_space(unsigned char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' || ch == 0x1c ||
         ch == 0x1d || ch == 0x1e || ch == 0x85 || ch == 0xe2 || ch == 0x80 || ch == 0xa8 || ch == 0xa9 || ch == 0xc2;
}

/* split(sep=None, max=-1). With no separator, runs of whitespace split and
 * `max` is ignored, as in PyTorch 1.13. */
static bool st_split(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL, *sep = NULL;
  int64_t max = -1;
  if (!ts_rt_arg_str(c, call, 0, &s) || !ts_rt_arg_check(c, call, 1) || !ts_rt_arg_int(c, call, 2, &max)) return false;
  if (call->in[1].tag != TS_IV_NONE && !ts_rt_arg_str(c, call, 1, &sep)) return false;
  if (sep && sep->len == 0) return ts_rt_fail(c, "ValueError: empty separator");
  ts_rt_list *l = ts_rt_list_new(c, ts_type_leaf(TS_TY_STR), 0);
  if (!l) return false;
  bool ok = true;
  if (!sep) {
    size_t prev = 0;
    for (size_t i = 0; i < s->len && ok; i++) {
      if (!st_is_split_space((unsigned char)s->data[i])) continue;
      if (i > prev) ok = st_list_add(c, l, s->data + prev, i - prev);
      prev = i + 1;
    }
    if (ok && prev != s->len) ok = st_list_add(c, l, s->data + prev, s->len - prev);
  } else {
    size_t prev = 0, pos = 0;
    int64_t count = 0;
    while (ok && (pos = st_find(s->data, s->len, sep->data, sep->len, pos)) != SIZE_MAX) {
      count++;
      if (max >= 0 && count > max) break;
      ok = st_list_add(c, l, s->data + prev, pos - prev);
      pos += sep->len;
      prev = pos;
    }
    if (ok) ok = st_list_add(c, l, s->data + prev, s->len - prev);
  }
  if (!ok) {
    ts_iv_release((ts_iv){.u.l = l, .tag = TS_IV_LIST});
    return false;
  }
  call->out[0] = (ts_iv){.u.l = l, .tag = TS_IV_LIST};
  return true;
}

/* PyTorch's stringFindImpl: find within [start, end), end -1 meaning the
 * end of the string; -1 in *out when absent. */
static bool st_find_impl(ts_rt_ctx *c, const ts_rt_str *s, const ts_rt_str *sub, int64_t start, int64_t end,
                         int64_t *out) {
  int64_t size = (int64_t)s->len;
  if (start < 0) start = size + start > 0 ? size + start : 0;
  if (end < 0) end = size + end + 1 > 0 ? size + end + 1 : 0;
  const char *p = "";
  size_t n = 0;
  if (end > start) {
    /* std::string::substr(start, end - start) */
    if (start > size)
      return ts_rt_fail(c, "basic_string::substr: __pos (which is %lld) > this->size() (which is %lld)",
                        (long long)start, (long long)size);
    p = s->data + start;
    n = (size_t)((end < size ? end : size) - start);
  }
  *out = -1;
  if (n < sub->len) return true;
  size_t pos = st_find(p, n, sub->data, sub->len, 0);
  if (pos != SIZE_MAX) *out = (int64_t)pos + start;
  return true;
}

static bool st_find_args(ts_rt_ctx *c, const ts_rt_call *call, const ts_rt_str **s, const ts_rt_str **sub,
                         int64_t *start, int64_t *end) {
  return st_two(c, call, s, sub) && ts_rt_arg_int(c, call, 2, start) && ts_rt_arg_int(c, call, 3, end);
}

static bool st_find_op(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL, *sub = NULL;
  int64_t start = 0, end = -1;
  int64_t r = -1;
  if (!st_find_args(c, call, &s, &sub, &start, &end) || !st_find_impl(c, s, sub, start, end, &r)) return false;
  call->out[0] = ts_iv_int(r);
  return true;
}

static bool st_index(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL, *sub = NULL;
  int64_t start = 0, end = -1;
  int64_t r = -1;
  if (!st_find_args(c, call, &s, &sub, &start, &end) || !st_find_impl(c, s, sub, start, end, &r)) return false;
  if (r < 0) return ts_rt_fail(c, "ValueError: substring not found");
  call->out[0] = ts_iv_int(r);
  return true;
}

/* startswith/endswith over s.substr(start, end - start), with std::string's
 * clamping (a negative length reaches the end) and its error past the end. */
static bool st_affix(ts_rt_ctx *c, ts_rt_call *call, bool ends) {
  const ts_rt_str *s = NULL, *sub = NULL;
  int64_t start = 0, end = -1;
  if (!st_find_args(c, call, &s, &sub, &start, &end)) return false;
  int64_t size = (int64_t)s->len;
  if (start < 0) start = size + start > 0 ? size + start : 0;
  if (end < 0) end = size + end + 1 > 0 ? size + end + 1 : 0;
  if (start > size)
    return ts_rt_fail(c, "basic_string::substr: __pos (which is %lld) > this->size() (which is %lld)", (long long)start,
                      (long long)size);
  uint64_t want = (uint64_t)(end - start); /* may wrap, as size_t does */
  size_t n = want < (uint64_t)(size - start) ? (size_t)want : (size_t)(size - start);
  const char *p = s->data + start;
  bool r = false;
  if (n >= sub->len) r = memcmp(ends ? p + n - sub->len : p, sub->data, sub->len) == 0;
  call->out[0] = ts_iv_bool(r);
  return true;
}

static bool st_startswith(ts_rt_ctx *c, ts_rt_call *call) { return st_affix(c, call, false); }
static bool st_endswith(ts_rt_ctx *c, ts_rt_call *call) { return st_affix(c, call, true); }

static bool st_join(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *sep = NULL;
  ts_rt_list *l = NULL;
  if (!ts_rt_arg_str(c, call, 0, &sep) || !ts_rt_arg_list(c, call, 1, &l)) return false;
  ts_buf out = {0};
  for (uint32_t i = 0; i < l->n; i++) {
    if (l->items[i].tag != TS_IV_STR) {
      ts_buf_free(&out);
      return ts_rt_fail(c, "join: expected List[str], got an element of type %s", ts_iv_tag_name(l->items[i]));
    }
    if (i > 0) ts_buf_putn(&out, sep->data, sep->len);
    ts_buf_putn(&out, l->items[i].u.s->data, l->items[i].u.s->len);
  }
  return st_from_buf(c, call, &out);
}

/* replace(old, new, max): left to right, at most max times (all if < 0).
 * An empty `old` inserts `new` repeatedly at the front as PyTorch's loop
 * does, and never ends without a max (PyTorch runs out of memory). */
static bool st_replace(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *s = NULL, *old = NULL, *new_s = NULL;
  int64_t max = -1;
  if (!ts_rt_arg_str(c, call, 0, &s) || !ts_rt_arg_str(c, call, 1, &old) || !ts_rt_arg_str(c, call, 2, &new_s) ||
      !ts_rt_arg_int(c, call, 3, &max))
    return false;
  ts_buf out = {0};
  if (old->len == 0) {
    if (max < 0) return ts_rt_fail(c, "std::bad_alloc");
    for (int64_t k = 0; k < max; k++) ts_buf_putn(&out, new_s->data, new_s->len);
    ts_buf_putn(&out, s->data, s->len);
    return st_from_buf(c, call, &out);
  }
  size_t pos = 0, prev = 0;
  int64_t n = 0;
  while ((pos = st_find(s->data, s->len, old->data, old->len, pos)) != SIZE_MAX) {
    if (max >= 0 && ++n > max) break;
    ts_buf_putn(&out, s->data + prev, pos - prev);
    ts_buf_putn(&out, new_s->data, new_s->len);
    pos += old->len;
    prev = pos;
  }
  ts_buf_putn(&out, s->data + prev, s->len - prev);
  return st_from_buf(c, call, &out);
}

/* "...".format(args): each "{}" is replaced by str() of the next argument;
 * nothing else is interpreted ("{{}}" gives "{x}"); extra arguments are
 * ignored. */
static bool st_format(ts_rt_ctx *c, ts_rt_call *call) {
  const ts_rt_str *f = NULL;
  if (!ts_rt_arg_str(c, call, 0, &f)) return false;
  ts_buf out = {0};
  size_t begin = 0;
  uint32_t used = 0;
  for (;;) {
    size_t loc = st_find(f->data, f->len, "{}", 2, begin);
    if (loc == SIZE_MAX) {
      ts_buf_putn(&out, f->data + begin, f->len - begin);
      break;
    }
    ts_buf_putn(&out, f->data + begin, loc - begin);
    if (1 + used >= call->nin) {
      ts_buf_free(&out);
      return ts_rt_fail(c, "Too few arguments for format string: %s", f->data);
    }
    ts_iv_str(&out, call->in[1 + used]);
    used++;
    begin = loc + 2;
  }
  return st_from_buf(c, call, &out);
}

const ts_rt_kernel_def ts_rt_kernels_str[] = {
    {"aten::add.str", st_add},
    {"aten::eq.str", st_eq}, {"aten::ne.str", st_ne}, {"aten::lt.str", st_lt},
    {"aten::le.str", st_le}, {"aten::gt.str", st_gt}, {"aten::ge.str", st_ge},
    {"aten::len.str", st_len}, {"aten::__getitem__.str", st_getitem}, {"aten::slice.str", st_slice},
    {"aten::strip", st_strip}, {"aten::lower", st_lower}, {"aten::upper", st_upper},
    {"aten::split.str", st_split},
    {"aten::find", st_find_op}, {"aten::index.str", st_index},
    {"aten::startswith", st_startswith}, {"aten::endswith", st_endswith},
    {"aten::join", st_join}, {"aten::replace", st_replace}, {"aten::format", st_format},
    {NULL, NULL},
};
