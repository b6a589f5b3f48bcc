/* runtime/kernels/gemm_small.c: C = A @ B + bias in float32 for few rows of
 * A (a linear layer on a handful of tokens) and a constant B, with no BLAS
 * call: at these sizes OpenBLAS spends much of its time on its entry path
 * and on packing B again on every call.
 *
 * B is packed once, the first time a kernel asks for it, into panels of 32
 * columns (k-major inside a panel: the 32 values of row k are 128 bytes,
 * 64-byte aligned), the last panel padded with zeros, and kept with B's
 * storage as a ts_rt_derived entry: two runs of one model share it read-only, and it is
 * freed with the constant (no process-wide cache to leak or to go stale
 * when another model reuses the address). Whether B is a constant nothing
 * writes is decided from the graph once per storage (a mark is kept when
 * it is not). The kernel keeps a 4-row x 32-column tile of C in registers
 * (AVX-512: 8 zmm; AVX2: 16 columns at a time, 8 ymm; plain C for other
 * machines) over the whole K, then adds the bias and stores (masked stores
 * for the last panel's columns). */
#include <stdlib.h>
#include <string.h>

#include "gemm_small.h"
#include "ir.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>
#define GS_X86 1
#endif

/* columns per panel; rows per register tile */
#define GS_NR 32
#define GS_MR 4
/* the largest packed copy made (bytes): the first run pays for packing
 * (resnet18's classifier, 2 MiB, would add a millisecond to its first
 * result), and for a weight that large BLAS's own packing per call is
 * small next to the product */
#define GS_MAX_BYTES ((size_t)1 << 20)

struct ts_rt_gemm_pack {
  ts_rt_derived d; /* first: the storage's list entry */
  const float *src;
  int64_t K, N, rs, cs;
  int64_t npanels;
  float *data; /* npanels * K * GS_NR floats, after the struct in its block */
};

/* the tag of our entries in a storage's derived list */
static const char gs_tag;

int64_t ts_rt_gemm_pack_k(const ts_rt_gemm_pack *p) { return p->K; }
int64_t ts_rt_gemm_pack_n(const ts_rt_gemm_pack *p) { return p->N; }

static void gs_pack_free(ts_rt_derived *d) { free(d); }

/* where a pack's floats start in its block: past the struct, 64-byte aligned */
#define GS_HEAD ((sizeof(ts_rt_gemm_pack) + 63) / 64 * 64)

/* The bytes a pack of a [K, N] matrix takes; 0 if K or N is not in [1,
 * 2^24]. */
static size_t gs_pack_size(int64_t K, int64_t N) {
  /* bounded so that the size arithmetic cannot overflow */
  if (K <= 0 || N <= 0 || K > ((int64_t)1 << 24) || N > ((int64_t)1 << 24)) return 0;
  size_t np = (size_t)((N + GS_NR - 1) / GS_NR);
  return GS_HEAD + np * (size_t)K * GS_NR * sizeof(float);
}

/* B packed into mem (gs_pack_size bytes; 64-byte aligned is best). */
static ts_rt_gemm_pack *gs_pack_make(void *mem, const float *b, int64_t K, int64_t N, int64_t rs, int64_t cs) {
  int64_t np = (N + GS_NR - 1) / GS_NR;
  ts_rt_gemm_pack *p = mem;
  float *data = (float *)(void *)((char *)mem + GS_HEAD);
  for (int64_t q = 0; q < np; q++)
    for (int64_t j = 0; j < GS_NR; j++) {
      int64_t col = q * GS_NR + j;
      float *dst = data + q * K * GS_NR + j;
      for (int64_t k = 0; k < K; k++) dst[k * GS_NR] = col < N ? b[k * rs + col * cs] : 0.0f;
    }
  *p = (ts_rt_gemm_pack){.src = b, .K = K, .N = N, .rs = rs, .cs = cs, .npanels = np, .data = data};
  return p;
}

bool ts_rt_call_input_const(const ts_rt_call *call, uint32_t i) {
  if (!ts_rt_call_input_from_constant(call, i) || !call->node->graph) return false;
  const ts_node *n = call->node;
  const ts_value *v = n->inputs[i];
  bool plain = true; /* every use reads it and makes no alias */
  for (uint32_t u = 0; u < v->nuses && plain; u++) {
    const ts_node *user = v->uses[u].user;
    if (ts_node_is(user, TS_K_prim_FusionGroup)) continue; /* pointwise ops only read */
    const ts_schema *sc = user->kind != TS_K_OTHER ? ts_node_schema(user) : NULL;
    uint32_t k = v->uses[u].index;
    plain = sc && !sc->vararg && k < sc->nargs && !sc->args[k].alias;
  }
  /* views, lists, blocks: the compiler's verdict (ts_pass_mark_never_written;
   * the runtime analyses no graph) */
  return plain || (v->node->flags & TS_NODE_NEVER_WRITTEN);
}

/* The packed copy of this B already kept with s (data NULL: a mark that B
 * is not constant, so that the check is made once), or NULL. */
static const ts_rt_gemm_pack *gs_find(const ts_rt_storage *s, const float *b, int64_t K, int64_t N, int64_t rs,
                                      int64_t cs) {
  for (const ts_rt_derived *d = ts_rt_storage_derived(s); d; d = d->next) {
    const ts_rt_gemm_pack *p = (const ts_rt_gemm_pack *)d;
    if (d->tag == &gs_tag && p->src == b && p->K == K && p->N == N && p->rs == rs && p->cs == cs) return p;
  }
  return NULL;
}

const ts_rt_gemm_pack *ts_rt_gemm_pack_get(ts_rt_storage *s, const float *b, int64_t K, int64_t N, int64_t rs,
                                           int64_t cs) {
  const ts_rt_gemm_pack *found = gs_find(s, b, K, N, rs, cs);
  if (found) return found->data ? found : NULL;
  size_t nbytes = gs_pack_size(K, N);
  if (!nbytes || nbytes > GS_MAX_BYTES) return NULL;
  /* the C library's memory, not ts_rt_malloc: the copy outlives the run
   * (and its heap) that makes it */
  void *mem = aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (!mem) return NULL;
  ts_rt_gemm_pack *p = gs_pack_make(mem, b, K, N, rs, cs);
  p->d = (ts_rt_derived){.tag = &gs_tag, .free_fn = gs_pack_free};
  ts_rt_storage_add_derived(s, &p->d);
  return p;
}

const ts_rt_gemm_pack *ts_rt_gemm_pack_input(const ts_rt_call *call, uint32_t i, bool trans, int64_t M) {
  if (M < 1 || M > TS_RT_GEMM_SMALL_MAX_M || !ts_rt_call_input_from_constant(call, i) || i >= call->nin ||
      call->in[i].tag != TS_IV_TENSOR)
    return NULL;
  const ts_rt_tensor *t = (const ts_rt_tensor *)call->in[i].u.o;
  if (t->dtype != TS_DT_FLOAT32 || t->ndim != 2) return NULL;
  const float *b = ts_rt_tensor_data(t);
  int64_t K = t->sizes[trans ? 1 : 0], N = t->sizes[trans ? 0 : 1];
  int64_t rs = t->strides[trans ? 1 : 0], cs = t->strides[trans ? 0 : 1];
  /* a copy already made passed the check below when it was made (a
   * constant's storage is its own: made for its node) */
  const ts_rt_gemm_pack *p = gs_find(t->storage, b, K, N, rs, cs);
  if (p) return p->data ? p : NULL;
  size_t nbytes = gs_pack_size(K, N);
  if (!nbytes || nbytes > GS_MAX_BYTES) return NULL;
  if (ts_rt_call_input_const(call, i)) return ts_rt_gemm_pack_get(t->storage, b, K, N, rs, cs);
  /* a constant something writes: marked, so that the alias analysis runs
   * once */
  ts_rt_gemm_pack *no = malloc(sizeof *no);
  if (no) {
    *no = (ts_rt_gemm_pack){.d = {.tag = &gs_tag, .free_fn = gs_pack_free}, .src = b, .K = K, .N = N, .rs = rs,
                            .cs = cs};
    ts_rt_storage_add_derived(t->storage, &no->d);
  }
  return NULL;
}

/* ------------------------------------------------------------- kernels
 * Each computes rows [0, mr) (mr <= GS_MR) of A against panel bp (nv of
 * its 32 columns valid) into out. Called with a constant mr, so that after
 * inlining the row loops unroll and the tile stays in registers. */

#ifdef GS_X86
__attribute__((target("avx512f"), always_inline)) static inline void
gs_tile_avx512(int mr, int64_t K, const float *a, int64_t lda, const float *bp, const float *bias, int nv, float *out,
               int64_t ldo) {
  __m512 c0[GS_MR], c1[GS_MR];
#pragma GCC unroll 4
  for (int r = 0; r < GS_MR; r++) c0[r] = c1[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; k++) {
    __m512 b0 = _mm512_loadu_ps(bp + k * GS_NR), b1 = _mm512_loadu_ps(bp + k * GS_NR + 16);
#pragma GCC unroll 4
    for (int r = 0; r < GS_MR; r++)
      if (r < mr) {
        __m512 x = _mm512_set1_ps(a[r * lda + k]);
        c0[r] = _mm512_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(x, b1, c1[r]);
      }
  }
  __mmask16 m0 = nv >= 16 ? 0xffff : (__mmask16)((1u << nv) - 1);
  __mmask16 m1 = nv >= 32 ? 0xffff : nv <= 16 ? 0 : (__mmask16)((1u << (nv - 16)) - 1);
  __m512 z0 = _mm512_setzero_ps(), z1 = _mm512_setzero_ps();
  if (bias) {
    z0 = _mm512_maskz_loadu_ps(m0, bias);
    z1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  }
#pragma GCC unroll 4
  for (int r = 0; r < GS_MR; r++)
    if (r < mr) {
      _mm512_mask_storeu_ps(out + r * ldo, m0, _mm512_add_ps(c0[r], z0));
      _mm512_mask_storeu_ps(out + r * ldo + 16, m1, _mm512_add_ps(c1[r], z1));
    }
}

/* 16 of the panel's columns (bp already offset), nv of them valid */
__attribute__((target("avx2,fma"), always_inline)) static inline void
gs_tile_avx2(int mr, int64_t K, const float *a, int64_t lda, const float *bp, const float *bias, int nv, float *out,
             int64_t ldo) {
  __m256 c0[GS_MR], c1[GS_MR];
#pragma GCC unroll 4
  for (int r = 0; r < GS_MR; r++) c0[r] = c1[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; k++) {
    __m256 b0 = _mm256_loadu_ps(bp + k * GS_NR), b1 = _mm256_loadu_ps(bp + k * GS_NR + 8);
#pragma GCC unroll 4
    for (int r = 0; r < GS_MR; r++)
      if (r < mr) {
        __m256 x = _mm256_broadcast_ss(a + r * lda + k);
        c0[r] = _mm256_fmadd_ps(x, b0, c0[r]);
        c1[r] = _mm256_fmadd_ps(x, b1, c1[r]);
      }
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nv), lane);
  __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nv - 8), lane);
  __m256 z0 = _mm256_setzero_ps(), z1 = _mm256_setzero_ps();
  if (bias) {
    z0 = _mm256_maskload_ps(bias, m0);
    z1 = _mm256_maskload_ps(bias + 8, m1);
  }
#pragma GCC unroll 4
  for (int r = 0; r < GS_MR; r++)
    if (r < mr) {
      _mm256_maskstore_ps(out + r * ldo, m0, _mm256_add_ps(c0[r], z0));
      _mm256_maskstore_ps(out + r * ldo + 8, m1, _mm256_add_ps(c1[r], z1));
    }
}
#endif

static inline void gs_tile_c(int mr, int64_t K, const float *a, int64_t lda, const float *bp, const float *bias,
                             int nv, float *out, int64_t ldo) {
  for (int r = 0; r < mr; r++) {
    float acc[GS_NR] = {0};
    for (int64_t k = 0; k < K; k++) {
      float x = a[r * lda + k];
      for (int j = 0; j < GS_NR; j++) acc[j] += x * bp[k * GS_NR + j];
    }
    for (int j = 0; j < nv; j++) out[r * ldo + j] = acc[j] + (bias ? bias[j] : 0.0f);
  }
}

/* One job: panels [p0, p1) of B against all M rows. */
typedef struct gs_job {
  const ts_rt_gemm_pack *p;
  int64_t M, lda, ldo;
  const float *a, *bias;
  float *out;
} gs_job;

/* The panel loop for one tile function: rows in tiles of GS_MR, the last
 * tile through a switch so that each call has a constant row count. */
#define GS_PANELS(NAME, TILE, ATTR, HALVES)                                                                           \
  ATTR static void NAME(const gs_job *j, int64_t p0, int64_t p1) {                                                    \
    int64_t K = j->p->K, N = j->p->N;                                                                                 \
    for (int64_t q = p0; q < p1; q++)                                                                                 \
      for (int h = 0; h < HALVES; h++) {                                                                              \
        int64_t col = q * GS_NR + h * (GS_NR / HALVES);                                                               \
        if (col >= N) break;                                                                                          \
        int nv = N - col < GS_NR / HALVES ? (int)(N - col) : GS_NR / HALVES;                                          \
        const float *bp = j->p->data + q * K * GS_NR + h * (GS_NR / HALVES);                                          \
        const float *bias = j->bias ? j->bias + col : NULL;                                                           \
        int64_t i = 0;                                                                                                \
        for (; i + GS_MR <= j->M; i += GS_MR)                                                                         \
          TILE(GS_MR, K, j->a + i * j->lda, j->lda, bp, bias, nv, j->out + i * j->ldo + col, j->ldo);                 \
        const float *ar = j->a + i * j->lda;                                                                          \
        float *o = j->out + i * j->ldo + col;                                                                         \
        switch (j->M - i) {                                                                                           \
        case 3: TILE(3, K, ar, j->lda, bp, bias, nv, o, j->ldo); break;                                               \
        case 2: TILE(2, K, ar, j->lda, bp, bias, nv, o, j->ldo); break;                                               \
        case 1: TILE(1, K, ar, j->lda, bp, bias, nv, o, j->ldo); break;                                               \
        default: break;                                                                                               \
        }                                                                                                             \
      }                                                                                                               \
  }

#ifdef GS_X86
GS_PANELS(gs_panels_avx512, gs_tile_avx512, __attribute__((target("avx512f"))), 1)
GS_PANELS(gs_panels_avx2, gs_tile_avx2, __attribute__((target("avx2,fma"))), 2)
#endif
GS_PANELS(gs_panels_c, gs_tile_c, , 1)

/* the variant tests ask for (ts_rt_gemm_small_use) */
static int gs_isa_cap = TS_RT_GEMM_ISA_AVX512;

int ts_rt_gemm_small_use(int isa) {
  __atomic_store_n(&gs_isa_cap, isa, __ATOMIC_RELAXED);
  int best = TS_RT_GEMM_ISA_C;
#ifdef GS_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = TS_RT_GEMM_ISA_AVX2;
  if (__builtin_cpu_supports("avx512f")) best = TS_RT_GEMM_ISA_AVX512;
#endif
  return isa < best ? isa : best;
}

static void gs_range(void *arg, int64_t p0, int64_t p1) {
  const gs_job *j = arg;
#ifdef GS_X86
  int cap = __atomic_load_n(&gs_isa_cap, __ATOMIC_RELAXED);
  if (cap >= TS_RT_GEMM_ISA_AVX512 && __builtin_cpu_supports("avx512f")) {
    gs_panels_avx512(j, p0, p1);
    return;
  }
  if (cap >= TS_RT_GEMM_ISA_AVX2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    gs_panels_avx2(j, p0, p1);
    return;
  }
#endif
  gs_panels_c(j, p0, p1);
}

void ts_rt_gemm_small(ts_rt_ctx *c, const ts_rt_gemm_pack *p, int64_t M, const float *a, int64_t lda,
                      const float *bias, float *out, int64_t ldo) {
  if (M <= 0) return;
  gs_job j = {.p = p, .M = M, .lda = lda, .ldo = ldo, .a = a, .bias = bias, .out = out};
  /* a panel is M * K * 32 multiply-adds; threads pay off from ~256K per chunk */
  int64_t per = M * p->K * GS_NR;
  int64_t grain = per >= 262144 ? 1 : 262144 / per;
  ts_rt_parallel_for(c, p->npanels, grain, gs_range, &j);
}
