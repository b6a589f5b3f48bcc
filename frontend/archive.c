/* frontend/archive.c: the zip archive torch.jit.save writes, read on libzip.
 *
 * Entry names form a namespace of their own: they are looked up by exact
 * name and never joined to a file-system path. Every read is bounded by the
 * ts_fe_limits so a hostile archive ends in an error, not in an unbounded
 * allocation. */
#include "archive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zip.h>

/* Entries over this size must respect the compression ratio limit; small
 * ones (a run of zeros, a tiny pickle) may legitimately compress better. */
enum { TS_FE_A_RATIO_MIN_BYTES = 1 << 20 };

typedef struct ts_fe_entry {
  const char *name;   /* relative to the prefix, NUL-terminated, in names */
  zip_uint64_t index; /* in the zip's central directory */
  uint64_t size;      /* uncompressed, as recorded */
  uint64_t comp_size; /* compressed, as recorded */
  uint8_t *data;      /* cached bytes (aligned_alloc), NULL until read */
} ts_fe_entry;

struct ts_fe_archive {
  zip_t *zip;
  char *display_name;
  char *prefix;
  char *names; /* every relative name, each NUL-terminated */
  ts_fe_entry *entries;
  uint32_t *sorted; /* entry indices ordered by name, for lookup */
  uint32_t n;
  ts_fe_limits lim;
  uint64_t total_read; /* bytes of all cached entries */
};

void ts_fe_limits_default(ts_fe_limits *l) {
  l->max_entries = 65536;
  l->max_entry_bytes = (uint64_t)4 << 30;
  l->max_total_bytes = (uint64_t)8 << 30;
  l->max_ratio = 1000;
}

/* Copies at most 80 bytes of a name from the archive into `out` (cap >= 96)
 * for a message: bytes outside printable ASCII become \xNN, so a hostile
 * name cannot break the one-line message. */
static const char *ts_fe_a_quote(char *out, size_t cap, const char *s) {
  size_t o = 0, i = 0;
  for (; s[i] && i < 80 && o + 5 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out[o++] = (char)c;
    } else {
      snprintf(out + o, cap - o, "\\x%02x", c);
      o += 4;
    }
  }
  if (s[i] && o + 4 < cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = 0;
  return out;
}

/* qsort has no context argument in C11: the entries being sorted are passed
 * through this thread-local pointer. */
static _Thread_local const ts_fe_entry *ts_fe_a_sort_entries;

static int ts_fe_a_cmp_idx(const void *a, const void *b) {
  const ts_fe_entry *e = ts_fe_a_sort_entries;
  return strcmp(e[*(const uint32_t *)a].name, e[*(const uint32_t *)b].name);
}

/* Checks one full entry name and splits off its top folder: "model/x/y" has
 * top "model" (length in *top_len) and relative name "x/y". Absolute names,
 * names without a folder and ".." components are refused. */
static bool ts_fe_a_split(ts_fe_archive *a, const char *full, size_t *top_len, ts_diag *d) {
  char q[128];
  const char *slash = strchr(full, '/');
  if (!slash || slash == full) {
    ts_diag_error(d, "%s: entry '%s' is not under a top folder", a->display_name, ts_fe_a_quote(q, sizeof q, full));
    return false;
  }
  for (const char *c = full; *c;) {
    const char *e = strchr(c, '/');
    size_t n = e ? (size_t)(e - c) : strlen(c);
    if (n == 2 && c[0] == '.' && c[1] == '.') {
      ts_diag_error(d, "%s: entry '%s' has a '..' component", a->display_name, ts_fe_a_quote(q, sizeof q, full));
      return false;
    }
    c += n;
    if (*c)
      c++;
  }
  *top_len = (size_t)(slash - full);
  return true;
}

/* Reads the central directory: names, sizes, the common top folder. */
static bool ts_fe_a_scan(ts_fe_archive *a, ts_diag *d) {
  zip_int64_t ne = zip_get_num_entries(a->zip, 0);
  if (ne < 0 || (uint64_t)ne > a->lim.max_entries || (uint64_t)ne >= UINT32_MAX) {
    ts_diag_error(d, "%s: %lld entries (limit %llu)", a->display_name, (long long)ne,
                  (unsigned long long)a->lim.max_entries);
    return false;
  }
  uint32_t n = (uint32_t)ne;
  const char **full = calloc(n ? n : 1, sizeof *full);
  a->entries = calloc(n ? n : 1, sizeof *a->entries);
  a->sorted = calloc(n ? n : 1, sizeof *a->sorted);
  if (!full || !a->entries || !a->sorted) {
    free(full);
    ts_diag_error(d, "%s: out of memory reading the central directory", a->display_name);
    return false;
  }
  size_t names_bytes = 0, top_len = 0;
  const char *top = NULL;
  char q1[128], q2[128];
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(a->zip, i, ZIP_FL_ENC_RAW, &st) != 0 || !(st.valid & ZIP_STAT_NAME) || !st.name ||
        !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE)) {
      ts_diag_error(d, "%s: entry %u: unreadable central directory record", a->display_name, i);
      ok = false;
      break;
    }
    size_t tl;
    if (!ts_fe_a_split(a, st.name, &tl, d)) {
      ok = false;
      break;
    }
    if (!top) {
      top = st.name;
      top_len = tl;
    } else if (tl != top_len || memcmp(top, st.name, tl) != 0) {
      char t1[128];
      snprintf(t1, sizeof t1, "%.*s", (int)(top_len < 100 ? top_len : 100), top);
      char t2[128];
      snprintf(t2, sizeof t2, "%.*s", (int)(tl < 100 ? tl : 100), st.name);
      ts_diag_error(d, "%s: entries under two top folders ('%s' and '%s')", a->display_name,
                    ts_fe_a_quote(q1, sizeof q1, t1), ts_fe_a_quote(q2, sizeof q2, t2));
      ok = false;
      break;
    }
    full[i] = st.name;
    a->entries[i].index = i;
    a->entries[i].size = st.size;
    a->entries[i].comp_size = st.comp_size;
    names_bytes += strlen(st.name) - tl; /* relative name + NUL */
  }
  if (ok && !top) {
    ts_diag_error(d, "%s: the archive is empty", a->display_name);
    ok = false;
  }
  if (ok) {
    a->prefix = malloc(top_len + 1);
    a->names = malloc(names_bytes ? names_bytes : 1);
    if (!a->prefix || !a->names) {
      ts_diag_error(d, "%s: out of memory reading the central directory", a->display_name);
      ok = false;
    }
  }
  if (ok) {
    memcpy(a->prefix, top, top_len);
    a->prefix[top_len] = 0;
    char *p = a->names;
    /* Folder entries ("model/", "model/data/") hold nothing and are left out. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
      const char *rel = full[i] + top_len + 1;
      size_t len = strlen(rel);
      if (len == 0 || rel[len - 1] == '/')
        continue;
      memcpy(p, rel, len + 1);
      a->entries[kept] = a->entries[i];
      a->entries[kept].name = p;
      a->sorted[kept] = kept;
      kept++;
      p += len + 1;
    }
    a->n = kept;
    ts_fe_a_sort_entries = a->entries;
    qsort(a->sorted, a->n, sizeof *a->sorted, ts_fe_a_cmp_idx);
    ts_fe_a_sort_entries = NULL;
    /* Equal names would make lookup ambiguous (a name cut short by a NUL
     * byte, or simply written twice). */
    for (uint32_t i = 1; i < a->n; i++)
      if (strcmp(a->entries[a->sorted[i - 1]].name, a->entries[a->sorted[i]].name) == 0) {
        ts_diag_error(d, "%s: duplicate entry '%s/%s'", a->display_name, a->prefix,
                      ts_fe_a_quote(q1, sizeof q1, a->entries[a->sorted[i]].name));
        ok = false;
        break;
      }
  }
  if (ok && !ts_fe_archive_has(a, "data.pkl")) {
    ts_diag_error(d, "%s: no data.pkl under '%s/'", a->display_name, ts_fe_a_quote(q1, sizeof q1, a->prefix));
    ok = false;
  }
  free(full);
  return ok;
}

/* The archive's raw bytes, for what libzip does not tell: where each entry
 * lies. Either a buffer or an open file. */
typedef struct ts_fe_a_raw {
  const uint8_t *buf;
  FILE *f;
  uint64_t len;
} ts_fe_a_raw;

static bool ts_fe_a_raw_read(ts_fe_a_raw *r, uint64_t off, void *dst, size_t n) {
  if (off > r->len || n > r->len - off)
    return false;
  if (r->buf) {
    memcpy(dst, r->buf + off, n);
    return true;
  }
  return off <= (uint64_t)INT64_MAX && fseeko(r->f, (off_t)off, SEEK_SET) == 0 && fread(dst, 1, n, r->f) == n;
}

static uint16_t ts_fe_a_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t ts_fe_a_u32(const uint8_t *p) { return (uint32_t)ts_fe_a_u16(p) | (uint32_t)ts_fe_a_u16(p + 2) << 16; }
static uint64_t ts_fe_a_u64(const uint8_t *p) { return (uint64_t)ts_fe_a_u32(p) | (uint64_t)ts_fe_a_u32(p + 4) << 32; }

/* The offset of the central directory: from the end of central directory
 * record that ends the file exactly (its comment reaching the last byte),
 * or from the zip64 record it points to. */
static bool ts_fe_a_cd_offset(ts_fe_a_raw *r, uint64_t *cd) {
  uint8_t tail[22 + 65535];
  size_t n = r->len < sizeof tail ? (size_t)r->len : sizeof tail;
  if (n < 22 || !ts_fe_a_raw_read(r, r->len - n, tail, n))
    return false;
  for (size_t p = n - 22 + 1; p-- > 0;) {
    if (ts_fe_a_u32(tail + p) != 0x06054B50 || p + 22 + ts_fe_a_u16(tail + p + 20) != n)
      continue;
    uint64_t eocd = r->len - n + p;
    *cd = ts_fe_a_u32(tail + p + 16);
    if (*cd != 0xFFFFFFFFu && ts_fe_a_u16(tail + p + 10) != 0xFFFF)
      return true;
    uint8_t loc[20], rec[56];
    if (eocd < 20 || !ts_fe_a_raw_read(r, eocd - 20, loc, sizeof loc) || ts_fe_a_u32(loc) != 0x07064B50 ||
        !ts_fe_a_raw_read(r, ts_fe_a_u64(loc + 8), rec, sizeof rec) || ts_fe_a_u32(rec) != 0x06064B50)
      return false;
    *cd = ts_fe_a_u64(rec + 48);
    return true;
  }
  return false;
}

typedef struct ts_fe_a_span {
  uint64_t begin, end; /* local header to the end of the data */
  uint32_t index;
} ts_fe_a_span;

static int ts_fe_a_cmp_span(const void *a, const void *b) {
  const ts_fe_a_span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Reads central directory record `i` at *pos (moving *pos past it) and the
 * local header it points to: the entry's span in the file. */
static bool ts_fe_a_span_of(ts_fe_a_raw *r, uint64_t *pos, ts_fe_a_span *s) {
  uint8_t h[46], x[65535];
  if (!ts_fe_a_raw_read(r, *pos, h, sizeof h) || ts_fe_a_u32(h) != 0x02014B50)
    return false;
  uint16_t nlen = ts_fe_a_u16(h + 28), xlen = ts_fe_a_u16(h + 30), clen = ts_fe_a_u16(h + 32);
  uint64_t usize = ts_fe_a_u32(h + 24), csize = ts_fe_a_u32(h + 20), off = ts_fe_a_u32(h + 42);
  if (!ts_fe_a_raw_read(r, *pos + 46 + nlen, x, xlen))
    return false;
  /* zip64: the 64-bit values stand in the 0x0001 extra field, in this order,
   * for those whose 32-bit field is all ones */
  for (uint32_t k = 0; k + 4 <= xlen;) {
    uint16_t id = ts_fe_a_u16(x + k), len = ts_fe_a_u16(x + k + 2);
    if (k + 4 + (uint32_t)len > xlen)
      break;
    if (id == 0x0001) {
      const uint8_t *v = x + k + 4, *e = v + len;
      uint64_t *fields[3] = {&usize, &csize, &off};
      for (int f = 0; f < 3; f++)
        if (*fields[f] == 0xFFFFFFFFu) {
          if (e - v < 8)
            return false;
          *fields[f] = ts_fe_a_u64(v);
          v += 8;
        }
      break;
    }
    k += 4 + len;
  }
  *pos += 46 + (uint64_t)nlen + xlen + clen;
  uint8_t l[30];
  if (!ts_fe_a_raw_read(r, off, l, sizeof l) || ts_fe_a_u32(l) != 0x04034B50)
    return false;
  uint64_t data = off + 30 + ts_fe_a_u16(l + 26) + ts_fe_a_u16(l + 28);
  if (csize > r->len || data > r->len - csize)
    return false;
  s->begin = off;
  s->end = data + csize;
  return true;
}

/* No two entries may share bytes: a central directory record pointing into
 * another entry's data (the trick of overlapping zip bombs, where many
 * records inflate the same compressed bytes) or two headers whose data
 * ranges overlap. libzip checks each record against its local header, not
 * the records against each other. */
static bool ts_fe_a_check_overlap(ts_fe_archive *a, ts_fe_a_raw *r, ts_diag *d) {
  zip_int64_t ne = zip_get_num_entries(a->zip, 0);
  uint64_t pos;
  if (ne <= 1)
    return true;
  ts_fe_a_span *s = calloc((size_t)ne, sizeof *s);
  if (!s) {
    ts_diag_error(d, "%s: out of memory reading the central directory", a->display_name);
    return false;
  }
  bool ok = ts_fe_a_cd_offset(r, &pos);
  for (zip_int64_t i = 0; ok && i < ne; i++) {
    s[i].index = (uint32_t)i;
    ok = ts_fe_a_span_of(r, &pos, &s[i]);
  }
  if (!ok) {
    ts_diag_error(d, "%s: broken zip archive: a central directory record or local header cannot be read",
                  a->display_name);
  } else {
    qsort(s, (size_t)ne, sizeof *s, ts_fe_a_cmp_span);
    for (zip_int64_t i = 1; ok && i < ne; i++)
      if (s[i].begin < s[i - 1].end) {
        char q1[128], q2[128];
        const char *n1 = zip_get_name(a->zip, s[i - 1].index, ZIP_FL_ENC_RAW);
        const char *n2 = zip_get_name(a->zip, s[i].index, ZIP_FL_ENC_RAW);
        ts_diag_error(d, "%s: broken zip archive: entries '%s' (bytes %llu to %llu) and '%s' (from byte %llu) overlap",
                      a->display_name, ts_fe_a_quote(q1, sizeof q1, n1 ? n1 : "?"),
                      (unsigned long long)s[i - 1].begin, (unsigned long long)s[i - 1].end,
                      ts_fe_a_quote(q2, sizeof q2, n2 ? n2 : "?"), (unsigned long long)s[i].begin);
        ok = false;
      }
  }
  free(s);
  return ok;
}

/* Finishes an archive whose zip is open: on failure everything is freed. */
static ts_fe_archive *ts_fe_a_finish(ts_fe_archive *a, ts_fe_a_raw *raw, ts_diag *d) {
  if (!ts_fe_a_scan(a, d) || !ts_fe_a_check_overlap(a, raw, d)) {
    ts_fe_archive_close(a);
    return NULL;
  }
  return a;
}

static ts_fe_archive *ts_fe_a_new(const char *display_name, const ts_fe_limits *lim, ts_diag *d) {
  ts_fe_archive *a = calloc(1, sizeof *a);
  const char *name = display_name ? display_name : "<archive>";
  if (a)
    a->display_name = malloc(strlen(name) + 1);
  if (!a || !a->display_name) {
    free(a);
    ts_diag_error(d, "%s: out of memory", name);
    return NULL;
  }
  strcpy(a->display_name, name);
  if (lim)
    a->lim = *lim;
  else
    ts_fe_limits_default(&a->lim);
  return a;
}

/* The reason libzip gave for an open that failed. */
static void ts_fe_a_open_error(ts_fe_archive *a, zip_error_t *err, ts_diag *d) {
  switch (zip_error_code_zip(err)) {
  case ZIP_ER_NOENT:
  case ZIP_ER_OPEN:
  case ZIP_ER_READ:
  case ZIP_ER_SEEK:
    ts_diag_error(d, "%s: cannot open: %s", a->display_name, zip_error_strerror(err));
    break;
  case ZIP_ER_NOZIP:
    ts_diag_error(d, "%s: not a zip archive: %s", a->display_name, zip_error_strerror(err));
    break;
  case ZIP_ER_EXISTS: /* libzip's word for two entries of the same name */
    ts_diag_error(d, "%s: broken zip archive: two entries have the same name", a->display_name);
    break;
  default:
    ts_diag_error(d, "%s: broken zip archive: %s", a->display_name, zip_error_strerror(err));
    break;
  }
}

ts_fe_archive *ts_fe_archive_open(const char *path, const ts_fe_limits *lim, ts_diag *d) {
  ts_fe_archive *a = ts_fe_a_new(path, lim, d);
  if (!a)
    return NULL;
  int code = 0;
  a->zip = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (!a->zip) {
    zip_error_t err;
    zip_error_init_with_code(&err, code);
    ts_fe_a_open_error(a, &err, d);
    zip_error_fini(&err);
    ts_fe_archive_close(a);
    return NULL;
  }
  ts_fe_a_raw raw = {.f = fopen(path, "rb")};
  off_t end = -1;
  if (raw.f && fseeko(raw.f, 0, SEEK_END) == 0)
    end = ftello(raw.f);
  if (end < 0) {
    ts_diag_error(d, "%s: cannot open: %s", a->display_name, strerror(errno));
    if (raw.f)
      fclose(raw.f);
    ts_fe_archive_close(a);
    return NULL;
  }
  raw.len = (uint64_t)end;
  a = ts_fe_a_finish(a, &raw, d);
  fclose(raw.f);
  return a;
}

ts_fe_archive *ts_fe_archive_open_buffer(const void *data, size_t len, const char *display_name,
                                         const ts_fe_limits *lim, ts_diag *d) {
  ts_fe_archive *a = ts_fe_a_new(display_name, lim, d);
  if (!a)
    return NULL;
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t *src = zip_source_buffer_create(len ? data : NULL, len, 0, &err);
  if (src)
    a->zip = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err);
  if (!a->zip) {
    ts_fe_a_open_error(a, &err, d);
    if (src)
      zip_source_free(src); /* the archive owns it only once it opened */
    zip_error_fini(&err);
    ts_fe_archive_close(a);
    return NULL;
  }
  zip_error_fini(&err);
  ts_fe_a_raw raw = {.buf = data, .len = len};
  return ts_fe_a_finish(a, &raw, d);
}

void ts_fe_archive_close(ts_fe_archive *a) {
  if (!a)
    return;
  if (a->zip)
    zip_discard(a->zip);
  if (a->entries)
    for (uint32_t i = 0; i < a->n; i++)
      free(a->entries[i].data);
  free(a->entries);
  free(a->sorted);
  free(a->names);
  free(a->prefix);
  free(a->display_name);
  free(a);
}

const char *ts_fe_archive_display_name(const ts_fe_archive *a) { return a->display_name; }

const char *ts_fe_archive_prefix(const ts_fe_archive *a) { return a->prefix; }

uint32_t ts_fe_archive_count(const ts_fe_archive *a) { return a->n; }

const char *ts_fe_archive_name(const ts_fe_archive *a, uint32_t i) { return i < a->n ? a->entries[i].name : NULL; }

/* Binary search over the sorted names. */
static ts_fe_entry *ts_fe_a_find(const ts_fe_archive *a, const char *name) {
  uint32_t lo = 0, hi = a->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    ts_fe_entry *e = &a->entries[a->sorted[mid]];
    int c = strcmp(e->name, name);
    if (c == 0)
      return e;
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool ts_fe_archive_has(const ts_fe_archive *a, const char *name) { return name && ts_fe_a_find(a, name) != NULL; }

/* Decompresses entry `e` into `buf` (exactly e->size bytes), then reads on to
 * the end of the stream so that libzip checks the CRC and the recorded size. */
static bool ts_fe_a_inflate(ts_fe_archive *a, ts_fe_entry *e, uint8_t *buf, const char *qname, ts_diag *d) {
  zip_file_t *f = zip_fopen_index(a->zip, e->index, 0);
  if (!f) {
    ts_diag_error(d, "%s: %s: cannot open entry: %s", a->display_name, qname, zip_strerror(a->zip));
    return false;
  }
  uint64_t got = 0;
  bool ok = true;
  while (got < e->size) {
    zip_int64_t r = zip_fread(f, buf + got, e->size - got);
    if (r < 0) {
      ts_diag_error(d, "%s: %s: %s", a->display_name, qname, zip_file_strerror(f));
      ok = false;
      break;
    }
    if (r == 0) {
      ts_diag_error(d, "%s: %s: short read: %llu of %llu bytes", a->display_name, qname, (unsigned long long)got,
                    (unsigned long long)e->size);
      ok = false;
      break;
    }
    got += (uint64_t)r;
  }
  if (ok) {
    uint8_t probe;
    zip_int64_t r = zip_fread(f, &probe, 1);
    if (r < 0) {
      ts_diag_error(d, "%s: %s: %s", a->display_name, qname, zip_file_strerror(f));
      ok = false;
    } else if (r > 0) {
      ts_diag_error(d, "%s: %s: the entry is longer than its recorded size (%llu bytes)", a->display_name, qname,
                    (unsigned long long)e->size);
      ok = false;
    }
  }
  zip_fclose(f);
  return ok;
}

const uint8_t *ts_fe_archive_read(ts_fe_archive *a, const char *name, size_t *len, ts_diag *d) {
  if (len)
    *len = 0;
  char qname[128];
  ts_fe_a_quote(qname, sizeof qname, name ? name : "");
  ts_fe_entry *e = name ? ts_fe_a_find(a, name) : NULL;
  if (!e) {
    ts_diag_error(d, "%s: no entry '%s/%s'", a->display_name, a->prefix, qname);
    return NULL;
  }
  if (e->data) {
    if (len)
      *len = (size_t)e->size;
    return e->data;
  }
  if (e->size > a->lim.max_entry_bytes) {
    ts_diag_error(d, "%s: %s: the entry is %llu bytes (limit %llu)", a->display_name, qname,
                  (unsigned long long)e->size, (unsigned long long)a->lim.max_entry_bytes);
    return NULL;
  }
  uint64_t room;
  if (e->size > TS_FE_A_RATIO_MIN_BYTES &&
      (e->comp_size == 0 || (!__builtin_mul_overflow(e->comp_size, a->lim.max_ratio, &room) && e->size > room))) {
    ts_diag_error(d, "%s: %s: compression ratio over %llu (%llu bytes from %llu)", a->display_name, qname,
                  (unsigned long long)a->lim.max_ratio, (unsigned long long)e->size,
                  (unsigned long long)e->comp_size);
    return NULL;
  }
  if (e->size > a->lim.max_total_bytes || a->total_read > a->lim.max_total_bytes - e->size) {
    ts_diag_error(d, "%s: %s: reading %llu more bytes passes the limit of %llu for the archive", a->display_name,
                  qname, (unsigned long long)e->size, (unsigned long long)a->lim.max_total_bytes);
    return NULL;
  }
  /* size + 1 for the NUL, rounded up to the alignment aligned_alloc wants */
  if (e->size > (uint64_t)SIZE_MAX - 32) {
    ts_diag_error(d, "%s: %s: the entry is too large for this machine", a->display_name, qname);
    return NULL;
  }
  size_t cap = ((size_t)e->size + 1 + 15) & ~(size_t)15;
  uint8_t *buf = aligned_alloc(16, cap);
  if (!buf) {
    ts_diag_error(d, "%s: %s: out of memory for %llu bytes", a->display_name, qname, (unsigned long long)e->size);
    return NULL;
  }
  if (!ts_fe_a_inflate(a, e, buf, qname, d)) {
    free(buf);
    return NULL;
  }
  buf[e->size] = 0;
  e->data = buf;
  a->total_read += e->size;
  if (len)
    *len = (size_t)e->size;
  return buf;
}
