/* ir/buf.c: growable text buffers and PyTorch's scalar/string spellings. */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ts_buf_free(ts_buf *b) {
  if (b->fixed) {
    b->len = 0;
    if (b->cap)
      b->data[0] = 0;
    b->failed = false;
    return;
  }
  free(b->data);
  memset(b, 0, sizeof *b);
}

static bool ts_buf_reserve(ts_buf *b, size_t extra) {
  if (b->failed)
    return false;
  if (extra > SIZE_MAX - b->len - 1) {
    b->failed = true;
    return false;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return true;
  if (b->fixed) {
    b->failed = true;
    return false;
  }
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void ts_buf_putn(ts_buf *b, const char *s, size_t n) {
  if (!ts_buf_reserve(b, n))
    return;
  if (n)
    memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void ts_buf_puts(ts_buf *b, const char *s) { ts_buf_putn(b, s, strlen(s)); }

void ts_buf_putc(ts_buf *b, char c) { ts_buf_putn(b, &c, 1); }

void ts_buf_vprintf(ts_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n >= 0 && b->fixed && !b->failed && b->len + 1 < b->cap && b->len + (size_t)n + 1 > b->cap) {
    /* what fits */
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    b->len = b->cap - 1;
    b->failed = true;
    return;
  }
  if (n < 0 || !ts_buf_reserve(b, (size_t)n)) {
    b->failed = true;
    return;
  }
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
}

void ts_buf_printf(ts_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

/* PyTorch escapes quotes of both kinds, backslash and the C control escapes;
 * other bytes outside printable ASCII become three octal digits. (PyTorch
 * computes those digits from a signed char, which garbles bytes >= 0x80; we
 * write the byte's real octal value.) */
void ts_buf_put_quoted(ts_buf *b, const char *s, size_t n) {
  ts_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '\\': ts_buf_puts(b, "\\\\"); break;
    case '\'': ts_buf_puts(b, "\\'"); break;
    case '"': ts_buf_puts(b, "\\\""); break;
    case '\a': ts_buf_puts(b, "\\a"); break;
    case '\b': ts_buf_puts(b, "\\b"); break;
    case '\f': ts_buf_puts(b, "\\f"); break;
    case '\n': ts_buf_puts(b, "\\n"); break;
    case '\r': ts_buf_puts(b, "\\r"); break;
    case '\t': ts_buf_puts(b, "\\t"); break;
    case '\v': ts_buf_puts(b, "\\v"); break;
    default:
      if (c >= 0x20 && c < 0x7f)
        ts_buf_putc(b, (char)c);
      else
        ts_buf_printf(b, "\\%03o", c);
    }
  }
  ts_buf_putc(b, '"');
}

void ts_buf_put_double(ts_buf *b, double v) {
  int c = fpclassify(v);
  if ((c == FP_NORMAL || c == FP_ZERO) && fabs(v) < 1e10) {
    int64_t i = (int64_t)v;
    if ((double)i == v) {
      if (i == 0 && signbit(v))
        ts_buf_puts(b, "-0.");
      else
        ts_buf_printf(b, "%lld.", (long long)i);
      return;
    }
  }
  if (isnan(v)) {
    ts_buf_puts(b, "nan");
    return;
  }
  ts_buf_printf(b, "%.17g", v);
}
