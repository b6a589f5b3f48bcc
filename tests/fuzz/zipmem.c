/* tests/fuzz/zipmem.c: see zipmem.h. Local headers, then the central
 * directory, then the end record; sizes and CRCs agree everywhere so that
 * libzip's ZIP_CHECKCONS accepts the archive. */
#include "zipmem.h"

#include <stdlib.h>
#include <string.h>

static uint32_t ts_fz_crc32(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

static uint8_t *ts_fz_u16(uint8_t *o, uint32_t v) {
  o[0] = (uint8_t)v;
  o[1] = (uint8_t)(v >> 8);
  return o + 2;
}

static uint8_t *ts_fz_u32(uint8_t *o, uint32_t v) {
  o = ts_fz_u16(o, v & 0xffffu);
  return ts_fz_u16(o, v >> 16);
}

/* The fields a local header and a central directory record share, from
 * "version needed" to "extra length". */
static uint8_t *ts_fz_common(uint8_t *o, uint32_t crc, uint32_t size, uint32_t namelen) {
  o = ts_fz_u16(o, 20);     /* version needed: 2.0 */
  o = ts_fz_u16(o, 0);      /* flags */
  o = ts_fz_u16(o, 0);      /* method: stored */
  o = ts_fz_u16(o, 0);      /* time */
  o = ts_fz_u16(o, 0x21);   /* date: 1980-01-01 */
  o = ts_fz_u32(o, crc);
  o = ts_fz_u32(o, size);   /* compressed */
  o = ts_fz_u32(o, size);   /* uncompressed */
  o = ts_fz_u16(o, namelen);
  return ts_fz_u16(o, 0);   /* extra length */
}

uint8_t *ts_fz_zip_stored(const ts_fz_entry *e, size_t n, size_t *len) {
  size_t total = 22;
  if (n > 0xffff)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    size_t nl = strlen(e[i].name);
    if (nl > 0xffff || e[i].len > 0x7fffffffu)
      return NULL;
    total += 30 + nl + e[i].len + 46 + nl;
  }
  if (total > 0x7fffffffu)
    return NULL;
  uint8_t *out = malloc(total);
  uint32_t *offs = malloc((n ? n : 1) * sizeof *offs);
  uint32_t *crcs = malloc((n ? n : 1) * sizeof *crcs);
  if (!out || !offs || !crcs) {
    free(out);
    free(offs);
    free(crcs);
    return NULL;
  }
  uint8_t *o = out;
  for (size_t i = 0; i < n; i++) {
    uint32_t nl = (uint32_t)strlen(e[i].name);
    offs[i] = (uint32_t)(o - out);
    crcs[i] = ts_fz_crc32(e[i].data, e[i].len);
    o = ts_fz_u32(o, 0x04034b50u);
    o = ts_fz_common(o, crcs[i], (uint32_t)e[i].len, nl);
    memcpy(o, e[i].name, nl);
    o += nl;
    if (e[i].len)
      memcpy(o, e[i].data, e[i].len);
    o += e[i].len;
  }
  uint32_t cd = (uint32_t)(o - out);
  for (size_t i = 0; i < n; i++) {
    uint32_t nl = (uint32_t)strlen(e[i].name);
    o = ts_fz_u32(o, 0x02014b50u);
    o = ts_fz_u16(o, 20); /* version made by */
    o = ts_fz_common(o, crcs[i], (uint32_t)e[i].len, nl);
    o = ts_fz_u16(o, 0);  /* comment length */
    o = ts_fz_u16(o, 0);  /* disk */
    o = ts_fz_u16(o, 0);  /* internal attributes */
    o = ts_fz_u32(o, 0);  /* external attributes */
    o = ts_fz_u32(o, offs[i]);
    memcpy(o, e[i].name, nl);
    o += nl;
  }
  uint32_t cdlen = (uint32_t)(o - out) - cd;
  o = ts_fz_u32(o, 0x06054b50u);
  o = ts_fz_u16(o, 0);
  o = ts_fz_u16(o, 0);
  o = ts_fz_u16(o, (uint32_t)n);
  o = ts_fz_u16(o, (uint32_t)n);
  o = ts_fz_u32(o, cdlen);
  o = ts_fz_u32(o, cd);
  o = ts_fz_u16(o, 0); /* comment length */
  free(offs);
  free(crcs);
  *len = (size_t)(o - out);
  return out;
}
