/* runtime/kernels/gemm_small.h: the small-M float32 GEMM with packed
 * constant weights (gemm_small.c), for the kernels of nn.c and
 * transformer.c. Internal to runtime/. */
#ifndef TS_RT_KERNELS_GEMM_SMALL_H
#define TS_RT_KERNELS_GEMM_SMALL_H

#include "runtime.h"

/* The most rows of A the small GEMM is used for: above it OpenBLAS's
 * blocking wins even with its per-call packing of B. */
#define TS_RT_GEMM_SMALL_MAX_M 32

/* A float32 matrix B [K, N] packed once into column panels for the small
 * GEMM, kept with the storage of the tensor it came from. */
typedef struct ts_rt_gemm_pack ts_rt_gemm_pack;

/* Whether input i of the call is made by a prim::Constant (the cheap first
 * test: most weights that are not constants fail it). */
static inline bool ts_rt_call_input_from_constant(const ts_rt_call *call, uint32_t i) {
  const ts_node *n = call ? call->node : NULL;
  return n && i < n->ninputs && n->inputs[i]->node && n->inputs[i]->node->kind == TS_K_prim_Constant;
}

/* Whether input i of the call is a tensor constant that nothing can write:
 * made by a prim::Constant whose every use passes it to an argument without
 * an alias annotation (no in-place op, no view that could be written), or
 * one the compiler found never written through its aliases either
 * (TS_NODE_NEVER_WRITTEN, set by ts_pass_mark_never_written). */
bool ts_rt_call_input_const(const ts_rt_call *call, uint32_t i);

/* B (element (k, n) at b[k * rs + n * cs], bytes of s) packed, made on
 * the first call and kept with s: only for bytes that never change. NULL
 * when out of memory or too large. */
const ts_rt_gemm_pack *ts_rt_gemm_pack_get(ts_rt_storage *s, const float *b, int64_t K, int64_t N, int64_t rs,
                                           int64_t cs);

/* B packed from input i of the call, a float32 matrix t: B = t^T when
 * `trans` (t [N, K], linear's weight), else B = t ([K, N]); made on the
 * first call and kept with t's storage, so only for a constant nothing
 * writes (ts_rt_call_input_const) and M in [1, TS_RT_GEMM_SMALL_MAX_M].
 * NULL otherwise, or out of memory: the caller uses BLAS. */
const ts_rt_gemm_pack *ts_rt_gemm_pack_input(const ts_rt_call *call, uint32_t i, bool trans, int64_t M);

/* K and N of a packed B. */
int64_t ts_rt_gemm_pack_k(const ts_rt_gemm_pack *p);
int64_t ts_rt_gemm_pack_n(const ts_rt_gemm_pack *p);

/* out[M, N] (row stride ldo) = A[M, K] (row stride lda, unit column stride)
 * @ B + bias[N] (bias may be NULL; contiguous), B packed. The columns are
 * split over c's threads when the product is large. */
void ts_rt_gemm_small(ts_rt_ctx *c, const ts_rt_gemm_pack *p, int64_t M, const float *a, int64_t lda,
                      const float *bias, float *out, int64_t ldo);

/* The kernel variants, best last. ts_rt_gemm_small_use caps the variant
 * used from then on at `isa` (for tests: the default is the best the CPU
 * has) and returns the one that will run. */
enum { TS_RT_GEMM_ISA_C, TS_RT_GEMM_ISA_AVX2, TS_RT_GEMM_ISA_AVX512 };
int ts_rt_gemm_small_use(int isa);

#endif
