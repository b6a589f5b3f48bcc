/* runtime/hosted/cublas.c: cuBLAS through dlopen (hosted/cublas.h).
 *
 * The prototypes are cublas_api.h's (cuBLAS 12/13; the _v2 names are what
 * cublas_v2.h's macros make of cublasCreate, cublasSgemm, ...), written out
 * here so that building needs no CUDA toolkit: cublasStatus_t and
 * cublasOperation_t are ints, cublasHandle_t an opaque pointer, cudaStream_t
 * the driver's CUstream. */
#include "cublas.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_CB_OP_N = 0, TS_CB_OP_T = 1 }; /* cublasOperation_t */

typedef int (*ts_cb_create_fn)(void **);
typedef int (*ts_cb_destroy_fn)(void *);
typedef int (*ts_cb_set_stream_fn)(void *, ts_cu_handle);
typedef int (*ts_cb_sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                              const float *, float *, int);
typedef int (*ts_cb_sgemm_batched_fn)(void *, int, int, int, int, int, const float *, const float *, int, long long,
                                      const float *, int, long long, const float *, float *, int, long long, int);
typedef const char *(*ts_cb_status_fn)(int);

/* The entry points; the status names are optional (cuBLAS before 11.4.2
 * lacks them), the rest required. */
typedef struct ts_rt_cublas_api {
  ts_cb_create_fn create;
  ts_cb_destroy_fn destroy;
  ts_cb_set_stream_fn set_stream;
  ts_cb_sgemm_fn sgemm;
  ts_cb_sgemm_batched_fn sgemm_batched;
  ts_cb_status_fn status_name;
  ts_cb_status_fn status_string;
} ts_rt_cublas_api;

static const struct {
  const char *name;
  size_t off;
  bool optional;
} ts_cb_syms[] = {
    {"cublasCreate_v2", offsetof(ts_rt_cublas_api, create), false},
    {"cublasDestroy_v2", offsetof(ts_rt_cublas_api, destroy), false},
    {"cublasSetStream_v2", offsetof(ts_rt_cublas_api, set_stream), false},
    {"cublasSgemm_v2", offsetof(ts_rt_cublas_api, sgemm), false},
    {"cublasSgemmStridedBatched", offsetof(ts_rt_cublas_api, sgemm_batched), false},
    {"cublasGetStatusName", offsetof(ts_rt_cublas_api, status_name), true},
    {"cublasGetStatusString", offsetof(ts_rt_cublas_api, status_string), true},
};

/* The names tried when $TSAOT_LIBCUBLAS is not set, newest first. */
static const char *const ts_cb_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};

/* "what: CUBLAS_STATUS_X: cuBLAS's text" for a failed call, or the number
 * when the library cannot name it. */
static bool ts_cb_fail(const ts_rt_cublas *b, ts_buf *err, const char *what, int status) {
  const char *name = NULL, *text = NULL;
  if (b && b->api) {
    if (b->api->status_name)
      name = b->api->status_name(status);
    if (b->api->status_string)
      text = b->api->status_string(status);
  }
  /* cuBLAS answers an unknown status with "unrecognized status", not NULL */
  if (name && strncmp(name, "CUBLAS_STATUS_", 14) != 0)
    name = NULL;
  if (err) {
    if (name && text && *text)
      ts_buf_printf(err, "%s: %s: %s", what, name, text);
    else if (name)
      ts_buf_printf(err, "%s: %s", what, name);
    else
      ts_buf_printf(err, "%s: cuBLAS status %d", what, status);
  }
  return false;
}

/* dlopen of $TSAOT_LIBCUBLAS, or the first of ts_cb_names that opens. The
 * reason kept for the error is the first that is not "no such file": a
 * libcublas that is there but cannot load (libcublasLt missing) says more. */
static bool ts_cb_dlopen(ts_rt_cublas *b, const char **opened, ts_buf *err) {
  const char *env = getenv("TSAOT_LIBCUBLAS");
  if (env && *env) {
    *opened = env;
    b->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!b->lib) {
      const char *why = dlerror();
      if (err)
        ts_buf_printf(err, "cuBLAS %s not found: dlopen: %s", env, why ? why : "?");
      return false;
    }
    return true;
  }
  char why[512] = "";
  for (size_t i = 0; i < sizeof ts_cb_names / sizeof ts_cb_names[0]; i++) {
    *opened = ts_cb_names[i];
    b->lib = dlopen(ts_cb_names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (b->lib)
      return true;
    const char *e = dlerror();
    if (e && (!why[0] || strstr(why, "No such file")))
      snprintf(why, sizeof why, "%s", e);
  }
  if (err)
    ts_buf_printf(err, "cuBLAS (libcublas.so.13, libcublas.so.12, libcublas.so) not found: dlopen: %s",
                  why[0] ? why : "?");
  return false;
}

bool ts_rt_cublas_open(ts_rt_cublas *b, ts_cu_handle stream, ts_buf *err) {
  memset(b, 0, sizeof *b);
  const char *name = NULL;
  if (!ts_cb_dlopen(b, &name, err))
    return false;
  ts_rt_cublas_api *api = calloc(1, sizeof *api);
  if (!api) {
    if (err)
      ts_buf_printf(err, "out of memory");
    ts_rt_cublas_close(b);
    return false;
  }
  b->api = api;
  for (size_t i = 0; i < sizeof ts_cb_syms / sizeof ts_cb_syms[0]; i++) {
    void *p = dlsym(b->lib, ts_cb_syms[i].name);
    if (!p && ts_cb_syms[i].optional)
      continue;
    if (!p) {
      if (err)
        ts_buf_printf(err, "cuBLAS %s lacks %s: not cuBLAS, or too old (cuBLAS 11 or newer is needed)", name,
                      ts_cb_syms[i].name);
      ts_rt_cublas_close(b);
      return false;
    }
    /* POSIX: dlsym's address of a function is the function pointer's bits */
    memcpy((char *)api + ts_cb_syms[i].off, &p, sizeof p);
  }
  void *h = NULL;
  int s = api->create(&h);
  if (s != 0) {
    ts_cb_fail(b, err, "cublasCreate_v2", s);
    ts_rt_cublas_close(b);
    return false;
  }
  b->handle = h;
  if ((s = api->set_stream(h, stream)) != 0) {
    ts_cb_fail(b, err, "cublasSetStream_v2", s);
    ts_rt_cublas_close(b);
    return false;
  }
  return true;
}

void ts_rt_cublas_close(ts_rt_cublas *b) {
  if (!b)
    return;
  if (b->api && b->handle)
    b->api->destroy(b->handle);
  free(b->api);
  if (b->lib)
    dlclose(b->lib);
  memset(b, 0, sizeof *b);
}

/* A size handed to cuBLAS as an int: 0..INT_MAX. */
static bool ts_cb_int(const char *what, int64_t v, ts_buf *err) {
  if (v >= 0 && v <= INT_MAX)
    return true;
  if (err) {
    if (v < 0)
      ts_buf_printf(err, "cuBLAS GEMM: %s = %lld is negative", what, (long long)v);
    else
      ts_buf_printf(err, "cuBLAS GEMM: %s = %lld is over cuBLAS's limit of %d", what, (long long)v, INT_MAX);
  }
  return false;
}

static int64_t ts_cb_max1(int64_t v) { return v > 1 ? v : 1; }

/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: a row-major
 * matrix with row stride ld is, read column-major with leading dimension ld,
 * its transpose. So cuBLAS gets m = N, n = M, B as its first operand
 * (transposed when trans_b) and A as its second (transposed when trans_a),
 * and C is written in place with ldc unchanged. */
bool ts_rt_cublas_gemm(ts_rt_cublas *b, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       ts_cu_deviceptr A, int64_t lda, int64_t stride_a, ts_cu_deviceptr B, int64_t ldb,
                       int64_t stride_b, float beta, ts_cu_deviceptr C, int64_t ldc, int64_t stride_c, int64_t batch,
                       ts_buf *err) {
  if (!b || !b->api || !b->handle) {
    if (err)
      ts_buf_printf(err, "cuBLAS GEMM: cuBLAS is not open");
    return false;
  }
  if (!ts_cb_int("M", M, err) || !ts_cb_int("N", N, err) || !ts_cb_int("K", K, err) ||
      !ts_cb_int("lda", lda, err) || !ts_cb_int("ldb", ldb, err) || !ts_cb_int("ldc", ldc, err) ||
      !ts_cb_int("batch", batch, err))
    return false;
  if (batch > 1 && (stride_a < 0 || stride_b < 0 || stride_c < 0)) {
    if (err)
      ts_buf_printf(err, "cuBLAS GEMM: negative batch stride (%lld, %lld, %lld)", (long long)stride_a,
                    (long long)stride_b, (long long)stride_c);
    return false;
  }
  if (M == 0 || N == 0 || batch == 0 || (K == 0 && beta == 1.0f))
    return true;
  if (K == 0) {
    /* A and B are not read: any leading dimension cuBLAS accepts will do
     * (an empty tensor's strides can be anything) */
    lda = ts_cb_max1(trans_a ? (lda > M ? lda : M) : lda);
    ldb = ts_cb_max1(trans_b ? ldb : (ldb > N ? ldb : N));
  }
  int op_a = trans_a ? TS_CB_OP_T : TS_CB_OP_N, op_b = trans_b ? TS_CB_OP_T : TS_CB_OP_N;
  const float *pa = (const float *)(uintptr_t)A, *pb = (const float *)(uintptr_t)B;
  float *pc = (float *)(uintptr_t)C;
  int s;
  if (batch == 1) {
    s = b->api->sgemm(b->handle, op_b, op_a, (int)N, (int)M, (int)K, &alpha, pb, (int)ldb, pa, (int)lda, &beta, pc,
                      (int)ldc);
    if (s != 0)
      return ts_cb_fail(b, err, "cublasSgemm_v2", s);
  } else {
    s = b->api->sgemm_batched(b->handle, op_b, op_a, (int)N, (int)M, (int)K, &alpha, pb, (int)ldb, stride_b, pa,
                              (int)lda, stride_a, &beta, pc, (int)ldc, stride_c, (int)batch);
    if (s != 0)
      return ts_cb_fail(b, err, "cublasSgemmStridedBatched", s);
  }
  return true;
}
