/* examples/firmware/main.c: a firmware-like program around a model compiled
 * ahead of time (`tsaot MODEL.pt -c -o model.o --name tiny --no-fallback`).
 *
 * Everything the model touches at run time is static: the arena (sized by
 * tiny_ARENA_SIZE from the generated model.h, checked against
 * tiny_arena_size() at start), the input and output buffers. tiny_init()
 * loads the embedded program once (it may allocate); tiny_run_static() then
 * runs with no malloc. The program is linked with
 *   -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
 * so that every call to those from the model and the runtime's static
 * libraries goes through the counters below, which count while `in_run` is
 * set, around the runs: any call there fails the program.
 *
 *   firmware IN.npy EXPECTED.npy [RUNS]
 *
 * reads the input and PyTorch's output (float32 .npy files, C order, with a
 * tiny reader of its own), runs RUNS times (default 5), compares each result
 * with EXPECTED (|got - want| <= 1e-5 + 1e-4 |want|), prints the count of
 * allocator calls during the runs and "ok", or what went wrong; exit status
 * 0 only when every run matched and nothing was allocated.
 */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FW_MAX_ELEMS
#define FW_MAX_ELEMS 65536 /* floats per static input / output buffer */
#endif

/* ------------------------------------------------------ allocator counters */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static volatile int in_run;
static volatile long nalloc;

void *__wrap_malloc(size_t n) {
  if (in_run)
    nalloc++;
  return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
  if (in_run)
    nalloc++;
  return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
  if (in_run)
    nalloc++;
  return __real_realloc(p, n);
}

void __wrap_free(void *p) {
  if (in_run && p)
    nalloc++;
  __real_free(p);
}

/* ------------------------------------------------------------ static data */

static _Alignas(TSAOT_ARENA_ALIGN) uint8_t arena[tiny_ARENA_SIZE];
static float input[FW_MAX_ELEMS], output[FW_MAX_ELEMS], expected[FW_MAX_ELEMS];
static int64_t in_shape[8], out_shape[8];
static uint8_t file_buf[4 * FW_MAX_ELEMS + 4096];

/* ------------------------------------------------------------- .npy files */

/* Reads a little-endian float32 C-order .npy of `want` elements (its shape
 * must hold exactly that many) into dst. */
static int read_npy(const char *path, float *dst, int64_t want) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "firmware: cannot open %s\n", path);
    return 0;
  }
  size_t len = fread(file_buf, 1, sizeof file_buf, f);
  fclose(f);
  if (len < 10 || memcmp(file_buf, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "firmware: %s: not a .npy file\n", path);
    return 0;
  }
  size_t hlen, hstart;
  if (file_buf[6] == 1) {
    hlen = file_buf[8] | (size_t)file_buf[9] << 8;
    hstart = 10;
  } else {
    if (len < 12) {
      fprintf(stderr, "firmware: %s: truncated\n", path);
      return 0;
    }
    hlen = file_buf[8] | (size_t)file_buf[9] << 8 | (size_t)file_buf[10] << 16 | (size_t)file_buf[11] << 24;
    hstart = 12;
  }
  if (hstart + hlen > len) {
    fprintf(stderr, "firmware: %s: truncated header\n", path);
    return 0;
  }
  char header[512];
  size_t n = hlen < sizeof header - 1 ? hlen : sizeof header - 1;
  memcpy(header, file_buf + hstart, n);
  header[n] = 0;
  if (!strstr(header, "'descr': '<f4'") || !strstr(header, "'fortran_order': False")) {
    fprintf(stderr, "firmware: %s: not a C-order float32 array: %s\n", path, header);
    return 0;
  }
  const char *s = strstr(header, "'shape': (");
  if (!s) {
    fprintf(stderr, "firmware: %s: no shape\n", path);
    return 0;
  }
  int64_t elems = 1;
  for (s += 10; *s && *s != ')';) {
    char *end;
    long long d = strtoll(s, &end, 10);
    if (end == s)
      break;
    elems *= d;
    s = end;
    while (*s == ',' || *s == ' ')
      s++;
  }
  if (elems != want || hstart + hlen + (size_t)elems * 4 > len) {
    fprintf(stderr, "firmware: %s: %lld elements, the model's tensor has %lld\n", path, (long long)elems,
            (long long)want);
    return 0;
  }
  memcpy(dst, file_buf + hstart + hlen, (size_t)elems * 4);
  return 1;
}

/* The element count of a float32 tensor spec that fits a static buffer, or
 * -1. */
static int64_t spec_elems(const tsaot_spec *sp, int64_t *shape) {
  if (sp->kind != TSAOT_SPEC_TENSOR || sp->dtype.code != kDLFloat || sp->dtype.bits != 32 || sp->ndim < 0 ||
      sp->ndim > 8)
    return -1;
  int64_t n = 1;
  for (int d = 0; d < sp->ndim; d++) {
    if (sp->shape[d] < 0)
      return -1;
    shape[d] = sp->shape[d];
    n *= sp->shape[d];
  }
  return n <= FW_MAX_ELEMS ? n : -1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: firmware IN.npy EXPECTED.npy [RUNS]\n");
    return 2;
  }
  int runs = argc > 3 ? atoi(argv[3]) : 5;
  if (tiny_arena_size() > sizeof arena) {
    fprintf(stderr, "firmware: the model needs %zu bytes of arena, the program has %zu\n", tiny_arena_size(),
            sizeof arena);
    return 1;
  }
  if (tiny_init() != 0) {
    fprintf(stderr, "firmware: tiny_init: %s\n", tiny_last_error());
    return 1;
  }
  tsaot_spec isp, osp;
  if (tiny_num_inputs() != 1 || tiny_num_outputs() != 1 || tiny_input_spec(0, &isp) != 0 ||
      tiny_output_spec(0, &osp) != 0) {
    fprintf(stderr, "firmware: the model is not one float32 tensor in, one out\n");
    return 1;
  }
  int64_t nin = spec_elems(&isp, in_shape), nout = spec_elems(&osp, out_shape);
  if (nin < 0 || nout < 0) {
    fprintf(stderr, "firmware: the model's tensors are not float32 tensors of at most %d elements\n", FW_MAX_ELEMS);
    return 1;
  }
  if (!read_npy(argv[1], input, nin) || !read_npy(argv[2], expected, nout))
    return 1;
  DLTensor in = {.data = input, .device = {kDLCPU, 0}, .ndim = isp.ndim, .dtype = isp.dtype, .shape = in_shape};
  DLTensor out = {.data = output, .device = {kDLCPU, 0}, .ndim = osp.ndim, .dtype = osp.dtype, .shape = out_shape};
  int bad = 0;
  for (int r = 0; r < runs; r++) {
    memset(output, 0, sizeof output);
    in_run = 1;
    int rc = tiny_run_static(&in, 1, &out, 1, arena, sizeof arena);
    in_run = 0;
    if (rc != 0) {
      fprintf(stderr, "firmware: run %d: error %d: %s\n", r, rc, tiny_last_error());
      bad++;
      continue;
    }
    int64_t ndiff = 0;
    for (int64_t i = 0; i < nout; i++)
      if (!(fabsf(output[i] - expected[i]) <= 1e-5f + 1e-4f * fabsf(expected[i]))) {
        if (!ndiff++)
          fprintf(stderr, "firmware: run %d: element %lld is %g, expected %g\n", r, (long long)i, output[i],
                  expected[i]);
      }
    if (ndiff) {
      fprintf(stderr, "firmware: run %d: %lld of %lld elements differ\n", r, (long long)ndiff, (long long)nout);
      bad++;
    }
  }
  tiny_release();
  printf("firmware: %d runs, %ld allocator calls during them, arena %zu bytes\n", runs, nalloc, sizeof arena);
  if (nalloc) {
    printf("firmware: the run path called the C library's allocator\n");
    return 1;
  }
  if (bad) {
    printf("mismatch\n");
    return 1;
  }
  printf("ok\n");
  return 0;
}
