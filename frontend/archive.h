/* frontend/archive.h: the zip archive torch.jit.save writes, read on libzip.
 *
 * Entries form an in-memory namespace: names are never joined to file-system
 * paths. Every read is bounded (entry count, entry size, total size,
 * compression ratio) so a hostile archive ends in an error, not in unbounded
 * allocation. */
#ifndef TSAOT_FRONTEND_ARCHIVE_H
#define TSAOT_FRONTEND_ARCHIVE_H

#include "ir.h"

typedef struct ts_fe_archive ts_fe_archive;

typedef struct ts_fe_limits {
  uint64_t max_entries;     /* entries in the central directory */
  uint64_t max_entry_bytes; /* uncompressed size of one entry */
  uint64_t max_total_bytes; /* uncompressed bytes read, all entries together */
  uint64_t max_ratio;       /* uncompressed / compressed size of one entry */
} ts_fe_limits;

/* Defaults: 65536 entries, 4 GiB per entry, 8 GiB in all, ratio 1000 (for
 * entries over 1 MiB; small ones may compress better). */
void ts_fe_limits_default(ts_fe_limits *l);

/* Opens `path` (ZIP_RDONLY | ZIP_CHECKCONS) and checks, before any entry is
 * read, that every entry's local header agrees with its central directory
 * record (name, method, CRC and sizes, from the data descriptor where torch
 * writes them) and that no two entries share bytes; then reads the version
 * record, which must be one torch.jit.load of PyTorch 1.13 reads (1 to 10).
 * `lim` NULL: defaults. NULL and a one-line reason in `d` ("model.pt: not a
 * zip archive: ...") on error. */
ts_fe_archive *ts_fe_archive_open(const char *path, const ts_fe_limits *lim, ts_diag *d);
/* Same over bytes in memory (not copied: they must outlive the archive). */
ts_fe_archive *ts_fe_archive_open_buffer(const void *data, size_t len, const char *display_name,
                                         const ts_fe_limits *lim, ts_diag *d);
void ts_fe_archive_close(ts_fe_archive *a);

/* The name the archive was opened with (for messages). */
const char *ts_fe_archive_display_name(const ts_fe_archive *a);
/* The serialization format version from `version` (or `.data/version`). */
uint64_t ts_fe_archive_version(const ts_fe_archive *a);
/* The top folder every entry lives under ("model" for "model/data.pkl"):
 * torch.jit.save puts all entries under one folder named after the file. */
const char *ts_fe_archive_prefix(const ts_fe_archive *a);

/* Entries, named relative to the prefix ("data.pkl", "code/__torch__/m.py"). */
uint32_t ts_fe_archive_count(const ts_fe_archive *a);
const char *ts_fe_archive_name(const ts_fe_archive *a, uint32_t i);
bool ts_fe_archive_has(const ts_fe_archive *a, const char *name);

/* The whole uncompressed entry `name` (relative to the prefix), read once and
 * cached: the bytes belong to the archive, stay valid until it is closed, are
 * 16-byte aligned and followed by one NUL byte (not counted in *len). NULL
 * and a reason in `d` when absent, over a limit, or corrupt (CRC, short
 * read). */
const uint8_t *ts_fe_archive_read(ts_fe_archive *a, const char *name, size_t *len, ts_diag *d);

#endif
