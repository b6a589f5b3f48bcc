/* tests/fuzz/fuzz_pickle.c: the restricted unpickler over hostile bytes,
 * read as a data.pkl whose tensors resolve against a small archive of
 * storages (data/0: 64 bytes, data/1: 4 bytes, data/2: 1 byte), then printed.
 * The input is unpickled from its own buffer, not from the archive's copy,
 * so that AddressSanitizer sees a read one byte past its end. */
#include "fuzz.h"
#include "pickle.h"
#include "zipmem.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t storage[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x80, 0x3f};
  const ts_fz_entry entries[] = {
      {"archive/data.pkl", ".", 1}, /* the reader wants one */
      {"archive/data/0", storage, sizeof storage},
      {"archive/data/1", storage, 4},
      {"archive/data/2", storage, 1},
  };
  size_t zlen = 0;
  uint8_t *zip = ts_fz_zip_stored(entries, sizeof entries / sizeof entries[0], &zlen);
  if (!zip)
    return 0;
  ts_diag d = {0};
  ts_fe_archive *ar = ts_fe_archive_open_buffer(zip, zlen, "fuzz.pt", NULL, &d);
  if (ar) {
    ts_arena arena;
    ts_arena_init(&arena, 0);
    ts_pv *v = ts_fe_unpickle(&arena, data, size, "fuzz.pt: data.pkl", ar, "data/", NULL, &d);
    if (v) {
      ts_buf b = {0};
      ts_pv_print(&b, v, 8);
      ts_buf_free(&b);
      (void)ts_pv_object_attr(v, "training");
    }
    ts_arena_release(&arena);
    ts_fe_archive_close(ar);
  }
  ts_diag_free(&d);
  free(zip);
  return 0;
}
