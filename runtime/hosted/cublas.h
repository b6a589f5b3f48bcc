/* runtime/hosted/cublas.h: cuBLAS's single-precision GEMM, opened at run time.
 *
 * Like runtime/hosted/cuda.h for the driver: nothing here includes cublas_v2.h or
 * links libcublas. ts_rt_cublas_open dlopens $TSAOT_LIBCUBLAS (tests point it
 * at tests/cuda/fake_libcublas.c) or else libcublas.so.13, .so.12, .so in
 * turn, resolves the few entry points used, and makes one handle bound to
 * the driver's stream. A host without cuBLAS loads everything and is told
 * only when it asks for a GPU GEMM.
 *
 * The handle uses the CUDA context current on the thread that opens it (the
 * primary context ts_rt_cuda_open makes current); call the GEMM from threads
 * where that context is current, one thread at a time per handle. The math
 * mode is cuBLAS's default (CUBLAS_DEFAULT_MATH: no TF32), which is what
 * PyTorch 1.13 uses for float32 matmul (allow_tf32 = False).
 *
 * Errors go to a ts_buf as text ("cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE:
 * an unsupported value or parameter was passed to the function"); nothing
 * aborts or prints. cuBLAS stays mapped once opened (RTLD_NODELETE; close
 * drops the reference only): its static CUDA runtime keeps process-wide
 * state, and unloading it would take the libstdc++ it pulled in along
 * (LeakSanitizer then reports that library's allocations as leaked). */
#ifndef TS_RT_CUBLAS_H
#define TS_RT_CUBLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda.h"

/* The opened library and one handle. */
typedef struct ts_rt_cublas {
  void *lib;    /* dlopen handle */
  void *handle; /* cublasHandle_t */
  struct ts_rt_cublas_api *api;
} ts_rt_cublas;

/* Opens cuBLAS, creates a handle in the current CUDA context and sets its
 * stream (`stream` may be NULL: the default stream). false with the reason in
 * err ("cuBLAS (libcublas.so.13, libcublas.so.12, libcublas.so) not found:
 * dlopen: ..."); b is then closed. ts_rt_cublas_close destroys the handle and
 * drops the library; it is harmless on a zeroed, closed or failed-to-open
 * struct. */
bool ts_rt_cublas_open(ts_rt_cublas *b, ts_cu_handle stream, ts_buf *err);
void ts_rt_cublas_close(ts_rt_cublas *b);

/* A row-major float32 GEMM on device memory, queued on the handle's stream:
 * for each i < batch,
 *
 *   C_i (M x N, row stride ldc) = alpha * op(A_i) * op(B_i) + beta * C_i
 *
 * op(A_i) is M x K: A_i stored M x K with row stride lda, or, when trans_a,
 * stored K x M (row stride lda) and transposed; op(B_i) is K x N: stored
 * K x N, or N x K when trans_b. A_i = A + i * stride_a floats, likewise B_i
 * and C_i (a stride of 0 reuses one matrix; strides are unused when batch is
 * 1). batch 1 calls cublasSgemm_v2, batch > 1 cublasSgemmStridedBatched.
 *
 * beta == 0: C is not read (NaN in it does not propagate). Nothing is done and
 * cuBLAS is not called when M, N or batch is 0, nor when K is 0 and beta is 1.
 * K == 0 otherwise is left to cuBLAS, which sets C = beta * C (the BLAS
 * contract; A and B are not read, so their leading dimensions are raised to
 * the least cuBLAS accepts). Sizes, leading dimensions and batch over INT_MAX
 * (cuBLAS's int) are refused, as are negative ones and, when batch > 1,
 * negative strides; a leading dimension shorter than a stored row is refused
 * by cuBLAS (CUBLAS_STATUS_INVALID_VALUE). */
bool ts_rt_cublas_gemm(ts_rt_cublas *b, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       ts_cu_deviceptr A, int64_t lda, int64_t stride_a, ts_cu_deviceptr B, int64_t ldb,
                       int64_t stride_b, float beta, ts_cu_deviceptr C, int64_t ldc, int64_t stride_c, int64_t batch,
                       ts_buf *err);

#endif
