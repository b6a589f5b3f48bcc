/* tests/fuzz/zipmem.h: a stored (uncompressed) zip archive written in
 * memory, for targets that need an archive around their input (the
 * unpickler's storages, the TorchScript source of a model). */
#ifndef TSAOT_FUZZ_ZIPMEM_H
#define TSAOT_FUZZ_ZIPMEM_H

#include <stddef.h>
#include <stdint.h>

typedef struct ts_fz_entry {
  const char *name; /* full name inside the zip: "archive/data.pkl" */
  const void *data;
  size_t len;
} ts_fz_entry;

/* A new malloc'd zip of the `n` entries, its size in *len; NULL when out of
 * memory or an entry does not fit the 32-bit zip format. */
uint8_t *ts_fz_zip_stored(const ts_fz_entry *e, size_t n, size_t *len);

#endif
