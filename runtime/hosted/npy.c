/* runtime/hosted/npy.c: reading and writing NumPy .npy files (see npy.h).
 *
 * Layout: "\x93NUMPY", major, minor, the header length (2 bytes little-endian
 * for version 1, 4 for versions 2 and 3), then the header, a Python dict
 * literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and a newline, then the raw data. Everything in the
 * header is untrusted. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest header accepted; NumPy itself refuses headers over 10000 bytes by
 * default, and a 64-dimensional shape needs under 1.5 KB. */
#define NPY_MAX_HEADER (1u << 20)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* A cursor over the header text. */
typedef struct npy_lex {
  const char *p, *end;
} npy_lex;

static void npy_skip_ws(npy_lex *l) {
  while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r')) l->p++;
}

/* Consumes `ch` (after whitespace) if it is next. */
static bool npy_accept(npy_lex *l, char ch) {
  npy_skip_ws(l);
  if (l->p < l->end && *l->p == ch) {
    l->p++;
    return true;
  }
  return false;
}

/* string = "'" chars "'" | '"' chars '"' (no escapes: NumPy writes none in
 * the keys and descrs we accept). Sets *s, *n to the contents. */
static bool npy_string(npy_lex *l, const char **s, size_t *n) {
  npy_skip_ws(l);
  if (l->p >= l->end || (*l->p != '\'' && *l->p != '"')) return false;
  char q = *l->p++;
  const char *start = l->p;
  while (l->p < l->end && *l->p != q) {
    if (*l->p == '\\') return false;
    l->p++;
  }
  if (l->p >= l->end) return false;
  *s = start;
  *n = (size_t)(l->p - start);
  l->p++;
  return true;
}

/* Consumes the word `w` if it is next and not followed by a name char. */
static bool npy_word(npy_lex *l, const char *w) {
  npy_skip_ws(l);
  size_t n = strlen(w);
  if ((size_t)(l->end - l->p) < n || memcmp(l->p, w, n) != 0) return false;
  if (l->p + n < l->end) {
    char c = l->p[n];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') return false;
  }
  l->p += n;
  return true;
}

/* A non-negative decimal integer (Python 2's "3L" suffix allowed, as old
 * NumPy wrote it). False on overflow past INT64_MAX. */
static bool npy_int(npy_lex *l, int64_t *out) {
  npy_skip_ws(l);
  if (l->p >= l->end || *l->p < '0' || *l->p > '9') return false;
  int64_t v = 0;
  while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
    int d = *l->p - '0';
    if (v > (INT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    l->p++;
  }
  if (l->p < l->end && *l->p == 'L') l->p++;
  *out = v;
  return true;
}

/* shape = "(" [int ("," int)* [","]] ")" */
static bool npy_shape(npy_lex *l, int64_t *sizes, int32_t *ndim, const char **why) {
  *why = "malformed 'shape'";
  if (!npy_accept(l, '(')) return false;
  *ndim = 0;
  if (npy_accept(l, ')')) return true;
  for (;;) {
    if (*ndim >= TS_RT_MAX_DIMS) {
      *why = "'shape' has more than 64 dimensions";
      return false;
    }
    if (!npy_int(l, &sizes[*ndim])) return false;
    (*ndim)++;
    if (npy_accept(l, ')')) return *ndim > 1 ? true : false; /* "(3)" is not a tuple */
    if (!npy_accept(l, ',')) return false;
    if (npy_accept(l, ')')) return true;
  }
}

/* The dtype of a descr string; TS_DT_NONE if not one we read. Byte orders
 * '<', '=' and '|' all mean little-endian here; '>' only for 1-byte types. */
static ts_dtype npy_descr_dtype(const char *s, size_t n) {
  if (n == 4 && (s[0] == '<' || s[0] == '=') && s[1] == 'c' && s[2] == '1' && s[3] == '6') return TS_DT_COMPLEX128;
  if (n != 3) return TS_DT_NONE;
  char order = s[0], kind = s[1], size = s[2];
  if (order != '<' && order != '=' && order != '|' && !(order == '>' && size == '1')) return TS_DT_NONE;
  switch (kind) {
  case 'f':
    return size == '2' ? TS_DT_FLOAT16 : size == '4' ? TS_DT_FLOAT32 : size == '8' ? TS_DT_FLOAT64 : TS_DT_NONE;
  case 'i':
    return size == '1'   ? TS_DT_INT8
           : size == '2' ? TS_DT_INT16
           : size == '4' ? TS_DT_INT32
           : size == '8' ? TS_DT_INT64
                         : TS_DT_NONE;
  case 'u':
    return size == '1' ? TS_DT_UINT8 : TS_DT_NONE;
  case 'b':
    return size == '1' ? TS_DT_BOOL : TS_DT_NONE;
  case 'c':
    return size == '8' ? TS_DT_COMPLEX64 : TS_DT_NONE;
  default:
    return TS_DT_NONE;
  }
}

/* What the header dict says. */
typedef struct npy_header {
  ts_dtype dtype;
  bool fortran;
  int32_t ndim;
  int64_t sizes[TS_RT_MAX_DIMS];
} npy_header;

/* dict = "{" (key ":" value ",")* [key ":" value] "}" with exactly the keys
 * descr, fortran_order and shape. Fails with the reason in c. */
static bool npy_parse_header(ts_rt_ctx *c, const char *text, size_t len, const char *name, npy_header *h) {
  npy_lex l = {text, text + len};
  bool seen[3] = {false, false, false};
  const char *why = "malformed header dict";
  if (!npy_accept(&l, '{')) goto bad;
  while (!npy_accept(&l, '}')) {
    const char *key;
    size_t keylen;
    if (!npy_string(&l, &key, &keylen) || !npy_accept(&l, ':')) goto bad;
    int which = keylen == 5 && memcmp(key, "descr", 5) == 0            ? 0
                : keylen == 13 && memcmp(key, "fortran_order", 13) == 0 ? 1
                : keylen == 5 && memcmp(key, "shape", 5) == 0           ? 2
                                                                        : -1;
    if (which < 0) {
      why = "unexpected key in header (expected 'descr', 'fortran_order' and 'shape')";
      goto bad;
    }
    if (seen[which]) {
      why = "repeated key in header";
      goto bad;
    }
    seen[which] = true;
    if (which == 0) {
      const char *d;
      size_t dn;
      if (!npy_string(&l, &d, &dn)) {
        why = "'descr' is not a string (structured dtypes are not supported)";
        goto bad;
      }
      h->dtype = npy_descr_dtype(d, dn);
      if (h->dtype == TS_DT_NONE) {
        int shown = dn > 32 ? 32 : (int)dn;
        return ts_rt_fail(c, "%s: unsupported dtype '%.*s'", name, shown, d);
      }
    } else if (which == 1) {
      if (npy_word(&l, "True")) h->fortran = true;
      else if (npy_word(&l, "False")) h->fortran = false;
      else {
        why = "'fortran_order' is not True or False";
        goto bad;
      }
    } else if (!npy_shape(&l, h->sizes, &h->ndim, &why)) {
      goto bad;
    }
    if (npy_accept(&l, '}')) break;
    if (!npy_accept(&l, ',')) goto bad;
  }
  npy_skip_ws(&l);
  if (l.p != l.end) {
    why = "text after the header dict";
    goto bad;
  }
  if (!seen[0] || !seen[1] || !seen[2]) {
    why = "header lacks 'descr', 'fortran_order' or 'shape'";
    goto bad;
  }
  return true;
bad:
  return ts_rt_fail(c, "%s: not a valid .npy file: %s", name, why);
}

/* Copies a Fortran-ordered array into C order: walks the destination in row
 * order with a multi-index and reads the source at column-major offsets. */
static void npy_fortran_to_c(void *dst, const uint8_t *src, const npy_header *h, size_t esize, int64_t numel) {
  int64_t fstride[TS_RT_MAX_DIMS], idx[TS_RT_MAX_DIMS];
  int64_t s = 1;
  for (int32_t k = 0; k < h->ndim; k++) {
    fstride[k] = s;
    s *= h->sizes[k];
    idx[k] = 0;
  }
  uint8_t *out = dst;
  int64_t off = 0;
  for (int64_t i = 0; i < numel; i++) {
    memcpy(out + (size_t)i * esize, src + (size_t)off * esize, esize);
    for (int32_t k = h->ndim - 1; k >= 0; k--) {
      idx[k]++;
      off += fstride[k];
      if (idx[k] < h->sizes[k]) break;
      off -= fstride[k] * idx[k];
      idx[k] = 0;
    }
  }
}

ts_rt_tensor *ts_rt_npy_parse(ts_rt_ctx *c, const void *bytes, size_t len, const char *name) {
  const uint8_t *b = bytes;
  if (!name) name = "<npy>";
  if (len < 10 || memcmp(b, npy_magic, 6) != 0) {
    ts_rt_fail(c, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    return NULL;
  }
  unsigned major = b[6];
  size_t hlen, pos;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      ts_rt_fail(c, "%s: not a valid .npy file: truncated header", name);
      return NULL;
    }
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    pos = 12;
  } else {
    ts_rt_fail(c, "%s: unsupported .npy format version %u.%u", name, major, (unsigned)b[7]);
    return NULL;
  }
  if (hlen > NPY_MAX_HEADER) {
    ts_rt_fail(c, "%s: not a valid .npy file: header length %zu too large", name, hlen);
    return NULL;
  }
  if (hlen > len - pos) {
    ts_rt_fail(c, "%s: not a valid .npy file: truncated header", name);
    return NULL;
  }
  npy_header h = {.dtype = TS_DT_NONE};
  if (!npy_parse_header(c, (const char *)b + pos, hlen, name, &h)) return NULL;
  pos += hlen;

  size_t esize = ts_dtype_size(h.dtype);
  /* The contiguous strides multiply the sizes with 0 read as 1: that product
   * must fit even when a 0 makes the array empty. */
  int64_t span = 1;
  bool empty = false;
  for (int32_t k = 0; k < h.ndim; k++) {
    int64_t s = h.sizes[k] > 1 ? h.sizes[k] : 1;
    if (span > INT64_MAX / s) {
      ts_rt_fail(c, "%s: not a valid .npy file: shape too large", name);
      return NULL;
    }
    span *= s;
    empty = empty || h.sizes[k] == 0;
  }
  int64_t numel = empty ? 0 : span;
  if ((uint64_t)numel > SIZE_MAX / esize) {
    ts_rt_fail(c, "%s: not a valid .npy file: shape too large", name);
    return NULL;
  }
  size_t nbytes = (size_t)numel * esize;
  if (nbytes > len - pos) {
    ts_rt_fail(c, "%s: truncated .npy data: shape needs %zu bytes, %zu present", name, nbytes, len - pos);
    return NULL;
  }
  ts_rt_tensor *t = ts_rt_tensor_new(c, h.dtype, h.ndim, h.sizes, false);
  if (!t) return NULL;
  if (nbytes) {
    void *dst = ts_rt_tensor_data(t);
    if (h.fortran && h.ndim > 1) npy_fortran_to_c(dst, b + pos, &h, esize, numel);
    else memcpy(dst, b + pos, nbytes);
    /* A bool byte other than 0 or 1 would break kernels that assume 0/1. */
    if (h.dtype == TS_DT_BOOL) {
      uint8_t *p = dst;
      for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
    }
  }
  return t;
}

ts_rt_tensor *ts_rt_npy_read(ts_rt_ctx *c, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    ts_rt_fail(c, "%s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  uint8_t *data = malloc(cap);
  if (!data) {
    fclose(f);
    ts_rt_oom(c);
    return NULL;
  }
  for (;;) {
    if (len == cap) {
      if (cap > SIZE_MAX / 2) {
        free(data);
        fclose(f);
        ts_rt_oom(c);
        return NULL;
      }
      uint8_t *nd = realloc(data, cap * 2);
      if (!nd) {
        free(data);
        fclose(f);
        ts_rt_oom(c);
        return NULL;
      }
      data = nd;
      cap *= 2;
    }
    size_t got = fread(data + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  bool err = ferror(f) != 0;
  fclose(f);
  if (err) {
    free(data);
    ts_rt_fail(c, "%s: read error", path);
    return NULL;
  }
  ts_rt_tensor *t = ts_rt_npy_parse(c, data, len, path);
  free(data);
  return t;
}

/* The descr NumPy writes for a dtype, or NULL if NumPy has none for it. */
static const char *npy_dtype_descr(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "<f4";
  case TS_DT_FLOAT64: return "<f8";
  case TS_DT_FLOAT16: return "<f2";
  case TS_DT_INT64: return "<i8";
  case TS_DT_INT32: return "<i4";
  case TS_DT_INT16: return "<i2";
  case TS_DT_INT8: return "|i1";
  case TS_DT_UINT8: return "|u1";
  case TS_DT_BOOL: return "|b1";
  case TS_DT_COMPLEX64: return "<c8";
  case TS_DT_COMPLEX128: return "<c16";
  default: return NULL;
  }
}

/* Writes t's elements in row order, through a buffer, walking its strides. */
static bool npy_write_data(FILE *f, const ts_rt_tensor *t, size_t esize) {
  int64_t numel = ts_rt_tensor_numel(t);
  if (numel == 0) return true;
  if (ts_rt_tensor_is_contiguous(t)) return fwrite(ts_rt_tensor_data(t), esize, (size_t)numel, f) == (size_t)numel;
  uint8_t buf[8192];
  size_t per = sizeof buf / esize, nbuf = 0;
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  const uint8_t *base = ts_rt_tensor_data(t);
  int64_t off = 0;
  for (int64_t i = 0; i < numel; i++) {
    memcpy(buf + nbuf * esize, base + off * (int64_t)esize, esize);
    if (++nbuf == per) {
      if (fwrite(buf, esize, nbuf, f) != nbuf) return false;
      nbuf = 0;
    }
    for (int32_t k = t->ndim - 1; k >= 0; k--) {
      idx[k]++;
      off += t->strides[k];
      if (idx[k] < t->sizes[k]) break;
      off -= t->strides[k] * idx[k];
      idx[k] = 0;
    }
  }
  return nbuf == 0 || fwrite(buf, esize, nbuf, f) == nbuf;
}

bool ts_rt_npy_write(ts_rt_ctx *c, const char *path, const ts_rt_tensor *t) {
  const char *descr = npy_dtype_descr((ts_dtype)t->dtype);
  if (!descr) {
    return ts_rt_fail(c, "%s: cannot write a %s tensor as .npy (NumPy has no such dtype)", path,
                      ts_dtype_name((ts_dtype)t->dtype));
  }
  ts_buf h = {0};
  ts_buf_printf(&h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  /* NumPy's own spelling: "(2, 3)", "(3,)", "()". */
  for (int32_t k = 0; k < t->ndim; k++) ts_buf_printf(&h, "%s%lld", k ? ", " : "", (long long)t->sizes[k]);
  ts_buf_puts(&h, t->ndim == 1 ? ",), }" : "), }");
  /* Pad so the data starts at a multiple of 64, the header ending in '\n'. */
  while ((10 + h.len + 1) % 64 != 0) ts_buf_putc(&h, ' ');
  ts_buf_putc(&h, '\n');
  if (h.failed) {
    ts_buf_free(&h);
    return ts_rt_oom(c);
  }
  if (h.len > 65535) {
    ts_buf_free(&h);
    return ts_rt_fail(c, "%s: .npy header too long", path);
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    ts_buf_free(&h);
    return ts_rt_fail(c, "%s: %s", path, strerror(errno));
  }
  uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(h.len & 0xff), (uint8_t)(h.len >> 8)};
  bool ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(h.data, 1, h.len, f) == h.len &&
            npy_write_data(f, t, ts_dtype_size((ts_dtype)t->dtype));
  ts_buf_free(&h);
  if (fclose(f) != 0) ok = false;
  if (!ok) return ts_rt_fail(c, "%s: write error", path);
  return true;
}
