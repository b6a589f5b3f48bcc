/* tests/cuda/fake_libcublas.c: a stand-in for libcublas, so that
 * runtime/hosted/cublas.c runs on hosts without a GPU: TSAOT_LIBCUBLAS=.../
 * libfake_cublas.so, with the stand-in driver (fake_libcuda.c), whose
 * "device memory" is host memory. The GEMMs are cuBLAS's column-major
 * contract computed in plain loops (not a row-major shortcut: a wrong
 * row-major mapping in the caller gives wrong numbers or is refused), with
 * cuBLAS's argument checks, status codes and texts (cuBLAS 13's).
 * Built a second time with FAKE_CUBLAS_NO_STATUS_NAMES: a cuBLAS without
 * cublasGetStatusName/String. FAKE_CUBLAS_CREATE_FAIL set: cublasCreate
 * fails as with no usable GPU. */
#include <stdint.h>
#include <stdlib.h>

typedef int cublasStatus_t;

enum {
  FAKE_STATUS_SUCCESS = 0,
  FAKE_STATUS_NOT_INITIALIZED = 1,
  FAKE_STATUS_ALLOC_FAILED = 3,
  FAKE_STATUS_INVALID_VALUE = 7,
  FAKE_STATUS_ARCH_MISMATCH = 8,
  FAKE_STATUS_MAPPING_ERROR = 11,
  FAKE_STATUS_EXECUTION_FAILED = 13,
  FAKE_STATUS_INTERNAL_ERROR = 14,
  FAKE_STATUS_NOT_SUPPORTED = 15,
  FAKE_STATUS_LICENSE_ERROR = 16,
};

enum { FAKE_OP_N = 0, FAKE_OP_T = 1, FAKE_OP_C = 2 }; /* cublasOperation_t */

#define FAKE_HANDLE_MAGIC 0x6375626cu

typedef struct fake_handle {
  unsigned magic; /* cleared by cublasDestroy: a destroyed handle is refused */
  void *stream;
} fake_handle;

/* what the tests look at: how many GEMMs of each kind ran, the last stream */
static unsigned fake_sgemms, fake_batched;
static void *fake_last_stream;

unsigned fake_cublas_calls(unsigned *batched, void **stream) {
  *batched = fake_batched;
  *stream = fake_last_stream;
  return fake_sgemms;
}

cublasStatus_t cublasCreate_v2(fake_handle **h) {
  if (!h)
    return FAKE_STATUS_INVALID_VALUE;
  *h = NULL;
  if (getenv("FAKE_CUBLAS_CREATE_FAIL"))
    return FAKE_STATUS_NOT_INITIALIZED;
  fake_handle *p = calloc(1, sizeof *p);
  if (!p)
    return FAKE_STATUS_ALLOC_FAILED;
  p->magic = FAKE_HANDLE_MAGIC;
  *h = p;
  return FAKE_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(fake_handle *h) {
  if (!h || h->magic != FAKE_HANDLE_MAGIC)
    return FAKE_STATUS_NOT_INITIALIZED;
  h->magic = 0;
  free(h);
  return FAKE_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(fake_handle *h, void *stream) {
  if (!h || h->magic != FAKE_HANDLE_MAGIC)
    return FAKE_STATUS_NOT_INITIALIZED;
  h->stream = stream;
  return FAKE_STATUS_SUCCESS;
}

static int fake_max1(int v) { return v > 1 ? v : 1; }

/* cuBLAS's checks of a GEMM's arguments (column-major: op(A) m x k, op(B)
 * k x n, C m x n; A stored m x k, or k x m when transposed). */
static cublasStatus_t fake_check(const fake_handle *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                 int lda, int ldb, const float *beta, int ldc) {
  if (!h || h->magic != FAKE_HANDLE_MAGIC)
    return FAKE_STATUS_NOT_INITIALIZED;
  if (ta < FAKE_OP_N || ta > FAKE_OP_C || tb < FAKE_OP_N || tb > FAKE_OP_C || m < 0 || n < 0 || k < 0)
    return FAKE_STATUS_INVALID_VALUE;
  if (lda < fake_max1(ta == FAKE_OP_N ? m : k) || ldb < fake_max1(tb == FAKE_OP_N ? k : n) || ldc < fake_max1(m))
    return FAKE_STATUS_INVALID_VALUE;
  if (!alpha || !beta)
    return FAKE_STATUS_INVALID_VALUE;
  return FAKE_STATUS_SUCCESS;
}

/* One column-major GEMM: C(i,j) = alpha * sum_l op(A)(i,l) op(B)(l,j) +
 * beta * C(i,j), element (r,c) of a stored matrix at [r + c * ld]. beta == 0:
 * C is not read (BLAS). */
static void fake_gemm(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                      int ldb, float beta, float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double acc = 0;
      for (int l = 0; l < k; l++) {
        float a = ta == FAKE_OP_N ? A[i + (int64_t)l * lda] : A[l + (int64_t)i * lda];
        float b = tb == FAKE_OP_N ? B[l + (int64_t)j * ldb] : B[j + (int64_t)l * ldb];
        acc += (double)a * b;
      }
      float *c = &C[i + (int64_t)j * ldc];
      float v = (float)((double)alpha * acc);
      *c = beta == 0.0f ? v : v + beta * *c;
    }
}

cublasStatus_t cublasSgemm_v2(fake_handle *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A,
                              int lda, const float *B, int ldb, const float *beta, float *C, int ldc) {
  cublasStatus_t s = fake_check(h, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
  if (s != FAKE_STATUS_SUCCESS)
    return s;
  fake_sgemms++;
  fake_last_stream = h->stream;
  if (m == 0 || n == 0)
    return FAKE_STATUS_SUCCESS;
  fake_gemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
  return FAKE_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemmStridedBatched(fake_handle *h, int ta, int tb, int m, int n, int k, const float *alpha,
                                         const float *A, int lda, long long sa, const float *B, int ldb, long long sb,
                                         const float *beta, float *C, int ldc, long long sc, int batch) {
  cublasStatus_t s = fake_check(h, ta, tb, m, n, k, alpha, lda, ldb, beta, ldc);
  if (s != FAKE_STATUS_SUCCESS)
    return s;
  if (batch < 0)
    return FAKE_STATUS_INVALID_VALUE;
  fake_batched++;
  fake_last_stream = h->stream;
  if (m == 0 || n == 0)
    return FAKE_STATUS_SUCCESS;
  for (int i = 0; i < batch; i++)
    fake_gemm(ta, tb, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta, C + i * sc, ldc);
  return FAKE_STATUS_SUCCESS;
}

#ifndef FAKE_CUBLAS_NO_STATUS_NAMES
static const struct {
  int code;
  const char *name, *text;
} fake_statuses[] = {
    {FAKE_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {FAKE_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {FAKE_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {FAKE_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an unsupported value or parameter was passed to the function"},
    {FAKE_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "the function requires an architectural feature absent from the device"},
    {FAKE_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
    {FAKE_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED", "the function failed to launch on the GPU"},
    {FAKE_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {FAKE_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED", "the requested functionality is not supported"},
    {FAKE_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", "the license check failed"},
};

/* cuBLAS answers an unknown status with a placeholder rather than NULL */
const char *cublasGetStatusName(cublasStatus_t s) {
  for (size_t i = 0; i < sizeof fake_statuses / sizeof fake_statuses[0]; i++)
    if (fake_statuses[i].code == s)
      return fake_statuses[i].name;
  return "unrecognized status";
}

const char *cublasGetStatusString(cublasStatus_t s) {
  for (size_t i = 0; i < sizeof fake_statuses / sizeof fake_statuses[0]; i++)
    if (fake_statuses[i].code == s)
      return fake_statuses[i].text;
  return "unrecognized status";
}
#endif
