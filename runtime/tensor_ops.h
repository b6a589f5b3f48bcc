/* runtime/tensor_ops.h: tensor operations as C functions, for kernels that
 * are composed from other kernels (RNNs, the transformer fast path), for the
 * interpreter and for tools. The op kernels in runtime/kernels/ are thin
 * wrappers that unpack IValues and call these.
 *
 * Every function returns a new reference (NULL with an error in ctx) and
 * borrows its tensor arguments. Dimensions may be negative (counted from
 * the end) wherever PyTorch accepts that; they are checked. Type promotion
 * and broadcasting follow PyTorch.
 */
#ifndef TS_RT_TENSOR_OPS_H
#define TS_RT_TENSOR_OPS_H

#include "runtime.h"

/* ------------------------------------------------ kernels/pointwise.c */

/* The ops are ir/ops.def's pointwise rows (ts_pw_op: TS_PW_add, TS_PW_relu,
 * ...). PyTorch's dtype rules themselves are ir/promote.c's. */


/* PyTorch's result_type over tensors and numbers: dimensioned tensors rank
 * above 0-d tensors, which rank above numbers, within a category (bool <
 * integral < floating). A number operand is given as an IValue (int, float
 * or bool); a tensor as TS_IV_TENSOR. */
ts_dtype ts_rt_result_type(const ts_iv *operands, uint32_t n);
/* Broadcast shape of a and b into out (ndim in *out_ndim); false with
 * PyTorch's message if they do not broadcast. */
bool ts_rt_broadcast_shapes(ts_rt_ctx *c, int32_t na, const int64_t *a, int32_t nb, const int64_t *b,
                            int32_t *out_ndim, int64_t *out);

/* out = OP a, for a row of one operand (parameters 0: relu, exp, ...). */
ts_rt_tensor *ts_rt_unary_op(ts_rt_ctx *c, ts_pw_op op, const ts_rt_tensor *a);
/* out = a OP b, for a row of two (alpha 1, no rounding mode); comparisons
 * and logical ops give bool. */
ts_rt_tensor *ts_rt_binary_op(ts_rt_ctx *c, ts_pw_op op, const ts_rt_tensor *a, const ts_rt_tensor *b);
/* a + alpha * b (aten::add.Tensor). */
ts_rt_tensor *ts_rt_add(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, double alpha);
/* a * s, a + s (a number, kept in a's dtype category as PyTorch's Scalar
 * overloads do). */
ts_rt_tensor *ts_rt_mul_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s);
ts_rt_tensor *ts_rt_add_scalar(ts_rt_ctx *c, const ts_rt_tensor *a, double s);
/* In place: a = a OP b (b broadcast to a; the result cast to a's dtype). */
bool ts_rt_binary_op_(ts_rt_ctx *c, ts_pw_op op, ts_rt_tensor *a, const ts_rt_tensor *b);
bool ts_rt_unary_op_(ts_rt_ctx *c, ts_pw_op op, ts_rt_tensor *a);
/* where(cond, a, b) */
ts_rt_tensor *ts_rt_where(ts_rt_ctx *c, const ts_rt_tensor *cond, const ts_rt_tensor *a, const ts_rt_tensor *b);
/* masked_fill: a copy of a with value where mask (bool, broadcast) is true. */
ts_rt_tensor *ts_rt_masked_fill(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *mask, double value);
/* fill_ in place with one number. */
bool ts_rt_fill_(ts_rt_ctx *c, ts_rt_tensor *a, double value);
/* x[0..n) = OP x[i] in place, for a row of one operand (parameters 0) on a
 * contiguous float32 or float64 buffer: the kernels' own loop, for kernels
 * holding raw buffers (the transformer's feed-forward gelu). */
bool ts_rt_pointwise_buffer(ts_rt_ctx *c, ts_pw_op op, ts_dtype dt, void *x, int64_t n);

/* ------------------------------------------------- kernels/creation.c */

/* ATen's linspace arithmetic into the contiguous 1-d tensor t (a real dtype
 * other than bool, steps elements, >= 1) from start to end. */
void ts_rt_linspace_fill(ts_rt_tensor *t, double start, double end, int64_t steps);

/* ---------------------------------------------------- kernels/shape.c */

/* Views: share a's storage. */
ts_rt_tensor *ts_rt_view(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *sizes); /* one -1 allowed */
ts_rt_tensor *ts_rt_reshape(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *sizes); /* view if possible, else a copy */
ts_rt_tensor *ts_rt_transpose(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t d0, int64_t d1);
ts_rt_tensor *ts_rt_permute(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims); /* a->ndim of them */
ts_rt_tensor *ts_rt_select(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t index);
/* start/end clamped as PyTorch's slice; step >= 1. */
ts_rt_tensor *ts_rt_slice(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t start, int64_t end, int64_t step);
ts_rt_tensor *ts_rt_narrow(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, int64_t start, int64_t length);
ts_rt_tensor *ts_rt_unsqueeze(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim);
ts_rt_tensor *ts_rt_squeeze_dim(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim);
ts_rt_tensor *ts_rt_expand(ts_rt_ctx *c, const ts_rt_tensor *a, int32_t ndim, const int64_t *sizes); /* -1 keeps */
/* chunk/split: up to `max` views written to out[], count in *n. */
bool ts_rt_chunk(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t chunks, int64_t dim, ts_rt_tensor **out, uint32_t max,
                 uint32_t *n);
/* Copies. */
ts_rt_tensor *ts_rt_cat(ts_rt_ctx *c, ts_rt_tensor *const *ts, uint32_t n, int64_t dim);
ts_rt_tensor *ts_rt_stack(ts_rt_ctx *c, ts_rt_tensor *const *ts, uint32_t n, int64_t dim);
ts_rt_tensor *ts_rt_clone(ts_rt_ctx *c, const ts_rt_tensor *a); /* contiguous copy */

/* ----------------------------- kernels/nn.c, conv.c, pool.c, norm.c, reduce.c */

/* 2-d a[m,k] @ b[k,n] (float32/float64 through OpenBLAS; any strides). */
ts_rt_tensor *ts_rt_mm(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b);
/* batched a[B,m,k] @ b[B,k,n] */
ts_rt_tensor *ts_rt_bmm(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b);
/* torch.matmul's rules over any ranks. */
ts_rt_tensor *ts_rt_matmul(ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b);
/* x[..., in] @ w[out, in]^T + bias[out] (bias may be NULL). */
ts_rt_tensor *ts_rt_linear(ts_rt_ctx *c, const ts_rt_tensor *x, const ts_rt_tensor *w, const ts_rt_tensor *bias);
/* beta * self + alpha * (a @ b), self broadcast (addmm, baddbmm). */
ts_rt_tensor *ts_rt_addmm(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *a, const ts_rt_tensor *b,
                          double beta, double alpha);
ts_rt_tensor *ts_rt_baddbmm(ts_rt_ctx *c, const ts_rt_tensor *self, const ts_rt_tensor *a, const ts_rt_tensor *b,
                            double beta, double alpha);
/* softmax / log_softmax along dim, computed in float (double for float64);
 * dtype TS_DT_NONE keeps a's. */
ts_rt_tensor *ts_rt_softmax(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, ts_dtype dtype, bool log);
/* Normalises over the last `nnorm` dims; weight/bias may be NULL. */
ts_rt_tensor *ts_rt_layer_norm(ts_rt_ctx *c, const ts_rt_tensor *x, int32_t nnorm, const ts_rt_tensor *weight,
                               const ts_rt_tensor *bias, double eps);
/* sum over dims (ndims of them; 0 dims: all), keepdim as PyTorch. */
ts_rt_tensor *ts_rt_sum(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t ndims, bool keepdim,
                        ts_dtype dtype);
ts_rt_tensor *ts_rt_mean(ts_rt_ctx *c, const ts_rt_tensor *a, const int64_t *dims, uint32_t ndims, bool keepdim,
                         ts_dtype dtype);
/* The int64 indices that sort a along dim (aten::sort's second result):
 * libstdc++'s std::sort order when not `stable`, as PyTorch 1.13's CPU
 * sort gives ties. */
ts_rt_tensor *ts_rt_argsort(ts_rt_ctx *c, const ts_rt_tensor *a, int64_t dim, bool desc, bool stable);

/* ------------------------------------------------ kernels/transformer.c */

/* Whether t is a nested tensor made by aten::_nested_tensor_from_mask (what
 * prim::is_nested reports). */
bool ts_rt_tensor_is_nested(const ts_rt_tensor *t);

/* ---------------------------------------------------- kernels/complex.c */

/* How a pointwise row's kernel writes its result (pointwise.c's modes): a
 * new tensor; into out= (the last argument; the result must cast to it);
 * into self (in place: self's shape, castable); into out= whatever its
 * dtype (out= overloads PyTorch generates from the functional op). */
typedef enum ts_rt_pw_form { TS_RT_PW_NEW, TS_RT_PW_OUT, TS_RT_PW_INPLACE, TS_RT_PW_OUTCOPY } ts_rt_pw_form;
/* Whether a call has a complex tensor among its inputs (or in a list). */
bool ts_rt_cx_any(const ts_rt_call *call);
/* Row op's kernel on a call with a complex operand: PyTorch's complex
 * formula, or its refusal; pointwise.c hands such calls here. */
bool ts_rt_cx_pointwise(ts_rt_ctx *c, ts_rt_call *call, ts_pw_op op, ts_rt_pw_form form);
/* fill_ (zero: zero_) of a call with a complex operand. */
bool ts_rt_cx_fill(ts_rt_ctx *c, ts_rt_call *call, bool zero);

/* --------------------------------------------------- kernels/random.c */

/* PyTorch's default_rng_seed_val: the seed of a fresh process's generator. */
#define TS_RT_DEFAULT_SEED 67280421310721ull

/* The run's generator (ctx->gen), as PyTorch's CPU generator: manual_seed
 * (mt19937 seeded with the seed's low 32 bits, the normal cache dropped);
 * one 32-bit draw; a 64-bit one (two draws, the first the high half); a
 * uniform double in [0, 1) from 53 bits of a 64-bit draw, a uniform float
 * from 24 bits of a 32-bit one; a standard normal double by Box-Muller,
 * whose second sample is kept for the next call. */
void ts_rt_gen_seed(ts_rt_ctx *c, uint64_t seed);
uint32_t ts_rt_gen_u32(ts_rt_ctx *c);
uint64_t ts_rt_gen_u64(ts_rt_ctx *c);
double ts_rt_gen_uniform(ts_rt_ctx *c);
float ts_rt_gen_uniform_f(ts_rt_ctx *c);
double ts_rt_gen_normal(ts_rt_ctx *c);
/* self.bernoulli_(p) for a float p in [0, 1] (checked by the caller), in
 * the order PyTorch draws (self's memory order). */
void ts_rt_bernoulli_fill(ts_rt_ctx *c, ts_rt_tensor *self, double p);
/* ATen's _dropout_impl: x itself (retained) when p == 0, not training or
 * empty; x * 0 for p == 1; else x times a bernoulli(1 - p) noise (per
 * element, or per sample and channel for `feature`) scaled by 1 / (1 - p),
 * or for `alpha` (SELU's alpha dropout) the affine map that keeps mean and
 * variance. `inplace`: written into x, which is returned retained. */
ts_rt_tensor *ts_rt_dropout(ts_rt_ctx *c, ts_rt_tensor *x, double p, bool train, bool feature, bool alpha,
                            bool inplace);

#endif
