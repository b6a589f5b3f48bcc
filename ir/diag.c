/* ir/diag.c: error messages that point at the source with a caret. */
#include "ir.h"

#include <string.h>

void ts_diag_free(ts_diag *d) {
  ts_buf_free(&d->text);
  d->errors = 0;
}

/* A NULL sink takes no messages: callers that only want the verdict pass
 * NULL. */
static bool ts_diag_keep(ts_diag *d) {
  if (!d)
    return false;
  d->errors++;
  return !d->max_errors || d->errors <= d->max_errors;
}

/* Finds line `line` (1-based) of src and quotes it with a caret under `col`.
 * Tabs in the quoted prefix are kept so the caret lines up in a terminal. */
static void ts_diag_quote(ts_buf *b, const char *src, size_t len, int line, int col) {
  const char *p = src, *end = src + len;
  for (int l = 1; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return;
    p = nl + 1;
  }
  const char *e = memchr(p, '\n', (size_t)(end - p));
  if (!e)
    e = end;
  if (e > p && e[-1] == '\r') /* CRLF line endings */
    e--;
  size_t n = (size_t)(e - p);
  if (n > 400)
    n = 400;
  ts_buf_putn(b, p, n);
  ts_buf_putc(b, '\n');
  for (int i = 1; i < col && (size_t)(i - 1) < n; i++)
    ts_buf_putc(b, p[i - 1] == '\t' ? '\t' : ' ');
  ts_buf_puts(b, "^\n");
}

void ts_diag_error_at(ts_diag *d, const char *file, const char *src, size_t src_len, int line, int col,
                      const char *fmt, ...) {
  if (!ts_diag_keep(d))
    return;
  ts_buf_printf(&d->text, "%s:%d:%d: error: ", file ? file : "<input>", line, col);
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&d->text, fmt, ap);
  va_end(ap);
  ts_buf_putc(&d->text, '\n');
  if (src)
    ts_diag_quote(&d->text, src, src_len, line, col);
}

void ts_diag_error(ts_diag *d, const char *fmt, ...) {
  if (!ts_diag_keep(d))
    return;
  ts_buf_puts(&d->text, "error: ");
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&d->text, fmt, ap);
  va_end(ap);
  ts_buf_putc(&d->text, '\n');
}
