/* tests/unit/test_archive.c: the zip archive reader (frontend/archive.c) on
 * the real fixtures, from a path and from memory, its limits, and the broken
 * archives of tests/fixtures/hostile (see make_hostile.py). */
#include "archive.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX TSAOT_SOURCE_DIR "/tests/fixtures/"
#define HOSTILE FIX "hostile/"

/* Exactly one error, on one line: "error: ...\n". */
static bool one_line(const ts_diag *d) {
  const char *t = d->text.data;
  if (d->errors != 1 || !t)
    return false;
  const char *nl = strchr(t, '\n');
  return strncmp(t, "error: ", 7) == 0 && nl && nl[1] == 0;
}

static bool has(const ts_diag *d, const char *s) { return d->text.data && strstr(d->text.data, s); }

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return b;
}

static void test_fixture(void) {
  ts_diag d = {0};
  ts_fe_archive *a = ts_fe_archive_open(FIX "small_mlp/model.pt", NULL, &d);
  if (!TS_CHECK(a != NULL))
    return;
  TS_CHECK_INTEQ(d.errors, 0);
  TS_CHECK_STREQ(ts_fe_archive_display_name(a), FIX "small_mlp/model.pt");
  TS_CHECK_STREQ(ts_fe_archive_prefix(a), "archive");
  TS_CHECK_INTEQ(ts_fe_archive_count(a), 23);
  /* central directory order, names relative to the prefix */
  TS_CHECK_STREQ(ts_fe_archive_name(a, 0), "data/0");
  TS_CHECK_STREQ(ts_fe_archive_name(a, 6), "data.pkl");
  TS_CHECK_STREQ(ts_fe_archive_name(a, 22), "version");
  TS_CHECK(ts_fe_archive_name(a, 23) == NULL);
  TS_CHECK(ts_fe_archive_has(a, "data.pkl"));
  TS_CHECK(ts_fe_archive_has(a, "code/__torch__/torch/nn/modules/linear.py"));
  TS_CHECK(!ts_fe_archive_has(a, "archive/data.pkl"));
  TS_CHECK(!ts_fe_archive_has(a, "data"));
  TS_CHECK(!ts_fe_archive_has(a, "data/"));
  TS_CHECK(!ts_fe_archive_has(a, ""));
  TS_CHECK(!ts_fe_archive_has(a, NULL));

  size_t len = 0;
  const uint8_t *pkl = ts_fe_archive_read(a, "data.pkl", &len, &d);
  TS_CHECK(pkl != NULL);
  TS_CHECK_INTEQ(len, 866);
  TS_CHECK(((uintptr_t)pkl & 15) == 0);
  TS_CHECK(pkl[0] == 0x80 && pkl[1] == 2 && pkl[len - 1] == '.' && pkl[len] == 0);
  size_t len2 = 0;
  TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len2, &d) == pkl); /* cached */
  TS_CHECK_INTEQ(len2, 866);
  /* a deflated entry */
  const uint8_t *code = ts_fe_archive_read(a, "code/__torch__/torch/nn/modules/linear.py", &len, &d);
  TS_CHECK(code != NULL && len == 417 && strncmp((const char *)code, "class Linear", 12) == 0);
  TS_CHECK(code && strlen((const char *)code) == len);
  const uint8_t *w = ts_fe_archive_read(a, "data/0", &len, &d);
  TS_CHECK(w && len == 2048 && ((uintptr_t)w & 15) == 0);
  float f0;
  memcpy(&f0, w, 4);
  TS_CHECK(f0 > 0.0298f && f0 < 0.0299f); /* fc1.weight[0, 0] as torch reads it */
  const uint8_t *v = ts_fe_archive_read(a, "version", &len, &d);
  TS_CHECK(v && len == 2 && v[0] == '3' && v[1] == '\n' && v[2] == 0);
  TS_CHECK_INTEQ(ts_fe_archive_version(a), 3);
  TS_CHECK_INTEQ(d.errors, 0);

  TS_CHECK(ts_fe_archive_read(a, "data/99", &len, &d) == NULL);
  TS_CHECK_INTEQ(len, 0);
  TS_CHECK(one_line(&d) && has(&d, "no entry 'archive/data/99'"));
  ts_diag_free(&d);
  /* names from the archive are quoted, never echoed raw */
  TS_CHECK(ts_fe_archive_read(a, "bad\nname", &len, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "bad\\x0aname"));
  ts_diag_free(&d);
  TS_CHECK(ts_fe_archive_read(a, NULL, NULL, &d) == NULL);
  TS_CHECK(one_line(&d));
  ts_diag_free(&d);
  TS_CHECK(ts_fe_archive_read(a, "nothing", NULL, NULL) == NULL); /* NULL sink */
  ts_fe_archive_close(a);
  ts_fe_archive_close(NULL);
}

static void test_every_fixture(void) {
  static const char *const names[] = {"if_add", "lstm_cell", "loops", "small_mlp", "tiny_cnn", "tiny_cnn_traced"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char path[512];
    snprintf(path, sizeof path, FIX "%s/model.pt", names[i]);
    ts_diag d = {0};
    ts_fe_archive *a = ts_fe_archive_open(path, NULL, &d);
    if (!TS_CHECK(a != NULL)) {
      fprintf(stderr, "  %s: %s", path, d.text.data ? d.text.data : "");
      ts_diag_free(&d);
      continue;
    }
    /* every entry reads back, CRC checked */
    for (uint32_t k = 0; k < ts_fe_archive_count(a); k++) {
      size_t len = 0;
      TS_CHECK(ts_fe_archive_read(a, ts_fe_archive_name(a, k), &len, &d) != NULL);
    }
    TS_CHECK_INTEQ(d.errors, 0);
    TS_CHECK(ts_fe_archive_has(a, "constants.pkl"));
    ts_fe_archive_close(a);
  }
}

static void test_buffer(void) {
  size_t n = 0;
  uint8_t *bytes = slurp(FIX "tiny_cnn/model.pt", &n);
  if (!TS_CHECK(bytes != NULL))
    return;
  ts_diag d = {0};
  ts_fe_archive *a = ts_fe_archive_open_buffer(bytes, n, "mem.pt", NULL, &d);
  TS_CHECK(a != NULL);
  if (a) {
    TS_CHECK_STREQ(ts_fe_archive_display_name(a), "mem.pt");
    TS_CHECK_STREQ(ts_fe_archive_prefix(a), "archive");
    size_t len = 0;
    const uint8_t *p = ts_fe_archive_read(a, "data/6", &len, &d);
    TS_CHECK(p && len == 8);
    int64_t nbt = -1;
    if (p)
      memcpy(&nbt, p, 8);
    TS_CHECK_INTEQ(nbt, 0); /* bn.num_batches_tracked */
    ts_fe_archive_close(a);
  }
  /* a copy cut short, and bytes that are not a zip at all */
  TS_CHECK(ts_fe_archive_open_buffer(bytes, n - 30, "cut.pt", NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "cut.pt: "));
  ts_diag_free(&d);
  TS_CHECK(ts_fe_archive_open_buffer("hello world", 11, "text.pt", NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "text.pt: not a zip archive"));
  ts_diag_free(&d);
  TS_CHECK(ts_fe_archive_open_buffer(NULL, 0, NULL, NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "<archive>: "));
  ts_diag_free(&d);
  free(bytes);

  TS_CHECK(ts_fe_archive_open(FIX "no/such/model.pt", NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "no/such/model.pt: cannot open"));
  ts_diag_free(&d);
  TS_CHECK(ts_fe_archive_open(FIX "if_add/case.txt", NULL, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "not a zip archive"));
  ts_diag_free(&d);
}

static void test_limits(void) {
  ts_fe_limits def;
  ts_fe_limits_default(&def);
  TS_CHECK_INTEQ(def.max_entries, 65536);
  TS_CHECK(def.max_entry_bytes == (uint64_t)4 << 30);
  TS_CHECK(def.max_total_bytes == (uint64_t)8 << 30);
  TS_CHECK_INTEQ(def.max_ratio, 1000);

  ts_diag d = {0};
  ts_fe_limits l = def;
  l.max_entries = 4; /* if_add has 5 */
  TS_CHECK(ts_fe_archive_open(FIX "if_add/model.pt", &l, &d) == NULL);
  TS_CHECK(one_line(&d) && has(&d, "5 entries (limit 4)"));
  ts_diag_free(&d);
  l.max_entries = 5;
  ts_fe_archive *a = ts_fe_archive_open(FIX "if_add/model.pt", &l, &d);
  TS_CHECK(a != NULL);
  ts_fe_archive_close(a);

  l = def;
  l.max_entry_bytes = 90; /* data.pkl is 91 */
  a = ts_fe_archive_open(FIX "if_add/model.pt", &l, &d);
  if (TS_CHECK(a != NULL)) {
    size_t len;
    TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len, &d) == NULL);
    TS_CHECK(one_line(&d) && has(&d, "data.pkl: the entry is 91 bytes (limit 90)"));
    ts_diag_free(&d);
    TS_CHECK(ts_fe_archive_read(a, "constants.pkl", &len, &d) != NULL);
    ts_fe_archive_close(a);
  }

  l = def;
  l.max_total_bytes = 96; /* version 2 (read at open) + data.pkl 91 + constants.pkl 4 */
  a = ts_fe_archive_open(FIX "if_add/model.pt", &l, &d);
  if (TS_CHECK(a != NULL)) {
    size_t len;
    TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len, &d) != NULL);
    TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len, &d) != NULL); /* cached: not counted twice */
    TS_CHECK(ts_fe_archive_read(a, "constants.pkl", &len, &d) == NULL);
    TS_CHECK(one_line(&d) && has(&d, "constants.pkl: reading 4 more bytes passes the limit of 96"));
    ts_diag_free(&d);
    TS_CHECK(ts_fe_archive_read(a, "version", &len, &d) != NULL); /* cached at open */
    ts_fe_archive_close(a);
  }

  /* the zip bomb passes with a looser ratio limit */
  l = def;
  l.max_ratio = 2000;
  a = ts_fe_archive_open(HOSTILE "zip_bomb.pt", &l, &d);
  if (TS_CHECK(a != NULL)) {
    size_t len = 0;
    const uint8_t *p = ts_fe_archive_read(a, "data.pkl", &len, &d);
    TS_CHECK(p && len == (6u << 20) + 4 && p[len - 1] == 0 && p[len] == 0);
    ts_fe_archive_close(a);
  }
  TS_CHECK_INTEQ(d.errors, 0);
}

/* Archive-level hostile files: where they fail and why. */
static void test_hostile(void) {
  static const struct {
    const char *file;
    bool at_open; /* fails in ts_fe_archive_open, else reading data.pkl */
    const char *why;
  } cases[] = {
      {"truncated_zip", true, "not a zip archive"},
      {"bad_central_directory", true, "not a zip archive"},
      {"bad_local_header", true, "broken zip archive: Zip archive inconsistent"},
      {"crc_mismatch", false, "data.pkl: CRC error"},
      {"size_lie_long", false, "data.pkl: short read: 91 of 191 bytes"},
      {"size_lie_short", false, "data.pkl: the entry is longer than its recorded size (81 bytes)"},
      {"zip_bomb", false, "data.pkl: compression ratio over 1000 (6291460 bytes from "},
      {"no_data_pkl", true, "no data.pkl under 'archive/'"},
      {"two_top_folders", true, "entries under two top folders ('archive' and 'other')"},
      {"dotdot_entry", true, "entry 'archive/../../etc/passwd' has a '..' component"},
      {"absolute_entry", true, "entry '/archive/x' is not under a top folder"},
      {"duplicate_entry", true, "two entries have the same name"},
      {"empty_archive", true, "the archive is empty"},
      {"bitflip_central_crc", true, "broken zip archive: Zip archive inconsistent"},
      {"bitflip_central_offset", true, "not a zip archive"},
      {"bitflip_central_size", true, "broken zip archive: Zip archive inconsistent"},
      {"bitflip_data_pkl", false, "data.pkl: CRC error"},
      {"bitflip_local_method", true, "broken zip archive: Zip archive inconsistent"},
      {"bitflip_local_signature", true, "not a zip archive"},
      {"bitflip_local_size", true, "broken zip archive: Zip archive inconsistent"},
      {"overlapping_entries", true,
       "broken zip archive: entries 'archive/extra' (bytes 1209 to 1299) and 'archive/inner' (from byte 1252) overlap"},
      /* lies libzip lets pass: checked for every entry at open, read or not */
      {"lie_version_size", true,
       "broken zip archive: entry 'archive/version': its central directory record says size 4294967294, its data "
       "descriptor 2"},
      {"lie_unread_size", true,
       "entry 'archive/code/__torch__/fixture_models.py.debug_pkl': its central directory record says size "
       "4294967294, its data descriptor 493"},
      {"lie_unread_crc", true, "debug_pkl': its central directory record says CRC 305419896, its data descriptor"},
      {"lie_unread_descriptor", true, "debug_pkl': its central directory record says size 493, its data descriptor 1493"},
      {"lie_unread_stored", true, "debug_pkl': it is stored, yet its size is 1073741824 and its data 493 bytes"},
      {"lie_unread_deflated", true, "debug_pkl': it claims 2147483648 bytes, more than deflate makes of 334"},
      /* the version record, read at open as torch.jit.load of PyTorch 1.13 reads it */
      {"version_too_new", true,
       "archive/version: serialization format version 11 is newer than torch.jit.load reads (versions 1 to 10, as "
       "PyTorch 1.13)"},
      {"version_too_old", true, "archive/version: serialization format version 0 is older than torch.jit.load reads"},
      {"version_negative", true, "archive/version: serialization format version -1 is newer"},
      {"version_garbage", true, "archive/version: 'three' is not a version number"},
      {"version_overflow", true, "archive/version: '18446744073709551616' is not a version number (out of range)"},
      {"version_missing", true, "no version record ('archive/version' or 'archive/.data/version')"},
      {"version_data_newer", true, "archive/.data/version: serialization format version 11 is newer"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[512];
    snprintf(path, sizeof path, HOSTILE "%s.pt", cases[i].file);
    ts_diag d = {0};
    ts_fe_archive *a = ts_fe_archive_open(path, NULL, &d);
    bool ok;
    if (cases[i].at_open) {
      ok = TS_CHECK(a == NULL);
    } else {
      ok = TS_CHECK(a != NULL);
      if (a) {
        size_t len = 1;
        ok = TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len, &d) == NULL) && TS_CHECK_INTEQ(len, 0);
        /* a failed read is not cached as a success */
        TS_CHECK(ts_fe_archive_read(a, "data.pkl", &len, NULL) == NULL);
        ts_fe_archive_close(a);
      }
    }
    if (ok && !(TS_CHECK(one_line(&d)) && TS_CHECK(has(&d, cases[i].why)) && TS_CHECK(has(&d, path))))
      fprintf(stderr, "  %s: got: %s", cases[i].file, d.text.data ? d.text.data : "(nothing)\n");
    ts_diag_free(&d);
  }

  /* folder entries are skipped */
  ts_diag d = {0};
  ts_fe_archive *a = ts_fe_archive_open(HOSTILE "ok_folder_entries.pt", NULL, &d);
  if (TS_CHECK(a != NULL)) {
    TS_CHECK_INTEQ(ts_fe_archive_count(a), 6);
    TS_CHECK_STREQ(ts_fe_archive_name(a, 0), "data.pkl");
    TS_CHECK(!ts_fe_archive_has(a, "data/") && !ts_fe_archive_has(a, ""));
    TS_CHECK(ts_fe_archive_has(a, "data/0"));
    ts_fe_archive_close(a);
  }
  TS_CHECK_INTEQ(d.errors, 0);

  /* the versions PyTorch 1.13 reads: .data/version first, std::stoull's
   * leniency (white space, a sign, text after the digits) */
  static const struct {
    const char *file;
    uint64_t version;
  } oks[] = {{"ok_version_data", 10}, {"ok_version_lenient", 7}, {"ok_torch_descriptors", 3}, {"ok_zip64_descriptors", 3}};
  for (size_t i = 0; i < sizeof oks / sizeof *oks; i++) {
    char path[512];
    snprintf(path, sizeof path, HOSTILE "%s.pt", oks[i].file);
    a = ts_fe_archive_open(path, NULL, &d);
    if (TS_CHECK(a != NULL)) {
      TS_CHECK_INTEQ(ts_fe_archive_version(a), oks[i].version);
      for (uint32_t k = 0; k < ts_fe_archive_count(a); k++)
        TS_CHECK(ts_fe_archive_read(a, ts_fe_archive_name(a, k), NULL, &d) != NULL);
      ts_fe_archive_close(a);
    }
  }
  TS_CHECK_INTEQ(d.errors, 0);
  if (d.errors)
    fprintf(stderr, "  %s", d.text.data);
  ts_diag_free(&d);
}

int main(void) {
  test_fixture();
  test_every_fixture();
  test_buffer();
  test_limits();
  test_hostile();
  return ts_test_finish();
}
