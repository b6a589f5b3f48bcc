/* tests/unit/test_rt_cublas.c: runtime/hosted/cublas.c, cuBLAS's SGEMM opened at run
 * time, with row-major semantics.
 *
 *   - no cuBLAS ($TSAOT_LIBCUBLAS naming a missing file, or none of the
 *     default names there): the clear error; a library that is not cuBLAS
 *     (libm): which entry point it lacks;
 *   - the stand-in driver and cuBLAS (tests/cuda/fake_lib{cuda,cublas}.c,
 *     whose GEMM is cuBLAS's column-major contract, so a wrong row-major
 *     mapping fails): cublasCreate failing; every GEMM against a naive
 *     row-major reference in double: the four transpose combinations, sizes
 *     1, 3, 17, 33, 65, leading dimensions over the least, (alpha, beta) (1, 0)
 *     with NaN in C and (0.5, 2), batch 1 (cublasSgemm_v2) and 3
 *     (cublasSgemmStridedBatched, strides with gaps and a broadcast B), C's
 *     padding untouched; K == 0; M, N or batch 0; sizes over INT_MAX or
 *     negative refused; cuBLAS's own refusal (lda short) named, or numbered
 *     by a cuBLAS that cannot name statuses;
 *   - TSAOT_TEST_REAL_CUDA=1: the same GEMM checks against libcuda.so.1 and
 *     the real cuBLAS instead of the stand-ins (a host with a GPU); skipped
 *     with a message otherwise. */
#include "cublas.h"
#include "cuda.h"
#include "test.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TSAOT_FAKE_LIBCUDA
#define TSAOT_FAKE_LIBCUDA ""
#endif
#ifndef TSAOT_FAKE_LIBCUBLAS
#define TSAOT_FAKE_LIBCUBLAS ""
#endif
#ifndef TSAOT_FAKE_LIBCUBLAS_NONAMES
#define TSAOT_FAKE_LIBCUBLAS_NONAMES ""
#endif

/* The driver and cuBLAS under test; `calls` is the stand-in's counter
 * (NULL for the real cuBLAS). */
typedef struct env {
  ts_rt_cuda c;
  ts_rt_cublas b;
  unsigned (*calls)(unsigned *batched, void **stream);
} env;

static bool env_open(env *e, const char *libcuda, const char *libcublas) {
  memset(e, 0, sizeof *e);
  if (libcuda)
    setenv("TSAOT_LIBCUDA", libcuda, 1);
  else
    unsetenv("TSAOT_LIBCUDA");
  if (libcublas)
    setenv("TSAOT_LIBCUBLAS", libcublas, 1);
  else
    unsetenv("TSAOT_LIBCUBLAS");
  ts_buf err = {0};
  bool ok = ts_rt_cuda_open(&e->c, 0, &err) && ts_rt_cublas_open(&e->b, e->c.stream, &err);
  if (!ok) {
    fprintf(stderr, "  opening CUDA and cuBLAS: %s\n", err.data ? err.data : "?");
    ts_rt_cuda_close(&e->c);
  } else if (libcublas) {
    void *p = dlsym(e->b.lib, "fake_cublas_calls");
    if (p)
      memcpy(&e->calls, &p, sizeof p);
  }
  ts_buf_free(&err);
  return ok;
}

static void env_close(env *e) {
  ts_rt_cublas_close(&e->b);
  ts_rt_cuda_close(&e->c);
}

/* Stand-in calls so far (sgemm + batched); 0 for the real cuBLAS. */
static unsigned env_calls(env *e) {
  if (!e->calls)
    return 0;
  unsigned batched = 0;
  void *stream = NULL;
  unsigned n = e->calls(&batched, &stream);
  return n + batched;
}

static uint32_t rng_state = 12345u;
static float rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* One GEMM case. The stored matrices: A is ar x ac (ar = trans_a ? K : M)
 * with row stride lda = ac + pad_a, batch i at i * stride_a; likewise B and
 * C. Padding and gaps of A and B hold NaN (read by mistake, they show); C's
 * hold a sentinel that must survive; with beta 0 C's elements start NaN. */
typedef struct gcase {
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
  int64_t pad_a, pad_b, pad_c, batch;
  bool broadcast_b; /* stride_b = 0 */
} gcase;

static const float sentinel = -777.25f;

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

static bool run_case(env *e, const gcase *g) {
  int64_t M = g->M, N = g->N, K = g->K, batch = g->batch;
  int64_t ar = g->ta ? K : M, ac = g->ta ? M : K, br = g->tb ? N : K, bc = g->tb ? K : N;
  int64_t lda = max1(ac + g->pad_a), ldb = max1(bc + g->pad_b), ldc = max1(N + g->pad_c);
  int64_t sa = ar * lda + 3, sb = g->broadcast_b ? 0 : br * ldb + 2, sc = M * ldc + 5;
  int64_t na = (batch - 1) * sa + ar * lda + 1, nb = (batch - 1) * sb + br * ldb + 1;
  int64_t nc = (batch - 1) * sc + M * ldc + 1;
  float *a = malloc((size_t)na * sizeof *a), *b = malloc((size_t)nb * sizeof *b), *c = malloc((size_t)nc * sizeof *c);
  float *out = malloc((size_t)nc * sizeof *out);
  bool *inc = calloc((size_t)nc, sizeof *inc);
  bool ok = a && b && c && out && inc;
  for (int64_t i = 0; ok && i < na; i++)
    a[i] = NAN;
  for (int64_t i = 0; ok && i < nb; i++)
    b[i] = NAN;
  for (int64_t i = 0; ok && i < nc; i++)
    c[i] = sentinel;
  for (int64_t i = 0; ok && i < batch; i++) {
    for (int64_t r = 0; r < ar; r++)
      for (int64_t k = 0; k < ac; k++)
        a[i * sa + r * lda + k] = rnd();
    for (int64_t r = 0; r < br; r++)
      for (int64_t k = 0; k < bc; k++)
        b[i * sb + r * ldb + k] = rnd();
    for (int64_t r = 0; r < M; r++)
      for (int64_t k = 0; k < N; k++) {
        c[i * sc + r * ldc + k] = g->beta == 0.0f ? NAN : rnd();
        inc[i * sc + r * ldc + k] = true;
      }
  }
  ts_cu_deviceptr da = 0, db = 0, dc = 0;
  ts_buf err = {0};
  ok = ok && ts_rt_cuda_alloc(&e->c, (size_t)na * sizeof *a, &da, &err) &&
       ts_rt_cuda_alloc(&e->c, (size_t)nb * sizeof *b, &db, &err) &&
       ts_rt_cuda_alloc(&e->c, (size_t)nc * sizeof *c, &dc, &err) &&
       ts_rt_cuda_to_device(&e->c, da, a, (size_t)na * sizeof *a, &err) &&
       ts_rt_cuda_to_device(&e->c, db, b, (size_t)nb * sizeof *b, &err) &&
       ts_rt_cuda_to_device(&e->c, dc, c, (size_t)nc * sizeof *c, &err);
  ok = ok && ts_rt_cublas_gemm(&e->b, g->ta, g->tb, M, N, K, g->alpha, da, lda, sa, db, ldb, sb, g->beta, dc, ldc, sc,
                               batch, &err);
  ok = ok && ts_rt_cuda_sync(&e->c, &err) && ts_rt_cuda_to_host(&e->c, out, dc, (size_t)nc * sizeof *out, &err);
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; ok && i < batch; i++)
    for (int64_t r = 0; r < M; r++)
      for (int64_t k = 0; k < N; k++) {
        double acc = 0, mag = 0;
        for (int64_t l = 0; l < K; l++) {
          double x = g->ta ? a[i * sa + l * lda + r] : a[i * sa + r * lda + l];
          double y = g->tb ? b[i * sb + k * ldb + l] : b[i * sb + l * ldb + k];
          acc += x * y;
          mag += fabs(x * y);
        }
        double c0 = c[i * sc + r * ldc + k];
        double want = g->alpha * acc + (g->beta == 0.0f ? 0.0 : g->beta * c0);
        double tol = 1e-4 * (fabs((double)g->alpha) * mag + (g->beta == 0.0f ? 0.0 : fabs(g->beta * c0))) + 1e-6;
        double got = out[i * sc + r * ldc + k];
        if (!(fabs(got - want) <= tol)) {
          if (bad++ == 0)
            worst = got - want;
        }
      }
  int64_t clobbered = 0;
  for (int64_t i = 0; ok && i < nc; i++)
    if (!inc[i] && out[i] != sentinel)
      clobbered++;
  if (!ok || bad || clobbered)
    fprintf(stderr,
            "  gemm ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g lda=%lld ldb=%lld ldc=%lld batch=%lld%s: %s, "
            "%lld wrong (first off by %g), %lld padding elements written\n",
            g->ta, g->tb, (long long)M, (long long)N, (long long)K, g->alpha, g->beta, (long long)lda,
            (long long)ldb, (long long)ldc, (long long)batch, g->broadcast_b ? " (B broadcast)" : "",
            err.data ? err.data : "ran", (long long)bad, worst, (long long)clobbered);
  ts_rt_cuda_free(&e->c, da, NULL);
  ts_rt_cuda_free(&e->c, db, NULL);
  ts_rt_cuda_free(&e->c, dc, NULL);
  ts_buf_free(&err);
  free(a);
  free(b);
  free(c);
  free(out);
  free(inc);
  return ok && !bad && !clobbered;
}

/* The GEMM checks, run on the stand-ins or on a real GPU. */
static void check_gemms(env *e) {
  static const int64_t sizes[] = {1, 3, 17, 33, 65};
  static const int64_t pads[] = {0, 1, 5};
  int failed = 0, ran = 0, idx = 0;
  for (int t = 0; t < 4; t++)
    for (int im = 0; im < 5; im++)
      for (int in = 0; in < 5; in++)
        for (int ik = 0; ik < 5; ik++)
          for (int ab = 0; ab < 2; ab++)
            for (int bt = 0; bt < 2; bt++, idx++) {
              gcase g = {.ta = t & 1, .tb = (t >> 1) & 1, .M = sizes[im], .N = sizes[in], .K = sizes[ik],
                         .alpha = ab ? 0.5f : 1.0f, .beta = ab ? 2.0f : 0.0f, .pad_a = pads[idx % 3],
                         .pad_b = pads[(idx / 3) % 3], .pad_c = pads[(idx / 9) % 3], .batch = bt ? 3 : 1,
                         .broadcast_b = bt && idx % 4 == 1};
              ran++;
              if (!run_case(e, &g) && ++failed > 20) {
                fprintf(stderr, "  more than 20 GEMM cases failed; stopping\n");
                TS_CHECK_INTEQ(failed, 0);
                return;
              }
            }
  TS_CHECK_INTEQ(failed, 0);
  printf("%d GEMM cases against the row-major reference\n", ran);

  /* K == 0: C = beta * C, A and B unread (leading dimensions of an empty
   * matrix may be anything, 0 included) */
  for (int t = 0; t < 4; t++) {
    static const float betas[] = {0.0f, 2.0f, 1.0f};
    for (int i = 0; i < 3; i++) {
      gcase g = {.ta = t & 1, .tb = (t >> 1) & 1, .M = 3, .N = 5, .K = 0, .alpha = 1.5f, .beta = betas[i],
                 .pad_c = 2, .batch = i == 1 ? 2 : 1};
      unsigned before = env_calls(e);
      TS_CHECK(run_case(e, &g));
      if (e->calls)
        TS_CHECK_INTEQ(env_calls(e) - before, betas[i] == 1.0f ? 0 : 1);
    }
    float x[6] = {4, -2, 8, 1, 0, 6};
    ts_cu_deviceptr dx = 0, dy = 0;
    ts_buf err = {0};
    if (TS_CHECK(ts_rt_cuda_alloc(&e->c, sizeof x, &dx, &err) && ts_rt_cuda_alloc(&e->c, sizeof x, &dy, &err))) {
      TS_CHECK(ts_rt_cuda_to_device(&e->c, dy, x, sizeof x, &err));
      TS_CHECK(ts_rt_cublas_gemm(&e->b, t & 1, t >> 1, 3, 2, 0, 1.0f, dx, 0, 0, dx, 0, 0, 0.5f, dy, 2, 0, 1, &err));
      TS_CHECK(ts_rt_cuda_sync(&e->c, &err) && ts_rt_cuda_to_host(&e->c, x, dy, sizeof x, &err));
      TS_CHECK(x[0] == 2 && x[1] == -1 && x[2] == 4 && x[3] == 0.5f && x[4] == 0 && x[5] == 3);
    }
    if (err.data)
      fprintf(stderr, "  %s\n", err.data);
    ts_rt_cuda_free(&e->c, dx, NULL);
    ts_rt_cuda_free(&e->c, dy, NULL);
    ts_buf_free(&err);
  }

  /* nothing to do: no call, null pointers never touched */
  ts_buf err = {0};
  unsigned before = env_calls(e);
  TS_CHECK(ts_rt_cublas_gemm(&e->b, false, false, 0, 5, 3, 1, 0, 3, 0, 0, 5, 0, 0, 0, 5, 0, 1, &err));
  TS_CHECK(ts_rt_cublas_gemm(&e->b, true, false, 4, 0, 3, 1, 0, 4, 0, 0, 1, 0, 0, 0, 1, 0, 1, &err));
  TS_CHECK(ts_rt_cublas_gemm(&e->b, false, true, 4, 5, 3, 1, 0, 3, 0, 0, 3, 0, 0, 0, 5, 0, 0, &err));
  TS_CHECK(err.data == NULL);
  TS_CHECK_INTEQ(env_calls(e), before);

  /* over cuBLAS's int, or negative: refused before cuBLAS is called */
  const int64_t big = (int64_t)INT_MAX + 1;
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, big, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, &err));
  TS_CHECK_HAS(err.data, "cuBLAS GEMM: M = 2147483648 is over cuBLAS's limit of 2147483647");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, big, 1, 1, 0, 1, 0, 0, big, 0, 0, 0, big, 0, 1, &err));
  TS_CHECK_HAS(err.data, "N = 2147483648 is over");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, 1, big, 1, 0, big, 0, 0, 1, 0, 0, 0, 1, 0, 1, &err));
  TS_CHECK_HAS(err.data, "K = 2147483648 is over");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, (int64_t)1 << 40, 0, 1, &err));
  TS_CHECK_HAS(err.data, "ldc = 1099511627776 is over");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, big, &err));
  TS_CHECK_HAS(err.data, "batch = 2147483648 is over");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, 1, -2, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, &err));
  TS_CHECK_HAS(err.data, "cuBLAS GEMM: K = -2 is negative");
  ts_buf_free(&err);
  TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 1, 1, 1, 1, 0, 1, -1, 0, 1, 1, 0, 0, 1, 1, 2, &err));
  TS_CHECK_HAS(err.data, "cuBLAS GEMM: negative batch stride (-1, 1, 1)");
  ts_buf_free(&err);
  TS_CHECK_INTEQ(env_calls(e), before);

  /* cuBLAS's own refusal: lda shorter than a stored row of A (M=3, K=5) */
  ts_cu_deviceptr d = 0;
  if (TS_CHECK(ts_rt_cuda_alloc(&e->c, 64 * sizeof(float), &d, &err))) {
    TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, false, 3, 4, 5, 1, d, 4, 0, d, 4, 0, 0, d, 4, 0, 1, &err));
    TS_CHECK_HAS(err.data, "cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE");
    ts_buf_free(&err);
    TS_CHECK(!ts_rt_cublas_gemm(&e->b, false, true, 3, 4, 5, 1, d, 5, 0, d, 4, 0, 0, d, 4, 0, 2, &err));
    TS_CHECK_HAS(err.data, "cublasSgemmStridedBatched: CUBLAS_STATUS_INVALID_VALUE");
    ts_buf_free(&err);
    TS_CHECK(ts_rt_cuda_free(&e->c, d, &err));
  }
  ts_buf_free(&err);
}

static void test_no_cublas(void) {
  ts_rt_cublas b;
  ts_buf err = {0};
  setenv("TSAOT_LIBCUBLAS", "/nonexistent/libcublas.so.12", 1);
  TS_CHECK(!ts_rt_cublas_open(&b, NULL, &err));
  TS_CHECK_HAS(err.data, "cuBLAS /nonexistent/libcublas.so.12 not found: dlopen: ");
  TS_CHECK(b.lib == NULL && b.api == NULL && b.handle == NULL);
  ts_rt_cublas_close(&b); /* closing what failed to open is harmless */
  ts_buf_free(&err);

  setenv("TSAOT_LIBCUBLAS", "libm.so.6", 1);
  TS_CHECK(!ts_rt_cublas_open(&b, NULL, &err));
  TS_CHECK_HAS(err.data, "cuBLAS libm.so.6 lacks cublasCreate_v2");
  ts_buf_free(&err);

  /* the default names: a host without cuBLAS is told which were tried; one
   * with a cuBLAS but no GPU (a CUDA toolkit, no driver) gets as far as
   * cublasCreate, every entry point resolved */
  unsetenv("TSAOT_LIBCUBLAS");
  if (ts_rt_cublas_open(&b, NULL, &err))
    printf("note: this host has a cuBLAS and a GPU\n");
  else if (err.data && strncmp(err.data, "cublasCreate_v2: ", 17) == 0)
    printf("note: this host has a cuBLAS but no usable GPU: %s\n", err.data);
  else
    TS_CHECK_HAS(err.data, "cuBLAS (libcublas.so.13, libcublas.so.12, libcublas.so) not found: dlopen: ");
  TS_CHECK(b.lib == NULL || b.handle != NULL);
  ts_rt_cublas_close(&b);
  ts_buf_free(&err);

  /* a struct never opened: refused, not crashed */
  ts_rt_cublas z;
  memset(&z, 0, sizeof z);
  TS_CHECK(!ts_rt_cublas_gemm(&z, false, false, 1, 1, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, &err));
  TS_CHECK_HAS(err.data, "cuBLAS GEMM: cuBLAS is not open");
  ts_rt_cublas_close(&z);
  ts_buf_free(&err);
}

static void test_fake(void) {
  if (!*TSAOT_FAKE_LIBCUDA || !*TSAOT_FAKE_LIBCUBLAS) {
    printf("skipped: the stand-in driver or cuBLAS was not built\n");
    return;
  }
  env e;
  ts_buf err = {0};
  /* cublasCreate failing (no usable GPU): the driver is left to its owner */
  if (TS_CHECK(env_open(&e, TSAOT_FAKE_LIBCUDA, TSAOT_FAKE_LIBCUBLAS))) {
    env_close(&e);
    setenv("TSAOT_LIBCUDA", TSAOT_FAKE_LIBCUDA, 1);
    TS_CHECK(ts_rt_cuda_open(&e.c, 0, &err));
    setenv("FAKE_CUBLAS_CREATE_FAIL", "1", 1);
    TS_CHECK(!ts_rt_cublas_open(&e.b, e.c.stream, &err));
    TS_CHECK_HAS(err.data, "cublasCreate_v2: CUBLAS_STATUS_NOT_INITIALIZED: the library was not initialized");
    TS_CHECK(e.b.lib == NULL && e.b.handle == NULL);
    unsetenv("FAKE_CUBLAS_CREATE_FAIL");
    ts_rt_cuda_close(&e.c);
    ts_buf_free(&err);
  }

  if (!TS_CHECK(env_open(&e, TSAOT_FAKE_LIBCUDA, TSAOT_FAKE_LIBCUBLAS)))
    return;
  if (TS_CHECK(e.calls != NULL)) {
    check_gemms(&e);
    /* the handle runs on the driver's stream */
    unsigned batched = 0;
    void *stream = NULL;
    unsigned n = e.calls(&batched, &stream);
    TS_CHECK(n > 0 && batched > 0);
    TS_CHECK(stream == (void *)e.c.stream && stream != NULL);
  }
  env_close(&e);
  TS_CHECK(e.b.lib == NULL && e.b.handle == NULL);
  ts_rt_cublas_close(&e.b); /* twice is harmless */

  /* a cuBLAS that cannot name its statuses: the number */
  if (*TSAOT_FAKE_LIBCUBLAS_NONAMES && TS_CHECK(env_open(&e, TSAOT_FAKE_LIBCUDA, TSAOT_FAKE_LIBCUBLAS_NONAMES))) {
    ts_cu_deviceptr d = 0;
    if (TS_CHECK(ts_rt_cuda_alloc(&e.c, 64 * sizeof(float), &d, &err))) {
      TS_CHECK(!ts_rt_cublas_gemm(&e.b, false, false, 3, 4, 5, 1, d, 4, 0, d, 4, 0, 0, d, 4, 0, 1, &err));
      TS_CHECK_HAS(err.data, "cublasSgemm_v2: cuBLAS status 7");
      ts_buf_free(&err);
      TS_CHECK(ts_rt_cuda_free(&e.c, d, &err));
    }
    env_close(&e);
  }
  ts_buf_free(&err);
}

static void test_real(void) {
  const char *v = getenv("TSAOT_TEST_REAL_CUDA");
  if (!v || strcmp(v, "1") != 0) {
    printf("skipped: the real-GPU variant (set TSAOT_TEST_REAL_CUDA=1 on a host with a GPU and cuBLAS)\n");
    return;
  }
  env e;
  if (!TS_CHECK(env_open(&e, NULL, NULL)))
    return;
  printf("real GPU: checking against libcuda.so.1 and the system's cuBLAS\n");
  check_gemms(&e);
  env_close(&e);
}

int main(void) {
  test_no_cublas();
  const char *v = getenv("TSAOT_TEST_REAL_CUDA");
  if (v && strcmp(v, "1") == 0)
    test_real();
  else {
    test_fake();
    test_real();
  }
  return ts_test_finish();
}
