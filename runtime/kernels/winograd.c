/* runtime/kernels/winograd.c: float32 3x3 stride-1 convolution by Winograd
 * F(4x4, 3x3) (Lavin and Gray, 2015, interpolation points 0, +-1, +-2):
 * each 4x4 output tile from a 6x6 input tile d as A^T [(G g G^T) . (B^T d
 * B)] A, so a tile costs 36 multiply-adds per input and output channel pair
 * instead of 144. Three phases, each split over the ctx's threads:
 *   1. every input channel's tiles transformed, V[36][C][T] (T tiles);
 *   2. 36 GEMMs (OpenBLAS on one thread each): M[xi] = U[xi] @ V[xi], U the
 *      transformed weights [36][O][C];
 *   3. every output channel's tiles transformed back, row strip by row
 *      strip, with conv.c's epilogue on each strip while it is in cache.
 * The phases run in passes over a few tile rows at a time, so that V and M
 * stay in cache between them; the transforms run over all the tiles of a
 * tile row at once, so that the loops over the tiles vectorize. U is made once per constant weight and
 * kept with its storage (ts_rt_derived, as gemm_small.c keeps its panels). */
#include <cblas.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_small.h"
#include "winograd.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#ifdef __SANITIZE_THREAD__ /* ThreadSanitizer: clones' ifunc resolvers would run before it is set up */
#define WG_HOT __attribute__((optimize("O3")))
#else
#define WG_HOT __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
#endif
#else
#define WG_HOT
#endif

/* the tile and its input window */
#define WG_M 4
#define WG_A 6
#define WG_NX (WG_A * WG_A)

bool ts_rt_wino_worth(const ts_rt_wino_geom *g) {
  /* Measured against im2col + one GEMM on one thread (resnet18's layers at
   * batch 1 and odd shapes): below 24 channels the 36 small GEMMs cost more
   * in calls than they save (16 channels at 30x30: 1.8x slower); below 49
   * tiles the 36 matrices of transformed weights, 4x the weights, are read
   * for too little work (512 channels at 7x7: 1.9x slower, 256 at 14x14
   * (16 tiles): no faster, and 28 MiB more kept weights); 64 channels at
   * 56x56 and 128 at 28x28 take 0.5x and 0.4x the time. */
  int64_t tiles = (g->OH + WG_M - 1) / WG_M * ((g->OW + WG_M - 1) / WG_M) * g->N;
  return g->C >= 24 && g->O >= 24 && tiles >= 49;
}

size_t ts_rt_wino_weights_len(int64_t O, int64_t C) {
  if (O <= 0 || C <= 0 || O > ((int64_t)1 << 20) || C > ((int64_t)1 << 20) || O * C > ((int64_t)1 << 34)) return 0;
  return (size_t)(WG_NX * O * C);
}

/* u's rows for output channel o and input channels [c0, c0 + cn), cn <= 64:
 * the taps gathered channel-minor first, so that every entry of G g G^T is
 * a loop over the channels that vectorizes. */
WG_HOT static void wg_weights_block(const float *w, int64_t O, int64_t C, int64_t o, int64_t c0, int64_t cn,
                                    const float (*k)[9], float *u) {
  float gt[9][64];
  for (int64_t ci = 0; ci < cn; ci++)
    for (int t = 0; t < 9; t++) gt[t][ci] = w[(o * C + c0 + ci) * 9 + t];
  for (int xi = 0; xi < WG_NX; xi++) {
    float *d = u + ((int64_t)xi * O + o) * C + c0;
    for (int64_t ci = 0; ci < cn; ci++) {
      float acc = 0;
      for (int t = 0; t < 9; t++) acc += k[xi][t] * gt[t][ci];
      d[ci] = acc;
    }
  }
}

void ts_rt_wino_weights(const float *w, int64_t O, int64_t C, float *u) {
  static const double G[WG_A][3] = {{1.0 / 4, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
  /* (G g G^T)[i][j] = sum over taps (a, b) of G[i][a] G[j][b] g[a][b] */
  float k[WG_NX][9];
  for (int i = 0; i < WG_A; i++)
    for (int j = 0; j < WG_A; j++)
      for (int t = 0; t < 9; t++) k[i * WG_A + j][t] = (float)(G[i][t / 3] * G[j][t % 3]);
  for (int64_t o = 0; o < O; o++)
    for (int64_t c0 = 0; c0 < C; c0 += 64) wg_weights_block(w, O, C, o, c0, C - c0 < 64 ? C - c0 : 64, k, u);
}

/* ------------------------------------------------ cached weights */

typedef struct wg_cached {
  ts_rt_derived d; /* first: the storage's list entry */
  const float *src;
  int64_t O, C;
  float *u; /* NULL: a mark that the weight is not a constant */
} wg_cached;

/* the tag of our entries in a storage's derived list */
static const char wg_tag;

static void wg_cached_free(ts_rt_derived *d) { free(d); }

const float *ts_rt_wino_weights_input(const ts_rt_call *call, uint32_t i, const ts_rt_tensor *w) {
  if (!ts_rt_call_input_from_constant(call, i) || w->dtype != TS_DT_FLOAT32 || w->ndim != 4 ||
      !ts_rt_tensor_is_contiguous(w))
    return NULL;
  const float *src = ts_rt_tensor_data(w);
  int64_t O = w->sizes[0], C = w->sizes[1];
  for (const ts_rt_derived *d = ts_rt_storage_derived(w->storage); d; d = d->next) {
    const wg_cached *p = (const wg_cached *)d;
    if (d->tag == &wg_tag && p->src == src && p->O == O && p->C == C) return p->u;
  }
  size_t len = ts_rt_wino_weights_len(O, C);
  if (!len) return NULL;
  bool constant = ts_rt_call_input_const(call, i);
  /* the C library's memory, not ts_rt_malloc: the copy outlives the run
   * (and its heap) that makes it; a mark alone when the weight may change,
   * so that the alias analysis runs once */
  size_t head = (sizeof(wg_cached) + 63) / 64 * 64, bytes = head + (constant ? len * sizeof(float) : 0);
  wg_cached *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) return NULL;
  *p = (wg_cached){.d = {.tag = &wg_tag, .free_fn = wg_cached_free}, .src = src, .O = O, .C = C};
  if (constant) {
    p->u = (float *)(void *)((char *)p + head);
    ts_rt_wino_weights(src, O, C, p->u);
  }
  ts_rt_storage_add_derived(w->storage, &p->d);
  return p->u;
}

/* ------------------------------------------------ the three phases */

/* The tile rows of a pass at most take this many bytes of V and M together
 * (at least one row): about a core's L2, so that V and M stay in cache
 * from one phase to the next (passes of 8 MiB, whole images of resnet18's
 * 56x56 layer, ran 1.5-1.8x slower). */
#define WG_PASS_BYTES ((int64_t)1 << 20)
static int64_t wg_pass_bytes = WG_PASS_BYTES;

int64_t ts_rt_wino_pass_bytes(int64_t bytes) {
  return __atomic_exchange_n(&wg_pass_bytes, bytes > 0 ? bytes : WG_PASS_BYTES, __ATOMIC_RELAXED);
}

/* One pass over tile rows [r0, r0 + nr) of all the images (row R is row R %
 * th of image R / th); V and M have T = nr * tw columns, tile t of row R at
 * column (R - r0) * tw + t. */
typedef struct wg_job {
  const ts_rt_wino_geom *g;
  int64_t tw, th;  /* tiles per tile row; tile rows per image */
  int64_t r0, nr, T;
  const float *x, *u;
  float *v, *m, *y;
  ts_rt_wino_epi_fn epi;
  const void *e;
  atomic_bool failed; /* a worker found no memory for its buffers */
} wg_job;

/* B^T applied to d0..d5 (stride s apart), into r0..r5 (stride rs apart) */
#define WG_BT(d, s, r, rs)                                                                                            \
  do {                                                                                                                \
    float d0 = (d)[0], d1 = (d)[(s)], d2 = (d)[2 * (s)], d3 = (d)[3 * (s)], d4 = (d)[4 * (s)], d5 = (d)[5 * (s)];     \
    (r)[0] = 4 * d0 - 5 * d2 + d4;                                                                                    \
    (r)[(rs)] = -4 * (d1 + d2) + d3 + d4;                                                                             \
    (r)[2 * (rs)] = 4 * (d1 - d2) - d3 + d4;                                                                          \
    (r)[3 * (rs)] = 2 * (d3 - d1) - d2 + d4;                                                                          \
    (r)[4 * (rs)] = 2 * (d1 - d3) - d2 + d4;                                                                          \
    (r)[5 * (rs)] = 4 * d1 - 5 * d3 + d5;                                                                             \
  } while (0)

/* A^T applied to m0..m5 (stride s apart), into r0..r3 (stride rs apart) */
#define WG_AT(m, s, r, rs)                                                                                            \
  do {                                                                                                                \
    float m0 = (m)[0], m1 = (m)[(s)], m2 = (m)[2 * (s)], m3 = (m)[3 * (s)], m4 = (m)[4 * (s)], m5 = (m)[5 * (s)];     \
    float p12 = m1 + m2, q12 = m1 - m2, p34 = m3 + m4, q34 = m3 - m4;                                                 \
    (r)[0] = m0 + p12 + p34;                                                                                          \
    (r)[(rs)] = q12 + 2 * q34;                                                                                        \
    (r)[2 * (rs)] = p12 + 4 * p34;                                                                                    \
    (r)[3 * (rs)] = q12 + 8 * q34 + m5;                                                                               \
  } while (0)

/* Phase 1 for input channels [b, e): each tile row's six input rows copied
 * into a zero-padded strip, B^T along the rows of every tile, then along
 * the columns, into V. */
WG_HOT static void wg_input(void *arg, int64_t b, int64_t e) {
  wg_job *j = arg;
  const ts_rt_wino_geom *g = j->g;
  int64_t tw = j->tw, wp = tw * WG_M + 2;
  float *strip = ts_rt_malloc((size_t)(WG_A * wp + WG_NX * tw) * sizeof(float));
  if (!strip) {
    atomic_store(&j->failed, true);
    return;
  }
  float *tmp = strip + WG_A * wp; /* tmp[(k * 6 + i) * tw + t]: row i of tile t with B^T along its columns, entry k */
  int64_t xs = g->C * j->T;       /* from one of V's matrices to the next */
  /* the strip's columns q in [lo, hi) are input columns q - pw, the rest zeros */
  int64_t lo = g->pw < wp ? g->pw : wp, hi = g->pw + g->W < wp ? g->pw + g->W : wp;
  if (hi < lo) hi = lo;
  for (int64_t ci = b; ci < e; ci++)
    for (int64_t R = j->r0; R < j->r0 + j->nr; R++) {
      int64_t n = R / j->th, r = R % j->th;
      const float *xp = j->x + (n * g->C + ci) * g->H * g->W;
      for (int i = 0; i < WG_A; i++) {
        float *s = strip + i * wp;
        int64_t ih = r * WG_M + i - g->ph;
        if (ih < 0 || ih >= g->H) {
          memset(s, 0, (size_t)wp * sizeof(float));
          continue;
        }
        memset(s, 0, (size_t)lo * sizeof(float));
        memcpy(s + lo, xp + ih * g->W, (size_t)(hi - lo) * sizeof(float));
        memset(s + hi, 0, (size_t)(wp - hi) * sizeof(float));
      }
      for (int i = 0; i < WG_A; i++) {
        const float *s = strip + i * wp;
        for (int64_t t = 0; t < tw; t++) WG_BT(s + t * WG_M, 1, tmp + i * tw + t, WG_A * tw);
      }
      float *vt = j->v + ci * j->T + (R - j->r0) * tw;
      for (int k = 0; k < WG_A; k++) {
        const float *tk = tmp + k * WG_A * tw;
        for (int64_t t = 0; t < tw; t++) WG_BT(tk + t, tw, vt + k * xs + t, WG_A * xs);
      }
    }
  ts_rt_free(strip);
}

/* Phase 2 for the matrices [b, e) of 36: M[xi] = U[xi] @ V[xi]. */
static void wg_gemm(void *arg, int64_t b, int64_t e) {
  const wg_job *j = arg;
  const ts_rt_wino_geom *g = j->g;
  for (int64_t xi = b; xi < e; xi++)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)g->O, (blasint)j->T, (blasint)g->C, 1.0f,
                j->u + xi * g->O * g->C, (blasint)g->C, j->v + xi * g->C * j->T, (blasint)j->T, 0.0f,
                j->m + xi * g->O * j->T, (blasint)j->T);
}

/* Phase 3 for output channels [b, e): per tile row, A^T along the columns
 * of every tile's M, then along its rows into a strip of 4 output rows,
 * copied into y, then the epilogue on them. */
WG_HOT static void wg_output(void *arg, int64_t b, int64_t e) {
  wg_job *j = arg;
  const ts_rt_wino_geom *g = j->g;
  int64_t tw = j->tw, sw = tw * WG_M, ohw = g->OH * g->OW;
  float *buf = ts_rt_malloc((size_t)(WG_M * sw + WG_M * WG_A * tw) * sizeof(float));
  if (!buf) {
    atomic_store(&j->failed, true);
    return;
  }
  float *tmp = buf + WG_M * sw; /* tmp[(r * 6 + k) * tw + t] */
  int64_t xs = g->O * j->T;
  for (int64_t o = b; o < e; o++)
    for (int64_t R = j->r0; R < j->r0 + j->nr; R++) {
      int64_t n = R / j->th, r = R % j->th, p = n * g->O + o;
      const float *mt = j->m + o * j->T + (R - j->r0) * tw;
      for (int k = 0; k < WG_A; k++)
        for (int64_t t = 0; t < tw; t++) WG_AT(mt + k * xs + t, WG_A * xs, tmp + k * tw + t, WG_A * tw);
      for (int i = 0; i < WG_M; i++)
        for (int64_t t = 0; t < tw; t++) WG_AT(tmp + i * WG_A * tw + t, tw, buf + i * sw + t * WG_M, 1);
      int64_t oh0 = r * WG_M, rows = g->OH - oh0 < WG_M ? g->OH - oh0 : WG_M;
      float *yr = j->y + p * ohw + oh0 * g->OW;
      for (int64_t i = 0; i < rows; i++) memcpy(yr + i * g->OW, buf + i * sw, (size_t)g->OW * sizeof(float));
      if (j->epi) j->epi(j->e, yr, p * ohw + oh0 * g->OW, o, rows * g->OW);
    }
  ts_rt_free(buf);
}

bool ts_rt_wino_conv(ts_rt_ctx *c, const ts_rt_wino_geom *g, const float *x, const float *u, float *y,
                     ts_rt_wino_epi_fn epi, const void *e) {
  int64_t th = (g->OH + WG_M - 1) / WG_M, tw = (g->OW + WG_M - 1) / WG_M, rows = g->N * th;
  if (rows == 0 || tw == 0) return true;
  int64_t per_row = WG_NX * (g->C + g->O) * tw * (int64_t)sizeof(float);
  int64_t pass = __atomic_load_n(&wg_pass_bytes, __ATOMIC_RELAXED) / per_row;
  if (pass < 1) pass = 1;
  if (pass > rows) pass = rows;
  if (pass * tw > INT32_MAX || g->C > INT32_MAX || g->O > INT32_MAX)
    return ts_rt_fail(c, "convolution too large for BLAS");
  wg_job j = {.g = g, .tw = tw, .th = th, .x = x, .u = u, .y = y, .epi = epi, .e = e};
  atomic_init(&j.failed, false);
  j.v = ts_rt_malloc((size_t)(WG_NX * g->C * pass * tw) * sizeof(float));
  j.m = j.v ? ts_rt_malloc((size_t)(WG_NX * g->O * pass * tw) * sizeof(float)) : NULL;
  if (!j.m) {
    ts_rt_free(j.v);
    return ts_rt_oom(c);
  }
  int64_t nthreads = c->nthreads > 1 ? c->nthreads : 1;
  /* our threads run the 36 GEMMs, so OpenBLAS runs each on the thread that calls it */
  if (nthreads > 1) openblas_set_num_threads(1);
  for (int64_t r0 = 0; r0 < rows && !atomic_load(&j.failed); r0 += pass) {
    j.r0 = r0;
    j.nr = rows - r0 < pass ? rows - r0 : pass;
    j.T = j.nr * tw;
    int64_t grain = 8192 / (j.T * WG_NX) + 1; /* channels per task: at least ~8K outputs of a transform */
    ts_rt_parallel_for(c, g->C, grain, wg_input, &j);
    if (atomic_load(&j.failed)) break;
    ts_rt_parallel_for(c, WG_NX, 1, wg_gemm, &j);
    ts_rt_parallel_for(c, g->O, grain, wg_output, &j);
  }
  if (nthreads > 1) openblas_set_num_threads((int)nthreads);
  ts_rt_free(j.v);
  ts_rt_free(j.m);
  return !atomic_load(&j.failed) || ts_rt_oom(c);
}
