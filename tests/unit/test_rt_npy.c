/* tests/unit/test_rt_npy.c: runtime/hosted/npy.c against files NumPy wrote, round
 * trips of every dtype NumPy has, Fortran order, 0-d and empty arrays, and
 * hostile headers. The byte strings are NumPy 1.24's np.save output (the
 * python line above each). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "test.h"

#define TMPDIR TSAOT_BINARY_DIR "/tests/unit"

/* Bytes of a whole file, malloc'd; NULL if unreadable. */
static uint8_t *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *d = malloc(1 << 16);
  *len = d ? fread(d, 1, 1 << 16, f) : 0;
  fclose(f);
  return d;
}

/* A tensor's element k (row order of a contiguous tensor) as double. */
static double at(const ts_rt_tensor *t, int64_t k) {
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  return ts_rt_load_f64((const uint8_t *)ts_rt_tensor_data(t) + k * (int64_t)es, (ts_dtype)t->dtype);
}

/* np.save(f, np.asfortranarray(np.arange(6, dtype='<i4').reshape(2, 3))) */
static const char npy_fortran_i4[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }"
    "                                                           \n"
    "\x00\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x04\x00\x00\x00\x02\x00\x00\x00\x05\x00\x00\x00";
/* np.save(f, np.array([1.5, -2], dtype='<f4')) */
static const char npy_f4[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
                             "                                                            \n"
                             "\x00\x00\xc0?\x00\x00\x00\xc0";
/* np.save(f, np.array(7, dtype='<i8')) */
static const char npy_0d[] = "\x93NUMPY\x01\x00v\x00{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
                             "                                                              \n"
                             "\x07\x00\x00\x00\x00\x00\x00\x00";
/* np.save(f, np.zeros((2, 0, 3), dtype='<f8')) */
static const char npy_empty[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0, 3), }"
                                "                                                       \n";

/* np.save(f, np.array([[1+2j, -3.5+0.25j]], dtype='<c8')) */
static const char npy_c8[] = "\x93NUMPY\x01\x00v\x00{'descr': '<c8', 'fortran_order': False, 'shape': (1, 2), }"
    "                                                          \x0a"
    "\x00\x00\x80?\x00\x00\x00@\x00\x00`\xc0\x00\x00\x80>";
/* np.save(f, np.array([[1+2j, -3.5+0.25j]], dtype='<c16')) */
static const char npy_c16[] = "\x93NUMPY\x01\x00v\x00{'descr': '<c16', 'fortran_order': False, 'shape': (1, 2), }"
    "                                                         \x0a"
    "\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\x00@\x00\x00\x00\x00\x00\x00\x0c\xc0\x00\x00\x00\x00\x00\x00\xd0?";

static void test_numpy_files(ts_rt_ctx *c) {
  ts_rt_tensor *t = ts_rt_npy_parse(c, npy_fortran_i4, sizeof npy_fortran_i4 - 1, "f.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(t->dtype, TS_DT_INT32);
    TS_CHECK_INTEQ(t->ndim, 2);
    TS_CHECK_INTEQ(t->sizes[0], 2);
    TS_CHECK_INTEQ(t->sizes[1], 3);
    TS_CHECK(ts_rt_tensor_is_contiguous(t));
    for (int k = 0; k < 6; k++) TS_CHECK_INTEQ((int)at(t, k), k);
    ts_rt_tensor_release(t);
  }
  t = ts_rt_npy_parse(c, npy_f4, sizeof npy_f4 - 1, "f4.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(t->dtype, TS_DT_FLOAT32);
    TS_CHECK(t->ndim == 1 && t->sizes[0] == 2);
    TS_CHECK(at(t, 0) == 1.5 && at(t, 1) == -2.0);
    ts_rt_tensor_release(t);
  }
  t = ts_rt_npy_parse(c, npy_0d, sizeof npy_0d - 1, "0d.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(t->dtype, TS_DT_INT64);
    TS_CHECK_INTEQ(t->ndim, 0);
    TS_CHECK(at(t, 0) == 7.0);
    ts_rt_tensor_release(t);
  }
  t = ts_rt_npy_parse(c, npy_empty, sizeof npy_empty - 1, "e.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(t->dtype, TS_DT_FLOAT64);
    TS_CHECK_INTEQ(t->ndim, 3);
    TS_CHECK_INTEQ(t->sizes[1], 0);
    TS_CHECK_INTEQ(ts_rt_tensor_numel(t), 0);
    ts_rt_tensor_release(t);
  }
  TS_CHECK(!c->failed);
}

/* Writing the same arrays gives NumPy's bytes exactly. */
static void test_write_matches_numpy(ts_rt_ctx *c) {
  struct {
    const char *bytes;
    size_t len;
  } cases[] = {{npy_f4, sizeof npy_f4 - 1}, {npy_0d, sizeof npy_0d - 1}, {npy_empty, sizeof npy_empty - 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_rt_tensor *t = ts_rt_npy_parse(c, cases[i].bytes, cases[i].len, "in.npy");
    if (!TS_CHECK(t)) continue;
    const char *path = TMPDIR "/npy_write.npy";
    TS_CHECK(ts_rt_npy_write(c, path, t));
    size_t len = 0;
    uint8_t *d = read_all(path, &len);
    TS_CHECK_INTEQ(len, cases[i].len);
    TS_CHECK(d && len == cases[i].len && memcmp(d, cases[i].bytes, len) == 0);
    free(d);
    ts_rt_tensor_release(t);
    remove(path);
  }
}

/* complex64 and complex128 arrays read with both parts and written back
 * byte for byte. */
static void test_complex(ts_rt_ctx *c) {
  struct {
    const char *bytes;
    size_t len;
    ts_dtype dt;
  } cases[] = {{npy_c8, sizeof npy_c8 - 1, TS_DT_COMPLEX64}, {npy_c16, sizeof npy_c16 - 1, TS_DT_COMPLEX128}};
  static const double want[4] = {1, 2, -3.5, 0.25};
  for (size_t i = 0; i < 2; i++) {
    ts_rt_tensor *t = ts_rt_npy_parse(c, cases[i].bytes, cases[i].len, "c.npy");
    if (!TS_CHECK(t)) continue;
    TS_CHECK_INTEQ(t->dtype, cases[i].dt);
    TS_CHECK(t->ndim == 2 && t->sizes[0] == 1 && t->sizes[1] == 2);
    for (int k = 0; k < 4; k++) {
      double v = cases[i].dt == TS_DT_COMPLEX64 ? ((const float *)ts_rt_tensor_data(t))[k]
                                                : ((const double *)ts_rt_tensor_data(t))[k];
      TS_CHECK(v == want[k]);
    }
    const char *path = TMPDIR "/npy_complex.npy";
    TS_CHECK(ts_rt_npy_write(c, path, t));
    size_t len = 0;
    uint8_t *d = read_all(path, &len);
    TS_CHECK(d && len == cases[i].len && memcmp(d, cases[i].bytes, len) == 0);
    free(d);
    remove(path);
    ts_rt_tensor_release(t);
  }
}

/* Every dtype NumPy has: a transposed (non-contiguous) view written and read
 * back holds the view's values in row order. */
static void test_round_trip(ts_rt_ctx *c) {
  static const ts_dtype dts[] = {TS_DT_FLOAT32, TS_DT_FLOAT64, TS_DT_FLOAT16, TS_DT_INT64, TS_DT_INT32,
                                 TS_DT_INT16,   TS_DT_INT8,    TS_DT_UINT8,   TS_DT_BOOL};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    int64_t sizes[2] = {2, 3};
    ts_rt_tensor *t = ts_rt_tensor_new(c, dts[i], 2, sizes, true);
    if (!TS_CHECK(t)) return;
    size_t es = ts_dtype_size(dts[i]);
    for (int k = 0; k < 6; k++) {
      double v = dts[i] == TS_DT_BOOL ? (k % 2) : (k * 3 - 5) * (ts_rt_dtype_is_float(dts[i]) ? 0.5 : 1.0);
      if (dts[i] == TS_DT_UINT8) v = k * 40;
      ts_rt_store_f64((uint8_t *)ts_rt_tensor_data(t) + k * es, dts[i], v);
    }
    int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
    ts_rt_tensor *v = ts_rt_tensor_view(c, t, 0, 2, tsz, tst);
    if (!TS_CHECK(v)) return;
    const char *path = TMPDIR "/npy_rt.npy";
    TS_CHECK(ts_rt_npy_write(c, path, v));
    ts_rt_tensor *r = ts_rt_npy_read(c, path);
    if (TS_CHECK(r)) {
      TS_CHECK_INTEQ(r->dtype, dts[i]);
      TS_CHECK(r->ndim == 2 && r->sizes[0] == 3 && r->sizes[1] == 2);
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++) {
          if (!TS_CHECK(at(r, a * 2 + b) == at(t, b * 3 + a))) fprintf(stderr, "  dtype %s\n", ts_dtype_name(dts[i]));
        }
      ts_rt_tensor_release(r);
    }
    remove(path);
    ts_rt_tensor_release(v);
    ts_rt_tensor_release(t);
  }
  /* bfloat16 has no NumPy dtype. */
  ts_rt_tensor *b = ts_rt_tensor_new(c, TS_DT_BFLOAT16, 0, NULL, true);
  if (TS_CHECK(b)) {
    TS_CHECK(!ts_rt_npy_write(c, TMPDIR "/npy_bf16.npy", b));
    TS_CHECK(c->failed && strstr(c->err.data, "npy_bf16.npy: cannot write a"));
    ts_rt_clear_error(c);
    ts_rt_tensor_release(b);
  }
  TS_CHECK(!ts_rt_npy_read(c, TMPDIR "/no_such_file.npy"));
  TS_CHECK(c->failed && strstr(c->err.data, "no_such_file.npy"));
  ts_rt_clear_error(c);
}

/* A version-1 file with the given header text (padded) and data bytes. */
static size_t make_npy(uint8_t *out, const char *header, const void *data, size_t dlen) {
  size_t hl = strlen(header);
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (uint8_t)(hl & 0xff);
  out[9] = (uint8_t)(hl >> 8);
  memcpy(out + 10, header, hl);
  memcpy(out + 10 + hl, data, dlen);
  return 10 + hl + dlen;
}

static void expect_fail(ts_rt_ctx *c, const void *bytes, size_t len, const char *want) {
  ts_rt_tensor *t = ts_rt_npy_parse(c, bytes, len, "bad.npy");
  if (!TS_CHECK(!t)) {
    fprintf(stderr, "  accepted; expected \"%s\"\n", want);
    ts_rt_tensor_release(t);
    return;
  }
  if (!TS_CHECK(c->failed && strstr(c->err.data, want) && strstr(c->err.data, "bad.npy")))
    fprintf(stderr, "  got \"%s\", expected \"%s\"\n", c->err.data ? c->err.data : "", want);
  ts_rt_clear_error(c);
}

static void test_hostile(ts_rt_ctx *c) {
  static uint8_t buf[4096];
  uint8_t data[64] = {0};
  static const struct {
    const char *header;
    size_t dlen;
    const char *want;
  } cases[] = {
      {"{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }", 32, "unsupported dtype '<c32'"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", 8, "unsupported dtype '>f4'"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", 8, "unsupported dtype"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 8, "structured"},
      {"{'descr': '<f4', 'shape': (1,), }", 8, "lacks"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 8, "unexpected key"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 8, "repeated key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 12, "'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 8, "'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 8, "'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}", 8, "too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}", 8, "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 20, "truncated .npy data"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,)}", 8, "fortran_order"},
      {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (1,)}", 8, "fortran_order"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", 8, "after the header"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 8, "unsupported dtype '<f4, '"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 8, "not a valid"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", 8, "not a valid"},
      {"", 8, "not a valid"},
      {"{'de\\x63r': '<f4', 'fortran_order': False, 'shape': (1,)}", 8, "not a valid"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = make_npy(buf, cases[i].header, data, cases[i].dlen);
    expect_fail(c, buf, n, cases[i].want);
  }
  /* 65 dimensions. */
  char h[512] = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
  for (int k = 0; k < 65; k++) strcat(h, "1, ");
  strcat(h, ")}");
  expect_fail(c, buf, make_npy(buf, h, data, 1), "64 dimensions");
  /* 64 are fine. */
  h[strlen(h) - 5] = ')', h[strlen(h) - 4] = '}', h[strlen(h) - 3] = '\0';
  size_t n = make_npy(buf, h, data, 1);
  ts_rt_tensor *t = ts_rt_npy_parse(c, buf, n, "ok.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(t->ndim, 64);
    ts_rt_tensor_release(t);
  }
  ts_rt_clear_error(c);

  expect_fail(c, "\x93NUMPX\x01\x00\x00\x00", 10, "magic");
  expect_fail(c, "\x93NUMPY\x01", 7, "magic");
  expect_fail(c, "\x93NUMPY\x04\x00\x00\x00\x00\x00", 10, "version 4.0");
  expect_fail(c, "\x93NUMPY\x02\x00\x00\x00", 10, "truncated header");
  expect_fail(c, "\x93NUMPY\x01\x00\xff\x00{}", 12, "truncated header");
  expect_fail(c, "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, "too large");

  /* Version 2.0 (4-byte header length), and bytes of a bool other than 0/1
   * read as true. */
  const char *hb = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n";
  size_t hl = strlen(hb);
  memcpy(buf, "\x93NUMPY\x02\x00", 8);
  buf[8] = (uint8_t)hl, buf[9] = buf[10] = buf[11] = 0;
  memcpy(buf + 12, hb, hl);
  buf[12 + hl] = 0, buf[13 + hl] = 2, buf[14 + hl] = 1;
  t = ts_rt_npy_parse(c, buf, 15 + hl, "v2.npy");
  if (TS_CHECK(t)) {
    const uint8_t *p = ts_rt_tensor_data(t);
    TS_CHECK(p[0] == 0 && p[1] == 1 && p[2] == 1);
    ts_rt_tensor_release(t);
  }
  /* Fortran order with an empty dimension, and a 1-d Fortran array. */
  n = make_npy(buf, "{'descr': '<i2', 'fortran_order': True, 'shape': (0, 4), }", data, 0);
  t = ts_rt_npy_parse(c, buf, n, "fe.npy");
  if (TS_CHECK(t)) {
    TS_CHECK_INTEQ(ts_rt_tensor_numel(t), 0);
    ts_rt_tensor_release(t);
  }
  int16_t three[3] = {5, -6, 7};
  n = make_npy(buf, "{\"descr\": \"=i2\", \"fortran_order\": True, \"shape\": (3L,)}", three, sizeof three);
  t = ts_rt_npy_parse(c, buf, n, "f1.npy");
  if (TS_CHECK(t)) {
    TS_CHECK(at(t, 0) == 5 && at(t, 1) == -6 && at(t, 2) == 7);
    ts_rt_tensor_release(t);
  }
  /* A 3-d Fortran array: element (i, j, k) at i + 2j + 6k. */
  uint8_t f3[24];
  for (int k = 0; k < 24; k++) f3[k] = (uint8_t)k;
  n = make_npy(buf, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3, 4), }", f3, sizeof f3);
  t = ts_rt_npy_parse(c, buf, n, "f3.npy");
  if (TS_CHECK(t)) {
    bool ok = true;
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 4; k++) ok = ok && at(t, i * 12 + j * 4 + k) == i + 2 * j + 6 * k;
    TS_CHECK(ok);
    ts_rt_tensor_release(t);
  }
  TS_CHECK(!c->failed);
}

int main(void) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  test_numpy_files(&c);
  test_write_matches_numpy(&c);
  test_round_trip(&c);
  test_complex(&c);
  test_hostile(&c);
  ts_rt_ctx_free(&c);
  return ts_test_finish();
}
