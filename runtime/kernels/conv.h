/* runtime/kernels/conv.h: which algorithm conv.c runs a forward
 * convolution with (for tests and tools that report it), the float32 GEMM
 * that conv.c, conv3d.c and winograd.c share, and conv3d.c's 3-d and
 * transposed convolutions. Internal to runtime/. */
#ifndef TS_RT_KERNELS_CONV_H
#define TS_RT_KERNELS_CONV_H

#include "runtime.h"

/* The geometry of one 2-d convolution over contiguous NCHW data (1-d runs
 * as 2-d with height 1). */
typedef struct ts_rt_conv_geom {
  int64_t N, C, H, W;             /* input */
  int64_t O, KH, KW;              /* weight [O, C / groups, KH, KW] */
  int64_t OH, OW;                 /* output */
  int64_t sh, sw, ph, pw, dh, dw; /* stride, padding before, dilation */
  int64_t groups;
} ts_rt_conv_geom;

/* The path conv.c takes for a forward convolution of this geometry in
 * float32 (dbl: float64) at nthreads threads, the same decision the kernels
 * make: "winograd F(4x4,3x3)", "winograd F(2x2,3x3)", "depthwise 3x3",
 * "depthwise", "1x1 blocks", "1x1 chunks", "im2col blocks", "im2col
 * chunks" or "empty". */
const char *ts_rt_conv_path(const ts_rt_conv_geom *g, bool dbl, int nthreads);

/* The most terms of a sum one OpenBLAS call makes in ts_rt_conv_sgemm
 * (conv.c says why). */
#define TS_RT_CONV_KSLICE 64

/* c[M, N] = a[M, K] @ b[K, N] (row-major; rows lda, ldb, ldc apart) by
 * OpenBLAS on the calling thread's BLAS threads, K cut into slices of
 * TS_RT_CONV_KSLICE to 2 * TS_RT_CONV_KSLICE - 1, each added to c. All
 * sizes at most INT_MAX. */
void ts_rt_conv_sgemm(int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc);

/* The geometry of a 3-d convolution over contiguous NCDHW data, or of a
 * transposed convolution of 1 to 3 spatial dims (the missing leading ones
 * of size 1) (conv3d.c). Forward: weight [O, C / groups, KD, KH, KW];
 * transposed: weight [C, O / groups, KD, KH, KW], x the [N, C, D, H, W]
 * input and y the [N, O, OD, OH, OW] output. */
typedef struct ts_rt_conv3_geom {
  int64_t N, C, D, H, W;
  int64_t O, KD, KH, KW;
  int64_t OD, OH, OW;
  int64_t sd, sh, sw, pd, ph, pw, dd, dh, dw; /* stride, padding before, dilation */
  int64_t groups;
} ts_rt_conv3_geom;

/* y = conv3d(x, w) + bias (bias: [O] or NULL), all contiguous float32
 * (float64 when dbl); y uninitialised on entry. False (ctx failed) when
 * out of memory or too large for BLAS. */
bool ts_rt_conv3d_run(ts_rt_ctx *c, const ts_rt_conv3_geom *g, bool dbl, const void *x, const void *w,
                      const void *bias, void *y);
/* y = conv_transpose(x, w) + bias, the same way. */
bool ts_rt_conv_transposed_run(ts_rt_ctx *c, const ts_rt_conv3_geom *g, bool dbl, const void *x, const void *w,
                               const void *bias, void *y);

#endif
