/* runtime/kernels/conv3d.c: 3-d convolution and transposed convolution of
 * 1 to 3 spatial dims, the compute that conv.c's kernels call once they
 * have checked the arguments (ts_rt_conv3d_run, ts_rt_conv_transposed_run
 * in conv.h).
 *
 * Forward: vol2col + GEMM per image and group in column blocks (each
 * block's vol2col, GEMM and bias in one task, so the block stays in cache;
 * the tasks spread over the threads, each GEMM on its own thread), a plain
 * GEMM for 1x1x1 stride-1 convolutions, a direct loop for depthwise ones.
 * Transposed (the gradient of convolution, as ATen's slow_conv_transpose):
 * col = W_g^T @ x_g by GEMM, then col2vol adds col into the output; tasks
 * are chunks of output channels, whose col2vol writes never meet. float32
 * GEMMs sum K in slices (ts_rt_conv_sgemm), as conv.c's do. */
#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>

#include "conv.h"
#include "nn_util.h"

/* The hot loops are built for AVX-512, AVX2 and plain x86-64, chosen when
 * the library loads, and at O3 so that GCC vectorizes them (as conv.c). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define C3_HOT __attribute__((optimize("O3")))
#else
#define C3_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define C3_HOT
#endif

typedef ts_rt_conv3_geom c3_geom;

/* The range [*lo, *hi] of outputs o (0 <= o < on) whose input o * s + off
 * lies in [0, in); empty when *lo > *hi. */
static void c3_range(int64_t in, int64_t on, int64_t s, int64_t off, int64_t *lo, int64_t *hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = in - 1 - off < 0 ? -1 : (in - 1 - off) / s;
  if (*hi > on - 1) *hi = on - 1;
}

#define C3_DEFINE(T, S)                                                                                               \
  /* vol2col rows [0, K) (r = ((ci - c0) * KD + kd) * KH * KW + kh * KW + kw) for output columns [j0, j0 + jn)     \
   * (j = (od * OH + oh) * OW + ow) of one image's group starting at input channel c0: col[r * jn + j - j0] */     \
  C3_HOT static void c3_vol2col_##S(const c3_geom *g, const T *x, int64_t c0, int64_t K, int64_t j0, int64_t jn,      \
                                    T *col) {                                                                         \
    int64_t dhw = g->D * g->H * g->W, kk = g->KD * g->KH * g->KW;                                                     \
    for (int64_t r = 0; r < K; r++) {                                                                                 \
      int64_t kw = r % g->KW, kh = (r / g->KW) % g->KH, kd = (r / (g->KW * g->KH)) % g->KD, ci = c0 + r / kk;         \
      const T *xp = x + ci * dhw;                                                                                     \
      T *d = col + r * jn;                                                                                            \
      int64_t off = kw * g->dw - g->pw, lo, hi; /* iw = ow * sw + off */                                              \
      c3_range(g->W, g->OW, g->sw, off, &lo, &hi);                                                                    \
      int64_t ow0 = j0 % g->OW, oh = (j0 / g->OW) % g->OH, od = j0 / (g->OW * g->OH);                               \
      for (int64_t j = j0; j < j0 + jn; ow0 = 0) {                                                                    \
        int64_t ow1 = g->OW - ow0 > j0 + jn - j ? ow0 + (j0 + jn - j) : g->OW;                                        \
        T *dr = d + (j - j0) - ow0; /* dr[ow] is column (od, oh, ow) */                                               \
        int64_t id = od * g->sd - g->pd + kd * g->dd, ih = oh * g->sh - g->ph + kh * g->dh;                           \
        if (id < 0 || id >= g->D || ih < 0 || ih >= g->H) {                                                          \
          for (int64_t ow = ow0; ow < ow1; ow++) dr[ow] = 0;                                                          \
        } else {                                                                                                      \
          const T *row = xp + (id * g->H + ih) * g->W + off;                                                          \
          int64_t a = ow0 > lo ? ow0 : lo, b = ow1 - 1 < hi ? ow1 - 1 : hi;                                           \
          for (int64_t ow = ow0; ow < ow1 && ow < a; ow++) dr[ow] = 0;                                                \
          if (g->sw == 1)                                                                                             \
            for (int64_t ow = a; ow <= b; ow++) dr[ow] = row[ow];                                                     \
          else                                                                                                        \
            for (int64_t ow = a; ow <= b; ow++) dr[ow] = row[ow * g->sw];                                             \
          for (int64_t ow = (b + 1 > ow0 ? b + 1 : ow0); ow < ow1; ow++) dr[ow] = 0;                                  \
        }                                                                                                             \
        j += ow1 - ow0;                                                                                               \
        if (++oh == g->OH) oh = 0, od++;                                                                              \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* col2vol: adds col rows (r = (o * KD + kd) * KH * KW + kh * KW + kw, o counted from the chunk's first          \
   * channel) over input columns [j0, j0 + jn) into y's planes of those channels (y: the chunk's first plane) */   \
  C3_HOT static void c3_col2vol_##S(const c3_geom *g, int64_t M, const T *col, int64_t j0, int64_t jn, T *y) {        \
    int64_t odhw = g->OD * g->OH * g->OW, kk = g->KD * g->KH * g->KW;                                                 \
    for (int64_t r = 0; r < M; r++) {                                                                                 \
      int64_t kw = r % g->KW, kh = (r / g->KW) % g->KH, kd = (r / (g->KW * g->KH)) % g->KD, o = r / kk;               \
      T *yp = y + o * odhw;                                                                                           \
      const T *cr = col + r * jn;                                                                                     \
      int64_t off = kw * g->dw - g->pw, lo, hi; /* ow = iw * sw + off */                                              \
      c3_range(g->OW, g->W, g->sw, off, &lo, &hi);                                                                    \
      int64_t iw0 = j0 % g->W, ih = (j0 / g->W) % g->H, id = j0 / (g->W * g->H);                                     \
      for (int64_t j = j0; j < j0 + jn; iw0 = 0) {                                                                    \
        int64_t iw1 = g->W - iw0 > j0 + jn - j ? iw0 + (j0 + jn - j) : g->W;                                          \
        const T *cj = cr + (j - j0) - iw0; /* cj[iw] is column (id, ih, iw) */                                        \
        int64_t od = id * g->sd - g->pd + kd * g->dd, oh = ih * g->sh - g->ph + kh * g->dh;                           \
        if (od >= 0 && od < g->OD && oh >= 0 && oh < g->OH) {                                                         \
          T *row = yp + (od * g->OH + oh) * g->OW + off;                                                              \
          int64_t a = iw0 > lo ? iw0 : lo, b = iw1 - 1 < hi ? iw1 - 1 : hi;                                           \
          if (g->sw == 1)                                                                                             \
            for (int64_t iw = a; iw <= b; iw++) row[iw] += cj[iw];                                                    \
          else                                                                                                        \
            for (int64_t iw = a; iw <= b; iw++) row[iw * g->sw] += cj[iw];                                            \
        }                                                                                                             \
        j += iw1 - iw0;                                                                                               \
        if (++ih == g->H) ih = 0, id++;                                                                               \
      }                                                                                                               \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* depthwise (groups == C, one input channel per group): output planes [b, e) of N * O, tap by tap along      \
   * contiguous output rows, then the bias */                                                                     \
  C3_HOT static void c3_depthwise_##S(const c3_geom *g, const T *x, const T *w, const T *bias, T *y, int64_t b,       \
                                      int64_t e) {                                                                    \
    int64_t mult = g->O / g->C, dhw = g->D * g->H * g->W, odhw = g->OD * g->OH * g->OW;                               \
    int64_t kk = g->KD * g->KH * g->KW;                                                                               \
    for (int64_t p = b; p < e; p++) {                                                                                 \
      int64_t n = p / g->O, o = p % g->O;                                                                             \
      const T *xp = x + (n * g->C + o / mult) * dhw, *wp = w + o * kk;                                                \
      T *yp = y + p * odhw;                                                                                           \
      for (int64_t i = 0; i < odhw; i++) yp[i] = 0;                                                                   \
      for (int64_t od = 0; od < g->OD; od++)                                                                          \
        for (int64_t oh = 0; oh < g->OH; oh++) {                                                                      \
          T *yr = yp + (od * g->OH + oh) * g->OW;                                                                     \
          for (int64_t kd = 0; kd < g->KD; kd++) {                                                                    \
            int64_t id = od * g->sd - g->pd + kd * g->dd;                                                             \
            if (id < 0 || id >= g->D) continue;                                                                       \
            for (int64_t kh = 0; kh < g->KH; kh++) {                                                                  \
              int64_t ih = oh * g->sh - g->ph + kh * g->dh;                                                           \
              if (ih < 0 || ih >= g->H) continue;                                                                     \
              const T *xr = xp + (id * g->H + ih) * g->W;                                                             \
              for (int64_t kw = 0; kw < g->KW; kw++) {                                                                \
                T wv = wp[(kd * g->KH + kh) * g->KW + kw];                                                            \
                int64_t off = kw * g->dw - g->pw, lo, hi;                                                             \
                c3_range(g->W, g->OW, g->sw, off, &lo, &hi);                                                          \
                if (g->sw == 1)                                                                                       \
                  for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xr[ow + off];                                  \
                else                                                                                                  \
                  for (int64_t ow = lo; ow <= hi; ow++) yr[ow] += wv * xr[ow * g->sw + off];                          \
              }                                                                                                       \
            }                                                                                                         \
          }                                                                                                           \
        }                                                                                                             \
      if (bias)                                                                                                       \
        for (int64_t i = 0; i < odhw; i++) yp[i] += bias[o];                                                          \
    }                                                                                                                 \
  }                                                                                                                   \
                                                                                                                      \
  /* y[m, j] += bias[m] over rows [0, M) and columns [0, n), rows ld apart */                                      \
  static void c3_bias_##S(T *y, const T *bias, int64_t M, int64_t n, int64_t ld) {                                    \
    for (int64_t m = 0; m < M; m++)                                                                                   \
      for (int64_t j = 0; j < n; j++) y[m * ld + j] += bias[m];                                                       \
  }

C3_DEFINE(float, f32)
C3_DEFINE(double, f64)

/* c[M, N] = a[M, K] @ b[K, N] (row-major, rows lda / ldb / ldc apart) in the
 * work dtype, on the calling thread's BLAS threads. */
static void c3_gemm(bool dbl, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda, const void *b, int64_t ldb,
                    void *c, int64_t ldc) {
  if (dbl)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, 1.0, a, (blasint)lda,
                b, (blasint)ldb, 0.0, c, (blasint)ldc);
  else
    ts_rt_conv_sgemm(M, N, K, a, lda, b, ldb, c, ldc);
}

/* Below about 2M multiply-adds, waking workers and switching OpenBLAS's
 * thread count costs more than the split saves (as conv.c finds). */
static int64_t c3_threads(ts_rt_ctx *c, int64_t macs) { return macs < ((int64_t)1 << 21) ? 1 : c->nthreads; }

/* The forward tasks: task i is column block i % nblk of image and group
 * i / nblk. */
typedef struct c3_fwd {
  const c3_geom *g;
  bool dbl, direct;
  const char *x, *w, *bias;
  char *y;
  int64_t K, nb, nblk, ntasks;
  atomic_llong next;
  atomic_bool failed;
} c3_fwd;

/* One thread's share of the forward tasks, taken one at a time until none
 * are left (a thread slowed by another process leaves the rest to the
 * others). */
static void c3_fwd_run(void *arg, int64_t b, int64_t e) {
  (void)b, (void)e;
  c3_fwd *t = arg;
  const c3_geom *g = t->g;
  size_t es = t->dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, dhw = g->D * g->H * g->W, odhw = g->OD * g->OH * g->OW;
  void *col = NULL;
  if (!t->direct && !(col = ts_rt_malloc((size_t)(t->K * t->nb) * es))) {
    atomic_store(&t->failed, true);
    return;
  }
  for (;;) {
    int64_t i = (int64_t)atomic_fetch_add(&t->next, 1);
    if (i >= t->ntasks) break;
    int64_t ng = i / t->nblk, n = ng / g->groups, gi = ng % g->groups, j0 = i % t->nblk * t->nb;
    int64_t jn = odhw - j0 < t->nb ? odhw - j0 : t->nb;
    const char *xn = t->x + (size_t)(n * g->C * dhw) * es;
    const void *bm = col;
    int64_t ldb = jn;
    if (t->direct) {
      bm = xn + (size_t)(gi * Cg * dhw + j0) * es;
      ldb = dhw;
    } else if (t->dbl) {
      c3_vol2col_f64(g, (const double *)xn, gi * Cg, t->K, j0, jn, col);
    } else {
      c3_vol2col_f32(g, (const float *)xn, gi * Cg, t->K, j0, jn, col);
    }
    char *yb = t->y + (size_t)((n * g->O + gi * Og) * odhw + j0) * es;
    c3_gemm(t->dbl, Og, jn, t->K, t->w + (size_t)(gi * Og * t->K) * es, t->K, bm, ldb, yb, odhw);
    if (t->bias) {
      if (t->dbl)
        c3_bias_f64((double *)yb, (const double *)t->bias + gi * Og, Og, jn, odhw);
      else
        c3_bias_f32((float *)yb, (const float *)t->bias + gi * Og, Og, jn, odhw);
    }
  }
  ts_rt_free(col);
}

typedef struct c3_dw {
  const c3_geom *g;
  bool dbl;
  const void *x, *w, *bias;
  void *y;
} c3_dw;

static void c3_dw_run(void *arg, int64_t b, int64_t e) {
  const c3_dw *j = arg;
  if (j->dbl)
    c3_depthwise_f64(j->g, j->x, j->w, j->bias, j->y, b, e);
  else
    c3_depthwise_f32(j->g, j->x, j->w, j->bias, j->y, b, e);
}

bool ts_rt_conv3d_run(ts_rt_ctx *c, const ts_rt_conv3_geom *g, bool dbl, const void *x, const void *w,
                      const void *bias, void *y) {
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, odhw = g->OD * g->OH * g->OW;
  int64_t kk = g->KD * g->KH * g->KW, K = Cg * kk;
  if (g->N == 0 || g->O == 0 || odhw == 0) return true;
  if (K == 0) { /* sums of nothing: the bias */
    for (int64_t p = 0; p < g->N * g->O; p++)
      for (int64_t i = 0; i < odhw; i++) {
        size_t at = (size_t)(p * odhw + i);
        if (dbl)
          ((double *)y)[at] = bias ? ((const double *)bias)[p % g->O] : 0.0;
        else
          ((float *)y)[at] = bias ? ((const float *)bias)[p % g->O] : 0.0f;
      }
    return true;
  }
  if (g->groups > 1 && g->groups == g->C && Cg == 1) {
    c3_dw j = {g, dbl, x, w, bias, y};
    ts_rt_parallel_for(c, g->N * g->O, 32768 / (odhw * kk) + 1, c3_dw_run, &j);
    return true;
  }
  if (Og > INT_MAX || odhw > INT_MAX || K > INT_MAX) return ts_rt_fail(c, "convolution too large for BLAS");
  int64_t macs;
  if (!nnu_mul(Og * K, odhw, &macs) || !nnu_mul(macs, g->groups * g->N, &macs)) macs = INT64_MAX;
  int64_t nthreads = c3_threads(c, macs);
  bool direct = kk == 1 && g->sd == 1 && g->sh == 1 && g->sw == 1 && g->pd == 0 && g->ph == 0 && g->pw == 0 &&
                g->OD == g->D && g->OH == g->H && g->OW == g->W;
  /* column blocks of at most about 1 MiB of vol2col (at least 128 columns),
   * and at least 4 tasks per thread where there are columns enough */
  int64_t nb = 262144 / (dbl ? 2 : 1) / K;
  if (nb < 128) nb = 128;
  int64_t nblk = (odhw + nb - 1) / nb, images = g->N * g->groups;
  while (nthreads > 1 && nblk * images < 4 * nthreads && odhw / (nblk + 1) >= 128) nblk++;
  nb = ((odhw + nblk - 1) / nblk + 15) / 16 * 16;
  nblk = (odhw + nb - 1) / nb;
  c3_fwd t = {g, dbl, direct, x, w, bias, y, K, nb, nblk, images * nblk, 0, false};
  atomic_init(&t.next, 0);
  atomic_init(&t.failed, false);
  /* our threads run the tasks, so OpenBLAS runs each GEMM on the thread that calls it */
  if (nthreads > 1) openblas_set_num_threads(1);
  ts_rt_parallel_for(c, nthreads < t.ntasks ? nthreads : t.ntasks, 1, c3_fwd_run, &t);
  if (nthreads > 1) openblas_set_num_threads((int)nthreads);
  return !atomic_load(&t.failed) || ts_rt_oom(c);
}

/* The transposed tasks: task i is the output channel chunk i % nch (of mc
 * channels) of image and group i / nch. */
typedef struct c3_tr {
  const c3_geom *g;
  bool dbl;
  const char *x, *wt, *bias; /* wt: per group [Og * kk, Cg], W_g transposed */
  char *y;
  int64_t mc, nch, nb, ntasks;
  atomic_llong next;
  atomic_bool failed;
} c3_tr;

static void c3_tr_run(void *arg, int64_t b, int64_t e) {
  (void)b, (void)e;
  c3_tr *t = arg;
  const c3_geom *g = t->g;
  size_t es = t->dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, dhw = g->D * g->H * g->W, odhw = g->OD * g->OH * g->OW;
  int64_t kk = g->KD * g->KH * g->KW;
  void *col = ts_rt_malloc((size_t)(t->mc * kk * t->nb) * es);
  if (!col) {
    atomic_store(&t->failed, true);
    return;
  }
  for (;;) {
    int64_t i = (int64_t)atomic_fetch_add(&t->next, 1);
    if (i >= t->ntasks) break;
    int64_t ng = i / t->nch, n = ng / g->groups, gi = ng % g->groups, o0 = i % t->nch * t->mc;
    int64_t mc = Og - o0 < t->mc ? Og - o0 : t->mc, M = mc * kk;
    const char *xg = t->x + (size_t)((n * g->C + gi * Cg) * dhw) * es;
    const char *wg = t->wt + (size_t)((gi * Og + o0) * kk * Cg) * es;
    char *yg = t->y + (size_t)((n * g->O + gi * Og + o0) * odhw) * es;
    memset(yg, 0, (size_t)(mc * odhw) * es);
    for (int64_t j0 = 0; j0 < dhw; j0 += t->nb) {
      int64_t jn = dhw - j0 < t->nb ? dhw - j0 : t->nb;
      c3_gemm(t->dbl, M, jn, Cg, wg, Cg, xg + (size_t)j0 * es, dhw, col, jn);
      if (t->dbl)
        c3_col2vol_f64(g, M, col, j0, jn, (double *)yg);
      else
        c3_col2vol_f32(g, M, col, j0, jn, (float *)yg);
    }
    if (t->bias) {
      if (t->dbl)
        c3_bias_f64((double *)yg, (const double *)t->bias + gi * Og + o0, mc, odhw, odhw);
      else
        c3_bias_f32((float *)yg, (const float *)t->bias + gi * Og + o0, mc, odhw, odhw);
    }
  }
  ts_rt_free(col);
}

bool ts_rt_conv_transposed_run(ts_rt_ctx *c, const ts_rt_conv3_geom *g, bool dbl, const void *x, const void *w,
                               const void *bias, void *y) {
  size_t es = dbl ? sizeof(double) : sizeof(float);
  int64_t Cg = g->C / g->groups, Og = g->O / g->groups, dhw = g->D * g->H * g->W, odhw = g->OD * g->OH * g->OW;
  int64_t kk = g->KD * g->KH * g->KW;
  if (g->N == 0 || g->O == 0 || odhw == 0) return true;
  if (Cg == 0 || dhw == 0 || kk == 0) { /* nothing reaches the output but the bias */
    for (int64_t p = 0; p < g->N * g->O; p++)
      for (int64_t i = 0; i < odhw; i++) {
        size_t at = (size_t)(p * odhw + i);
        if (dbl)
          ((double *)y)[at] = bias ? ((const double *)bias)[p % g->O] : 0.0;
        else
          ((float *)y)[at] = bias ? ((const float *)bias)[p % g->O] : 0.0f;
      }
    return true;
  }
  int64_t M;
  if (!nnu_mul(Og, kk, &M) || M > INT_MAX || dhw > INT_MAX || Cg > INT_MAX)
    return ts_rt_fail(c, "convolution too large for BLAS");
  /* W_g [Cg, Og * kk] transposed once, so that each chunk's GEMM reads its
   * rows contiguously and ts_rt_conv_sgemm can slice K */
  int64_t nw;
  if (!nnu_mul(g->C, M, &nw) || (uint64_t)nw > SIZE_MAX / es) return ts_rt_fail(c, "convolution too large");
  char *wt = ts_rt_malloc((size_t)nw * es);
  if (!wt) return ts_rt_oom(c);
  for (int64_t gi = 0; gi < g->groups; gi++)
    for (int64_t ci = 0; ci < Cg; ci++)
      for (int64_t r = 0; r < M; r++) {
        size_t from = (size_t)((gi * Cg + ci) * M + r), to = (size_t)((gi * M + r) * Cg + ci);
        memcpy(wt + to * es, (const char *)w + from * es, es);
      }
  int64_t macs;
  if (!nnu_mul(M * Cg, dhw, &macs) || !nnu_mul(macs, g->groups * g->N, &macs)) macs = INT64_MAX;
  int64_t nthreads = c3_threads(c, macs), images = g->N * g->groups;
  /* chunks of output channels: at least 4 tasks per thread where there are
   * channels enough; columns in blocks of about 1 MiB of col */
  int64_t nch = 1;
  while (nthreads > 1 && nch < Og && images * nch < 4 * nthreads) nch++;
  int64_t mc = (Og + nch - 1) / nch;
  nch = (Og + mc - 1) / mc;
  int64_t nb = 262144 / (dbl ? 2 : 1) / (mc * kk);
  if (nb < 128) nb = 128;
  if (nb > dhw) nb = dhw;
  c3_tr t = {g, dbl, x, wt, bias, y, mc, nch, nb, images * nch, 0, false};
  atomic_init(&t.next, 0);
  atomic_init(&t.failed, false);
  if (nthreads > 1) openblas_set_num_threads(1);
  ts_rt_parallel_for(c, nthreads < t.ntasks ? nthreads : t.ntasks, 1, c3_tr_run, &t);
  if (nthreads > 1) openblas_set_num_threads((int)nthreads);
  ts_rt_free(wt);
  return !atomic_load(&t.failed) || ts_rt_oom(c);
}
