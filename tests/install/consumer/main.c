/* tests/install/consumer/main.c: a program built against an installed tsaot
 * (tests/install/install.sh builds it twice: with find_package(tsaot) and
 * tsaot_add_model(), and with `cc ... $(pkg-config --cflags --libs tsaot)`
 * and a `tsaot -c --name tiny` object).
 *
 *   consumer IN.npy EXPECTED.npy
 *
 * runs tiny (tests/fixtures/tiny_cnn) on IN (a C-order float32 .npy) with
 * tiny_run and compares its one output with EXPECTED (|got - want| <=
 * 1e-5 + 1e-4 |want|); prints "ok" and exits 0 only when all match.
 */
#include "tiny.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ELEMS 65536

/* Reads a little-endian float32 C-order .npy into dst (at most MAX_ELEMS
 * elements); its element count, or -1. */
static int64_t read_npy(const char *path, float *dst) {
  static uint8_t buf[4 * MAX_ELEMS + 4096];
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "consumer: cannot open %s\n", path);
    return -1;
  }
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0 || buf[6] != 1) {
    fprintf(stderr, "consumer: %s: not a version 1 .npy file\n", path);
    return -1;
  }
  size_t hlen = buf[8] | (size_t)buf[9] << 8;
  if (10 + hlen > len || hlen >= 512) {
    fprintf(stderr, "consumer: %s: truncated header\n", path);
    return -1;
  }
  char header[512];
  memcpy(header, buf + 10, hlen);
  header[hlen] = 0;
  const char *s = strstr(header, "'shape': (");
  if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False") || !s) {
    fprintf(stderr, "consumer: %s: not a C-order float32 array\n", path);
    return -1;
  }
  int64_t n = 1;
  for (s += 10; *s && *s != ')';) {
    char *end;
    long long d = strtoll(s, &end, 10);
    if (end == s || d < 0 || d > MAX_ELEMS)
      break;
    n *= d;
    if (n > MAX_ELEMS)
      break;
    s = end;
    while (*s == ',' || *s == ' ')
      s++;
  }
  if (n > MAX_ELEMS || 10 + hlen + (size_t)n * 4 > len) {
    fprintf(stderr, "consumer: %s: too large or truncated\n", path);
    return -1;
  }
  memcpy(dst, buf + 10 + hlen, (size_t)n * 4);
  return n;
}

int main(int argc, char **argv) {
  static float input[MAX_ELEMS], expected[MAX_ELEMS];
  if (argc != 3) {
    fprintf(stderr, "usage: consumer IN.npy EXPECTED.npy\n");
    return 2;
  }
  if (tiny_init() != 0) {
    fprintf(stderr, "consumer: tiny_init: %s\n", tiny_last_error());
    return 1;
  }
  tsaot_spec isp;
  if (tiny_num_inputs() != 1 || tiny_input_spec(0, &isp) != 0 || isp.kind != TSAOT_SPEC_TENSOR ||
      isp.ndim < 0 || isp.ndim > 8) {
    fprintf(stderr, "consumer: the model is not one tensor in\n");
    return 1;
  }
  int64_t shape[8], want = 1;
  for (int d = 0; d < isp.ndim; d++)
    want *= shape[d] = isp.shape[d];
  int64_t nin = read_npy(argv[1], input), nexp = read_npy(argv[2], expected);
  if (nin < 0 || nexp < 0)
    return 1;
  if (nin != want) {
    fprintf(stderr, "consumer: %s has %lld elements, the model's input %lld\n", argv[1], (long long)nin,
            (long long)want);
    return 1;
  }
  DLTensor in = {.data = input, .device = {kDLCPU, 0}, .ndim = isp.ndim, .dtype = isp.dtype, .shape = shape};
  DLManagedTensor *out[4];
  int nout = 0;
  if (tiny_run(&in, 1, out, 4, &nout) != 0) {
    fprintf(stderr, "consumer: tiny_run: %s\n", tiny_last_error());
    return 1;
  }
  int bad = nout != 1;
  if (nout >= 1) {
    const DLTensor *t = &out[0]->dl_tensor;
    int64_t n = 1;
    int contiguous = 1; /* NULL strides, or C-order ones */
    for (int d = t->ndim - 1; d >= 0; d--) {
      if (t->strides && t->shape[d] > 1 && t->strides[d] != n)
        contiguous = 0;
      n *= t->shape[d];
    }
    if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || n != nexp || !contiguous) {
      fprintf(stderr, "consumer: output is not a contiguous float32 tensor of %lld elements\n", (long long)nexp);
      bad = 1;
    } else {
      const float *got = (const float *)((const char *)t->data + t->byte_offset);
      for (int64_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - expected[i]) <= 1e-5f + 1e-4f * fabsf(expected[i]))) {
          fprintf(stderr, "consumer: element %lld: %g, PyTorch %g\n", (long long)i, got[i], expected[i]);
          bad = 1;
          break;
        }
    }
  }
  for (int i = 0; i < nout; i++)
    if (out[i]->deleter)
      out[i]->deleter(out[i]);
  tiny_release();
  if (!bad)
    printf("ok\n");
  return bad;
}
