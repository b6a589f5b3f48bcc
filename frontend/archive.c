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
  uint64_t version;    /* the serialization format version (checked at open) */
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
static TS_TLS const ts_fe_entry *ts_fe_a_sort_entries;

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
  uint64_t begin, end; /* local header to the end of the data (and data descriptor) */
  uint32_t index;
} ts_fe_a_span;

static int ts_fe_a_cmp_span(const void *a, const void *b) {
  const ts_fe_a_span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* One entry as one of its headers describes it. */
typedef struct ts_fe_a_hdr {
  uint16_t flags, method, nlen, xlen;
  uint32_t crc;
  uint64_t csize, usize, off;
  bool zip64; /* a zip64 extra field is there */
} ts_fe_a_hdr;

enum {
  TS_FE_A_DESCRIPTOR = 1 << 3, /* general purpose flag: CRC and sizes follow the data */
  TS_FE_A_STORED = 0,
  TS_FE_A_DEFLATED = 8,
  /* deflate makes at most 258 bytes from 2 bits (a length and a distance
   * code of one bit each): no stream inflates to more than 1032 times its
   * size */
  TS_FE_A_DEFLATE_MAX_RATIO = 1032,
};

/* The zip64 extra field (id 0x0001) among the `xlen` bytes at `x`: its 64-bit
 * values stand, in this order, for the fields of `h` that are all ones
 * (usize, csize, and the offset in a central directory record). */
static bool ts_fe_a_zip64(const uint8_t *x, uint32_t xlen, ts_fe_a_hdr *h, bool central) {
  for (uint32_t k = 0; k + 4 <= xlen;) {
    uint16_t id = ts_fe_a_u16(x + k), len = ts_fe_a_u16(x + k + 2);
    if (k + 4 + (uint32_t)len > xlen)
      return true; /* a torn field list: libzip refuses it if it matters */
    if (id == 0x0001) {
      const uint8_t *v = x + k + 4, *e = v + len;
      uint64_t *fields[3] = {&h->usize, &h->csize, &h->off};
      h->zip64 = true;
      for (int f = 0; f < (central ? 3 : 2); f++)
        if (*fields[f] == 0xFFFFFFFFu) {
          if (e - v < 8)
            return false;
          *fields[f] = ts_fe_a_u64(v);
          v += 8;
        }
      return true;
    }
    k += 4 + len;
  }
  return true;
}

/* Why an entry is refused, for the one-line message. */
typedef struct ts_fe_a_why {
  char text[256];
} ts_fe_a_why;

/* Compares one field of the central directory record with the local header
 * or data descriptor (`where`). */
static bool ts_fe_a_same(ts_fe_a_why *w, const char *what, uint64_t central, uint64_t local, const char *where) {
  if (central == local)
    return true;
  snprintf(w->text, sizeof w->text, "its central directory record says %s %llu, its %s %llu", what,
           (unsigned long long)central, where, (unsigned long long)local);
  return false;
}

/* The CRC and sizes in the data descriptor at `at` (after the data; its
 * signature is optional, its sizes 64-bit for a zip64 entry) against the
 * central record `c`; *end moves past the descriptor. */
static bool ts_fe_a_descriptor(ts_fe_a_raw *r, uint64_t at, const ts_fe_a_hdr *c, bool zip64, uint64_t *end,
                               ts_fe_a_why *w) {
  uint8_t b[24];
  size_t n = zip64 ? 20 : 12;
  uint64_t have = r->len - at < sizeof b ? r->len - at : sizeof b;
  if (have < n || !ts_fe_a_raw_read(r, at, b, (size_t)have)) {
    snprintf(w->text, sizeof w->text, "its data descriptor is missing (the file ends at byte %llu)",
             (unsigned long long)r->len);
    return false;
  }
  bool sig = ts_fe_a_u32(b) == 0x08074B50 && have >= n + 4;
  /* with the signature PK\7\10 when it is there; without, in case the CRC
   * merely looks like one */
  for (int k = sig ? 0 : 1; k < 2; k++) {
    const uint8_t *p = b + (k == 0 ? 4 : 0);
    uint64_t cs = zip64 ? ts_fe_a_u64(p + 4) : ts_fe_a_u32(p + 4);
    uint64_t us = zip64 ? ts_fe_a_u64(p + 12) : ts_fe_a_u32(p + 8);
    if (ts_fe_a_u32(p) == c->crc && cs == c->csize && us == c->usize) {
      *end = at + n + (k == 0 ? 4 : 0);
      return true;
    }
  }
  const uint8_t *p = b + (sig ? 4 : 0);
  uint64_t cs = zip64 ? ts_fe_a_u64(p + 4) : ts_fe_a_u32(p + 4);
  uint64_t us = zip64 ? ts_fe_a_u64(p + 12) : ts_fe_a_u32(p + 8);
  (void)(ts_fe_a_same(w, "CRC", c->crc, ts_fe_a_u32(p), "data descriptor") &&
         ts_fe_a_same(w, "compressed size", c->csize, cs, "data descriptor") &&
         ts_fe_a_same(w, "size", c->usize, us, "data descriptor"));
  return false;
}

/* Reads the central directory record at *pos (moving *pos past it) and the
 * local header it points to, and checks that they describe the same entry:
 * name, compression method, CRC and sizes (from the data descriptor when the
 * local header defers to one), a stored entry as long as its data, a
 * deflated one no longer than deflate can make of its bytes, all within the
 * file. `nb` holds 2 x 131072 bytes for names and extra fields. On success
 * `s` gets the entry's bytes in the file; on failure `name` its name (NUL-
 * terminated, for the message) and `w` the reason. */
static bool ts_fe_a_entry(ts_fe_a_raw *r, uint64_t *pos, uint8_t *nb, ts_fe_a_span *s, ts_fe_a_why *w) {
  uint8_t h[46], l[30];
  uint8_t *cx = nb, *lx = nb + 131072;
  cx[0] = 0;
  if (!ts_fe_a_raw_read(r, *pos, h, sizeof h) || ts_fe_a_u32(h) != 0x02014B50) {
    snprintf(w->text, sizeof w->text, "central directory record %u cannot be read", s->index);
    return false;
  }
  ts_fe_a_hdr c = {.flags = ts_fe_a_u16(h + 8),
                   .method = ts_fe_a_u16(h + 10),
                   .crc = ts_fe_a_u32(h + 16),
                   .csize = ts_fe_a_u32(h + 20),
                   .usize = ts_fe_a_u32(h + 24),
                   .nlen = ts_fe_a_u16(h + 28),
                   .xlen = ts_fe_a_u16(h + 30),
                   .off = ts_fe_a_u32(h + 42)};
  uint32_t cn = (uint32_t)c.nlen + c.xlen;
  if (!ts_fe_a_raw_read(r, *pos + 46, cx, cn) || !ts_fe_a_zip64(cx + c.nlen, c.xlen, &c, true)) {
    snprintf(w->text, sizeof w->text, "central directory record %u cannot be read", s->index);
    cx[0] = 0;
    return false;
  }
  *pos += 46 + (uint64_t)cn + ts_fe_a_u16(h + 32);
  if (!ts_fe_a_raw_read(r, c.off, l, sizeof l) || ts_fe_a_u32(l) != 0x04034B50) {
    cx[c.nlen] = 0;
    snprintf(w->text, sizeof w->text, "no local header at byte %llu, where its central directory record points",
             (unsigned long long)c.off);
    return false;
  }
  ts_fe_a_hdr lo = {.flags = ts_fe_a_u16(l + 6),
                    .method = ts_fe_a_u16(l + 8),
                    .crc = ts_fe_a_u32(l + 14),
                    .csize = ts_fe_a_u32(l + 18),
                    .usize = ts_fe_a_u32(l + 22),
                    .nlen = ts_fe_a_u16(l + 26),
                    .xlen = ts_fe_a_u16(l + 28)};
  uint32_t ln = (uint32_t)lo.nlen + lo.xlen;
  bool lread = ts_fe_a_raw_read(r, c.off + 30, lx, ln) && ts_fe_a_zip64(lx + lo.nlen, lo.xlen, &lo, false);
  cx[c.nlen] = 0; /* the name, for messages (the extra field is read) */
  if (!lread) {
    snprintf(w->text, sizeof w->text, "its local header at byte %llu cannot be read", (unsigned long long)c.off);
    return false;
  }
  if (lo.nlen != c.nlen || memcmp(lx, cx, c.nlen) != 0) {
    char q[128];
    lx[lo.nlen] = 0;
    snprintf(w->text, sizeof w->text, "its local header names '%s'", ts_fe_a_quote(q, sizeof q, (const char *)lx));
    return false;
  }
  if (!ts_fe_a_same(w, "compression method", c.method, lo.method, "local header"))
    return false;
  uint64_t data = c.off + 30 + ln, end;
  if (c.csize > r->len || data > r->len - c.csize) {
    snprintf(w->text, sizeof w->text, "its %llu bytes of data from byte %llu pass the end of the file (%llu bytes)",
             (unsigned long long)c.csize, (unsigned long long)data, (unsigned long long)r->len);
    return false;
  }
  end = data + c.csize;
  if (lo.flags & TS_FE_A_DESCRIPTOR) {
    /* the local fields may be zero (torch writes zeros) or the values */
    if ((lo.crc && !ts_fe_a_same(w, "CRC", c.crc, lo.crc, "local header")) ||
        (lo.csize && !ts_fe_a_same(w, "compressed size", c.csize, lo.csize, "local header")) ||
        (lo.usize && !ts_fe_a_same(w, "size", c.usize, lo.usize, "local header")) ||
        !ts_fe_a_descriptor(r, end, &c, lo.zip64 || c.zip64, &end, w))
      return false;
  } else if (!ts_fe_a_same(w, "CRC", c.crc, lo.crc, "local header") ||
             !ts_fe_a_same(w, "compressed size", c.csize, lo.csize, "local header") ||
             !ts_fe_a_same(w, "size", c.usize, lo.usize, "local header")) {
    return false;
  }
  if (c.method == TS_FE_A_STORED && c.usize != c.csize) {
    snprintf(w->text, sizeof w->text, "it is stored, yet its size is %llu and its data %llu bytes",
             (unsigned long long)c.usize, (unsigned long long)c.csize);
    return false;
  }
  if (c.method == TS_FE_A_DEFLATED && c.csize < UINT64_MAX / TS_FE_A_DEFLATE_MAX_RATIO &&
      c.usize > c.csize * TS_FE_A_DEFLATE_MAX_RATIO) {
    snprintf(w->text, sizeof w->text, "it claims %llu bytes, more than deflate makes of %llu",
             (unsigned long long)c.usize, (unsigned long long)c.csize);
    return false;
  }
  s->begin = c.off;
  s->end = end;
  return true;
}

/* Every entry's central directory record against its local header (even
 * entries nothing reads: a lie there is a broken archive, as PyTorch finds
 * it), then no two entries may share bytes: a central directory record
 * pointing into another entry's data (the trick of overlapping zip bombs,
 * where many records inflate the same compressed bytes) or two headers whose
 * data ranges overlap. libzip checks each record against its local header
 * (ZIP_CHECKCONS), but lets a data descriptor stand for the local sizes
 * unread and does not check the records against each other. */
static bool ts_fe_a_check_entries(ts_fe_archive *a, ts_fe_a_raw *r, ts_diag *d) {
  zip_int64_t ne = zip_get_num_entries(a->zip, 0);
  uint64_t pos;
  if (ne <= 0)
    return true;
  ts_fe_a_span *s = calloc((size_t)ne, sizeof *s);
  uint8_t *nb = malloc(2 * 131072);
  if (!s || !nb) {
    free(s);
    free(nb);
    ts_diag_error(d, "%s: out of memory reading the central directory", a->display_name);
    return false;
  }
  bool ok = ts_fe_a_cd_offset(r, &pos);
  if (!ok)
    ts_diag_error(d, "%s: broken zip archive: the end of central directory record cannot be read", a->display_name);
  for (zip_int64_t i = 0; ok && i < ne; i++) {
    ts_fe_a_why w;
    s[i].index = (uint32_t)i;
    if (!(ok = ts_fe_a_entry(r, &pos, nb, &s[i], &w))) {
      char q[128];
      if (nb[0])
        ts_diag_error(d, "%s: broken zip archive: entry '%s': %s", a->display_name,
                      ts_fe_a_quote(q, sizeof q, (const char *)nb), w.text);
      else
        ts_diag_error(d, "%s: broken zip archive: %s", a->display_name, w.text);
    }
  }
  if (ok) {
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
  free(nb);
  free(s);
  return ok;
}

static bool ts_fe_a_version(ts_fe_archive *a, ts_diag *d);

/* Finishes an archive whose zip is open: on failure everything is freed. */
static ts_fe_archive *ts_fe_a_finish(ts_fe_archive *a, ts_fe_a_raw *raw, ts_diag *d) {
  if (!ts_fe_a_scan(a, d) || !ts_fe_a_check_entries(a, raw, d) || !ts_fe_a_version(a, d)) {
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

/* The serialization format versions torch.jit.load of PyTorch 1.13 reads
 * (caffe2/serialize/versions.h: kMinSupportedFileFormatVersion,
 * kMaxSupportedFileFormatVersion). A version record is a number and a
 * newline ("3\n"); one over TS_FE_A_VERSION_MAX_BYTES is not read. */
enum { TS_FE_A_VERSION_MIN = 1, TS_FE_A_VERSION_MAX = 10, TS_FE_A_VERSION_MAX_BYTES = 4096 };

/* Reads `.data/version` or else `version` (PyTorch's order) as PyTorch's
 * std::stoull does: white space, a sign, decimal digits, anything after
 * them ignored; a minus wraps around (PyTorch prints "-1" for it). Then the
 * version must be one PyTorch 1.13 reads. */
static bool ts_fe_a_version(ts_fe_archive *a, ts_diag *d) {
  const char *rec = ts_fe_archive_has(a, ".data/version") ? ".data/version" : "version";
  ts_fe_entry *e = ts_fe_a_find(a, rec);
  if (!e) {
    ts_diag_error(d, "%s: no version record ('%s/version' or '%s/.data/version'): torch.jit.load refuses it",
                  a->display_name, a->prefix, a->prefix);
    return false;
  }
  if (e->size > TS_FE_A_VERSION_MAX_BYTES) {
    ts_diag_error(d, "%s: %s/%s: a version record of %llu bytes (a version number takes a few)", a->display_name,
                  a->prefix, rec, (unsigned long long)e->size);
    return false;
  }
  size_t n;
  const char *t = (const char *)ts_fe_archive_read(a, rec, &n, d);
  if (!t)
    return false;
  size_t i = 0;
  while (i < n && (t[i] == ' ' || (t[i] >= '\t' && t[i] <= '\r')))
    i++;
  bool neg = i < n && t[i] == '-';
  if (i < n && (t[i] == '-' || t[i] == '+'))
    i++;
  uint64_t v = 0;
  size_t digits = 0;
  bool over = false;
  for (; i < n && t[i] >= '0' && t[i] <= '9'; i++, digits++)
    over |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(t[i] - '0'), &v);
  char q[128], text[96];
  size_t tn = n < 80 ? n : 80;
  while (tn && (t[tn - 1] == '\n' || t[tn - 1] == '\r'))
    tn--; /* the record's own newline */
  snprintf(text, sizeof text, "%.*s", (int)tn, t);
  if (!digits || over) {
    ts_diag_error(d, "%s: %s/%s: '%s' is not a version number%s", a->display_name, a->prefix, rec,
                  ts_fe_a_quote(q, sizeof q, text), over ? " (out of range)" : "");
    return false;
  }
  if (neg)
    v = 0 - v;
  if (v < TS_FE_A_VERSION_MIN || v > TS_FE_A_VERSION_MAX) {
    ts_diag_error(d, "%s: %s/%s: serialization format version %lld is %s than torch.jit.load reads (versions %d to %d, "
                  "as PyTorch 1.13)", a->display_name, a->prefix, rec, (long long)v,
                  v < TS_FE_A_VERSION_MIN ? "older" : "newer", TS_FE_A_VERSION_MIN, TS_FE_A_VERSION_MAX);
    return false;
  }
  a->version = v;
  return true;
}

uint64_t ts_fe_archive_version(const ts_fe_archive *a) { return a->version; }
