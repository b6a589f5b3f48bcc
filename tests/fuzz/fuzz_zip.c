/* tests/fuzz/fuzz_zip.c: the zip reader over hostile bytes: open from
 * memory, list every entry, read each one (under tight limits so that a
 * small input cannot make the target allocate gigabytes). */
#include "archive.h"
#include "fuzz.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_fe_limits lim;
  ts_fe_limits_default(&lim);
  lim.max_entries = 4096;
  lim.max_entry_bytes = 16u << 20;
  lim.max_total_bytes = 64u << 20;
  ts_diag d = {0};
  ts_fe_archive *a = ts_fe_archive_open_buffer(data, size, "fuzz.pt", &lim, &d);
  if (a) {
    (void)ts_fe_archive_prefix(a);
    (void)ts_fe_archive_display_name(a);
    uint32_t n = ts_fe_archive_count(a);
    for (uint32_t i = 0; i < n; i++) {
      const char *name = ts_fe_archive_name(a, i);
      size_t len = 0;
      if (name && ts_fe_archive_has(a, name))
        (void)ts_fe_archive_read(a, name, &len, &d);
    }
    /* a second read of an entry comes from the cache */
    if (n > 0 && ts_fe_archive_name(a, 0)) {
      size_t len = 0;
      (void)ts_fe_archive_read(a, ts_fe_archive_name(a, 0), &len, &d);
    }
    ts_fe_archive_close(a);
  }
  ts_diag_free(&d);
  return 0;
}
