/* runtime/kernels/iter.h: an elementwise iteration engine in the manner of
 * ATen's TensorIterator, for kernels that visit every element of one output
 * and some inputs of one broadcast shape.
 *
 * Use:
 *
 *   ts_rt_iter it;
 *   ts_rt_tensor *out = NULL;                    // NULL: the iterator allocates it
 *   const ts_rt_tensor *in[2] = {a, b};
 *   if (!ts_rt_iter_build(c, &it, &out, TS_DT_FLOAT32, 0, in, 2)) return NULL;
 *   ts_rt_iter_run(c, &it, TS_RT_ITER_GRAIN, my_loop, &my_state);
 *
 * my_loop(arg, data, strides, n) is called for runs of n elements: data[0]
 * points at the output's first element of the run, data[1 + k] at input k's,
 * and strides[] are the byte steps between consecutive elements of the run
 * (0 for a broadcast input). Runs of one call never overlap runs of another,
 * and calls may come from several threads at once.
 *
 * Broadcasting and the output's layout follow PyTorch: shape mismatches fail
 * with "The size of tensor a (3) must match the size of tensor b (4) at
 * non-singleton dimension 1"; an allocated output is contiguous when every
 * input is, else laid out in the inputs' stride order (so relu of a
 * transposed matrix is transposed, as in PyTorch). Dimensions are reordered
 * and merged so that the innermost run is as long as possible.
 *
 * Internal to runtime/. */
#ifndef TS_RT_KERNELS_ITER_H
#define TS_RT_KERNELS_ITER_H

#include "runtime.h"

/* Operands of one iterator: the output and up to 5 inputs. */
#define TS_RT_ITER_MAX_OPS 6
/* Elements per parallel chunk (about 32K, as the runtime's rule). */
#define TS_RT_ITER_GRAIN 32768

/* ts_rt_iter_build flags. */
enum {
  /* A given output of another shape is resized to the broadcast shape (out=
   * arguments) instead of failing as an in-place op's self does. */
  TS_RT_ITER_RESIZE_OUT = 1,
};

typedef struct ts_rt_iter {
  int32_t nops;  /* 1 + inputs; operand 0 is the output */
  int32_t ndim;  /* iteration dimensions, [0] innermost (>= 1) */
  int64_t numel;
  int64_t shape[TS_RT_MAX_DIMS];
  int64_t strides[TS_RT_ITER_MAX_OPS][TS_RT_MAX_DIMS]; /* bytes */
  char *data[TS_RT_ITER_MAX_OPS];
  /* The broadcast shape in the output's order. */
  int32_t out_ndim;
  int64_t out_shape[TS_RT_MAX_DIMS];
} ts_rt_iter;

typedef void (*ts_rt_iter_loop)(void *arg, char **data, const int64_t *strides, int64_t n);

/* Sets `it` up over inputs in[0..nin) (borrowed, broadcast together) and the
 * output *out. *out NULL: a new tensor of dtype out_dt (the caller owns it
 * when this returns true). *out given: it must have the broadcast shape
 * ("output with shape [3] doesn't match the broadcast shape [2, 3]") unless
 * flags has TS_RT_ITER_RESIZE_OUT, and must not have two elements at one
 * address (an expanded tensor). */
bool ts_rt_iter_build(ts_rt_ctx *c, ts_rt_iter *it, ts_rt_tensor **out, ts_dtype out_dt, unsigned flags,
                      const ts_rt_tensor *const *in, int32_t nin);
/* Calls loop over every element, split over threads in chunks of at least
 * `grain` elements. Does nothing for an empty output. */
void ts_rt_iter_run(ts_rt_ctx *c, const ts_rt_iter *it, int64_t grain, ts_rt_iter_loop loop, void *arg);

/* Broadcast shape of n shapes, pairwise left to right as TensorIterator does
 * (the message's "tensor a" is the shape so far). */
bool ts_rt_iter_broadcast(ts_rt_ctx *c, int32_t n, const int32_t *ndims, const int64_t *const *shapes,
                          int32_t *out_ndim, int64_t *out);

#endif
