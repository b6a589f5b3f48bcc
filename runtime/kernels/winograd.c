/* runtime/kernels/winograd.c: float32 3x3 stride-1 convolution by Winograd
 * (Lavin and Gray, 2015): F(4x4, 3x3), each 4x4 output tile from a 6x6
 * input tile d as A^T [(G g G^T) . (B^T d B)] A, so that a tile costs 36
 * multiply-adds per input and output channel pair instead of 144; where
 * 4x4 tiles are too few, F(2x2, 3x3) (2x2 tiles from 4x4 windows, 16
 * multiply-adds instead of 36). The tiles are cut into chunks that the
 * ctx's threads take one at a time; a thread runs three phases on its
 * chunk (nx = 36 or 16 points):
 *   1. every input channel's tiles transformed, V[nx][C][T] (T tiles);
 *   2. nx GEMMs (OpenBLAS on the calling thread): M[xi] = U[xi] @ V[xi], U
 *      the transformed weights [nx][O][C], summed over the input channels
 *      in slices (conv.c's ts_rt_conv_sgemm);
 *   3. every output channel's tiles transformed back, row strip by row
 *      strip, with conv.c's epilogue on each strip while it is in cache.
 * A chunk's V and M fit about a core's L2, so that they stay in cache
 * between the phases, and no thread waits for another between them (three
 * joins per pass, each phase split over the threads, ran resnet18's 56x56
 * layer no faster at 2 threads than at 1; splitting the output channels
 * instead of the tiles where there is one chunk was no faster either). The
 * transforms run over all the tiles of a tile row at once, so that the
 * loops over the tiles vectorize. U is made once per constant weight and
 * kept with its storage (ts_rt_derived, as gemm_small.c keeps its panels).
 *
 * Rounding error (issue 19). tests/unit/test_rt_conv_error.c measures it
 * on every conv layer of resnet18/50, inception_v3, densenet121, vgg11/16
 * and mobilenet_v2 against PyTorch's float64, as a ratio to PyTorch's own
 * float32 error (the rule: at most 2). Nearly all of Winograd's error is
 * the GEMMs' rounding in the transformed domain, which A^T then weighs and
 * spreads over the tile's outputs; the rounding of U, V and the transforms
 * adds a little. So what counts is the interpolation points (how much A^T
 * and B^T amplify) and the GEMMs' summation:
 *   - F(4x4, 3x3) with Lavin's points 0, +-1, +-2 and infinity was 1.4x to
 *     4.6x PyTorch's error on the 3x3 stride-1 layers (64->64 at 56x56:
 *     2.4x, 512->512 at 28x28: 3.7x); 0, +-1, +-1/2, infinity is its
 *     mirror image (x -> 1/x) and errs alike. Among pairs +-a, +-b of
 *     halves, thirds, quarters and fifths (with 0 and infinity),
 *     0, +-3/2, +-2/3, infinity was about the best in a simulation of these
 *     transforms over OpenBLAS (unsliced GEMMs: 1.5x where Lavin's points
 *     gave 2.5x at 64 channels, 2.3x where they gave 4.1x at 256; with
 *     slices, +-3/2, +-3/4 and +-4/3, +-2/3 came within 2%). B^T's rows
 *     and A^T's columns are scaled to integers (below; the factors go into
 *     G, applied in double once per weight), so that the transforms
 *     multiply by exact constants and cost what Lavin's did.
 *   - The GEMMs sum the channels in slices (ts_rt_conv_sgemm), which cuts
 *     their error 1.7x at 512 channels. With Lavin's points and slices
 *     F(4x4, 3x3) was still 2.3x to 2.5x (simulated).
 * Both together: F(4x4, 3x3) is 1.06x to 1.62x PyTorch's error on those
 * layers (called directly, whatever conv.c chooses), F(2x2, 3x3) 0.67x to
 * 1.04x. */
#include <cblas.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
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

/* the largest input window (F(4x4, 3x3)'s) and its points */
#define WG_AMAX 6
#define WG_NXMAX (WG_AMAX * WG_AMAX)

/* tiles of m x m outputs over the geometry */
static int64_t wg_tiles(const ts_rt_wino_geom *g, int64_t m) {
  return (g->OH + m - 1) / m * ((g->OW + m - 1) / m) * g->N;
}

int ts_rt_wino_tile(const ts_rt_wino_geom *g) {
  /* Measured against im2col + one GEMM on one thread (resnet18's layers at
   * batch 1 and odd shapes): below 24 channels the small GEMMs cost more in
   * calls than they save (16 channels at 30x30: 1.8x slower); below 49
   * tiles the matrices of transformed weights are read for too little work
   * (512 channels at 7x7 by F(4x4): 1.9x slower, 256 at 14x14 (16 tiles):
   * no faster, and 28 MiB more kept weights); 64 channels at 56x56 and 128
   * at 28x28 take 0.5x and 0.4x the time. Where 4x4 tiles are too few,
   * 2x2 tiles (16 matrices, 2.25x fewer multiply-adds than im2col) pay
   * off from 64 channels: 0.6x the time at 256 channels and 14x14, 0.6x to
   * 0.75x at 64 to 512 channels and 13x13 to 20x20 (for 16/9 as many kept
   * floats as the weights). Those kept floats are capped at 2 MiB a layer
   * for 2x2 tiles: resnet18's three 256-channel 14x14 layers would keep
   * 12.6 MiB for about 1 ms each at one thread, which puts its peak memory
   * over the weights + 32 MiB that issue 7 holds it to. */
  if (g->C < 24 || g->O < 24) return 0;
  if (wg_tiles(g, 4) >= 49) return 4;
  if (g->C >= 64 && g->O >= 64 && wg_tiles(g, 2) >= 49 && (int64_t)16 * g->C * g->O <= ((int64_t)1 << 19))
    return 2;
  return 0;
}

bool ts_rt_wino_worth(const ts_rt_wino_geom *g) { return ts_rt_wino_tile(g) != 0; }

size_t ts_rt_wino_weights_len(int m, int64_t O, int64_t C) {
  if ((m != 2 && m != 4) || O <= 0 || C <= 0 || O > ((int64_t)1 << 20) || C > ((int64_t)1 << 20) ||
      O * C > ((int64_t)1 << 34))
    return 0;
  return (size_t)((m + 2) * (m + 2) * O * C);
}

/* u's rows for output channel o and input channels [c0, c0 + cn), cn <= 64:
 * the taps gathered channel-minor first, so that every entry of G g G^T is
 * a loop over the channels that vectorizes; summed in double, so that each
 * entry is rounded once. */
WG_HOT static void wg_weights_block(const float *w, int64_t O, int64_t C, int64_t o, int64_t c0, int64_t cn, int nx,
                                    const double (*k)[9], float *u) {
  double gt[9][64];
  for (int64_t ci = 0; ci < cn; ci++)
    for (int t = 0; t < 9; t++) gt[t][ci] = w[(o * C + c0 + ci) * 9 + t];
  for (int xi = 0; xi < nx; xi++) {
    float *d = u + ((int64_t)xi * O + o) * C + c0;
    for (int64_t ci = 0; ci < cn; ci++) {
      double acc = 0;
      for (int t = 0; t < 9; t++) acc += k[xi][t] * gt[t][ci];
      d[ci] = (float)acc;
    }
  }
}

void ts_rt_wino_weights(int m, const float *w, int64_t O, int64_t C, float *u) {
  /* F(4x4, 3x3) at 0, 3/2, -3/2, 2/3, -2/3, infinity: Toom-Cook's G with
   * row j divided by B^T's row factor and A^T's column factor (36 and 1,
   * 9 and 8, 12 and 27, 36 and 1: WG_BT4, WG_AT4) */
  static const double G4[6][3] = {{1.0 / 36, 0, 0},
                                  {1.0 / 585, 1.0 / 390, 1.0 / 260},
                                  {1.0 / 585, -1.0 / 390, 1.0 / 260},
                                  {-1.0 / 520, -1.0 / 780, -1.0 / 1170},
                                  {-1.0 / 520, 1.0 / 780, -1.0 / 1170},
                                  {0, 0, 1.0 / 36}};
  static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const double(*G)[3] = m == 2 ? G2 : G4;
  int a = m == 2 ? 4 : 6;
  /* (G g G^T)[i][j] = sum over taps (a, b) of G[i][a] G[j][b] g[a][b] */
  double k[WG_NXMAX][9];
  for (int i = 0; i < a; i++)
    for (int j = 0; j < a; j++)
      for (int t = 0; t < 9; t++) k[i * a + j][t] = G[i][t / 3] * G[j][t % 3];
  for (int64_t o = 0; o < O; o++)
    for (int64_t c0 = 0; c0 < C; c0 += 64) wg_weights_block(w, O, C, o, c0, C - c0 < 64 ? C - c0 : 64, a * a, k, u);
}

/* ------------------------------------------------ cached weights */

typedef struct wg_cached {
  ts_rt_derived d; /* first: the storage's list entry */
  const float *src;
  int64_t O, C;
  int m;    /* the output tile */
  float *u; /* NULL: a mark that the weight is not a constant */
} wg_cached;

/* the tag of our entries in a storage's derived list */
static const char wg_tag;

static void wg_cached_free(ts_rt_derived *d) { free(d); }

const float *ts_rt_wino_weights_input(const ts_rt_call *call, uint32_t i, const ts_rt_tensor *w, int m) {
  if (!ts_rt_call_input_from_constant(call, i) || w->dtype != TS_DT_FLOAT32 || w->ndim != 4 ||
      !ts_rt_tensor_is_contiguous(w))
    return NULL;
  const float *src = ts_rt_tensor_data(w);
  int64_t O = w->sizes[0], C = w->sizes[1];
  for (const ts_rt_derived *d = ts_rt_storage_derived(w->storage); d; d = d->next) {
    const wg_cached *p = (const wg_cached *)d;
    if (d->tag == &wg_tag && p->src == src && p->O == O && p->C == C && p->m == m) return p->u;
  }
  size_t len = ts_rt_wino_weights_len(m, O, C);
  if (!len) return NULL;
  bool constant = ts_rt_call_input_const(call, i);
  /* the C library's memory, not ts_rt_malloc: the copy outlives the run
   * (and its heap) that makes it; a mark alone when the weight may change,
   * so that the alias analysis runs once */
  size_t head = (sizeof(wg_cached) + 63) / 64 * 64, bytes = head + (constant ? len * sizeof(float) : 0);
  wg_cached *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) return NULL;
  *p = (wg_cached){.d = {.tag = &wg_tag, .free_fn = wg_cached_free}, .src = src, .O = O, .C = C, .m = m};
  if (constant) {
    p->u = (float *)(void *)((char *)p + head);
    ts_rt_wino_weights(m, src, O, C, p->u);
  }
  ts_rt_storage_add_derived(w->storage, &p->d);
  return p->u;
}

/* ------------------------------------------------ the three phases */

/* A chunk of tiles at most takes this many bytes of V and M together (at
 * least one tile): about a core's L2, so that V and M stay in cache from
 * one phase to the next (passes of 8 MiB, whole images of resnet18's 56x56
 * layer, ran 1.5-1.8x slower), or the bytes of U where those are more:
 * every chunk reads all of U, and where U is the larger stream, fewer
 * chunks read less (128 channels at 28x28, U 2.25 MiB: 49 tiles in one
 * chunk took 0.88 ms on one thread, in two 0.96, in seven 1.15). */
#define WG_PASS_BYTES ((int64_t)1 << 20)
static int64_t wg_pass_bytes; /* set by tests; 0: as above */

int64_t ts_rt_wino_pass_bytes(int64_t bytes) {
  return __atomic_exchange_n(&wg_pass_bytes, bytes > 0 ? bytes : 0, __ATOMIC_RELAXED);
}

/* The tiles of all the images in one sequence (tile t is column t % tw of
 * tile row t / tw; tile row R is row R % th of image R / th), cut into
 * nchunks chunks of nearly equal length that the threads take one at a
 * time. A thread runs all three phases of its chunk on its own V and M:
 * no thread waits for another between the phases, and V and M stay in the
 * cache of the core that made them. */
typedef struct wg_job {
  const ts_rt_wino_geom *g;
  int64_t m, a, nx;    /* output tile, input window, points (a * a) */
  int64_t tw, th;      /* tiles per tile row; tile rows per image */
  int64_t tiles;       /* N * th * tw */
  int64_t nchunks;     /* chunks */
  int64_t ld, xv, xm;  /* V's and M's rows (the most tiles in a chunk); from one of V's, M's matrices to the next */
  const float *x, *u;
  float *y;
  ts_rt_wino_epi_fn epi;
  const void *e;
  atomic_llong next;  /* the next chunk to take */
  float *mem;         /* the threads' buffers, one block of `per` floats each */
  size_t per;
  atomic_llong slot;  /* the next block to take */
} wg_job;

/* A thread's buffers: V [nx][C][ld], M [nx][O][ld] (matrices xv, xm
 * apart), the input strip and the transforms' scratch. */
typedef struct wg_bufs {
  float *v, *m;
  float *strip; /* a input rows, zero-padded: a * (tw * m + 2) */
  float *tmp;   /* nx * tw */
  float *out;   /* m output rows: m * tw * m */
} wg_bufs;

/* F(4x4, 3x3): B^T applied to d0..d5 (stride s apart), into r0..r5
 * (stride rs apart). Row j holds the coefficients of prod over the other
 * finite points q of (x - q) (row 5, infinity's: all five), scaled to
 * integers: rows 0 and 5 by 36, 1 and 2 by 9, 3 and 4 by 12. The rows of
 * a pair +-p share their even and odd parts. */
#define WG_BT4(d, s, r, rs)                                                                                           \
  do {                                                                                                                \
    float d0 = (d)[0], d1 = (d)[(s)], d2 = (d)[2 * (s)], d3 = (d)[3 * (s)], d4 = (d)[4 * (s)], d5 = (d)[5 * (s)];     \
    float e1 = 9 * d4 - 4 * d2, o1 = 13.5f * d3 - 6 * d1, e3 = 12 * d4 - 27 * d2, o3 = 8 * d3 - 18 * d1;              \
    (r)[0] = (36 * d0 - 97 * d2) + 36 * d4;                                                                           \
    (r)[(rs)] = e1 + o1;                                                                                              \
    (r)[2 * (rs)] = e1 - o1;                                                                                          \
    (r)[3 * (rs)] = e3 + o3;                                                                                          \
    (r)[4 * (rs)] = e3 - o3;                                                                                          \
    (r)[5 * (rs)] = (36 * d1 - 97 * d3) + 36 * d5;                                                                    \
  } while (0)

/* F(4x4, 3x3): A^T applied to m0..m5 (stride s apart), into r0..r3
 * (stride rs apart). Row i is p^i at each finite point p (and 1 at
 * infinity in row 3), columns scaled to integers: +-3/2's by 8, +-2/3's by
 * 27. */
#define WG_AT4(m, s, r, rs)                                                                                           \
  do {                                                                                                                \
    float m0 = (m)[0], m1 = (m)[(s)], m2 = (m)[2 * (s)], m3 = (m)[3 * (s)], m4 = (m)[4 * (s)], m5 = (m)[5 * (s)];     \
    float p12 = m1 + m2, q12 = m1 - m2, p34 = m3 + m4, q34 = m3 - m4;                                                 \
    (r)[0] = m0 + 8 * p12 + 27 * p34;                                                                                 \
    (r)[(rs)] = 12 * q12 + 18 * q34;                                                                                  \
    (r)[2 * (rs)] = 18 * p12 + 12 * p34;                                                                              \
    (r)[3 * (rs)] = (27 * q12 + 8 * q34) + m5;                                                                        \
  } while (0)

/* F(2x2, 3x3): B^T applied to d0..d3, into r0..r3 */
#define WG_BT2(d, s, r, rs)                                                                                           \
  do {                                                                                                                \
    float d0 = (d)[0], d1 = (d)[(s)], d2 = (d)[2 * (s)], d3 = (d)[3 * (s)];                                           \
    (r)[0] = d0 - d2;                                                                                                 \
    (r)[(rs)] = d1 + d2;                                                                                              \
    (r)[2 * (rs)] = d2 - d1;                                                                                          \
    (r)[3 * (rs)] = d1 - d3;                                                                                          \
  } while (0)

/* F(2x2, 3x3): A^T applied to m0..m3, into r0..r1 */
#define WG_AT2(m, s, r, rs)                                                                                           \
  do {                                                                                                                \
    float m0 = (m)[0], m1 = (m)[(s)], m2 = (m)[2 * (s)], m3 = (m)[3 * (s)];                                           \
    (r)[0] = m0 + m1 + m2;                                                                                            \
    (r)[(rs)] = m1 - m2 - m3;                                                                                         \
  } while (0)

/* The transforms of one tile size: M outputs per tile side, A inputs.
 *
 * Phase 1 for tiles [t0, t0 + T): per input channel and tile row, the A
 * input rows copied into a zero-padded strip, B^T along the rows of the
 * row's tiles in the chunk, then along the columns, into V (point i * A +
 * k: row transform i, column transform k).
 *
 * Phase 3 for tiles [t0, t0 + T): per output channel and tile row, A^T
 * along the columns of every tile's M, then along its rows into a strip
 * of M output rows, copied into y, then the epilogue on them. */
#define WG_PHASES(S, M, A, BT, AT)                                                                                    \
  WG_HOT static void wg_input_##S(const wg_job *j, int64_t t0, int64_t T, const wg_bufs *bf) {                       \
    const ts_rt_wino_geom *g = j->g;                                                                                  \
    int64_t tw = j->tw, wp = tw * (M) + 2;                                                                            \
    float *strip = bf->strip, *tmp = bf->tmp; /* tmp[(k * A + i) * tw + t]: row i of tile t, B^T along it */         \
    int64_t ld = j->ld, xs = j->xv;                                                                                   \
    /* the strip's columns q in [lo, hi) are input columns q - pw, the rest zeros */                                  \
    int64_t lo = g->pw < wp ? g->pw : wp, hi = g->pw + g->W < wp ? g->pw + g->W : wp;                                 \
    if (hi < lo) hi = lo;                                                                                             \
    for (int64_t ci = 0; ci < g->C; ci++)                                                                             \
      for (int64_t R = t0 / tw; R * tw < t0 + T; R++) {                                                               \
        /* this row's tiles [cb, ce) of the chunk */                                                                  \
        int64_t cb = t0 - R * tw > 0 ? t0 - R * tw : 0, ce = t0 + T - R * tw < tw ? t0 + T - R * tw : tw;             \
        int64_t n = R / j->th, r = R % j->th;                                                                         \
        const float *xp = j->x + (n * g->C + ci) * g->H * g->W;                                                       \
        for (int i = 0; i < (A); i++) {                                                                               \
          float *s = strip + i * wp;                                                                                  \
          int64_t ih = r * (M) + i - g->ph;                                                                           \
          if (ih < 0 || ih >= g->H) {                                                                                 \
            memset(s, 0, (size_t)wp * sizeof(float));                                                                \
            continue;                                                                                                 \
          }                                                                                                           \
          memset(s, 0, (size_t)lo * sizeof(float));                                                                   \
          memcpy(s + lo, xp + ih * g->W, (size_t)(hi - lo) * sizeof(float));                                          \
          memset(s + hi, 0, (size_t)(wp - hi) * sizeof(float));                                                       \
        }                                                                                                             \
        for (int i = 0; i < (A); i++) {                                                                               \
          const float *s = strip + i * wp;                                                                            \
          for (int64_t t = cb; t < ce; t++) BT(s + t * (M), 1, tmp + i * tw + t, (A) * tw);                           \
        }                                                                                                             \
        float *vt = bf->v + ci * ld + (R * tw + cb - t0) - cb; /* vt[t] is tile t of the row */                      \
        for (int k = 0; k < (A); k++) {                                                                               \
          const float *tk = tmp + k * (A) * tw;                                                                       \
          for (int64_t t = cb; t < ce; t++) BT(tk + t, tw, vt + k * xs + t, (A) * xs);                                \
        }                                                                                                             \
      }                                                                                                               \
  }                                                                                                                   \
                                                                                                                      \
  WG_HOT static void wg_output_##S(const wg_job *j, int64_t t0, int64_t T, const wg_bufs *bf) {                      \
    const ts_rt_wino_geom *g = j->g;                                                                                  \
    int64_t tw = j->tw, sw = tw * (M), ohw = g->OH * g->OW;                                                           \
    float *buf = bf->out, *tmp = bf->tmp; /* tmp[(r * A + k) * tw + t] */                                             \
    int64_t ld = j->ld, xs = j->xm;                                                                                   \
    for (int64_t o = 0; o < g->O; o++)                                                                                \
      for (int64_t R = t0 / tw; R * tw < t0 + T; R++) {                                                               \
        int64_t cb = t0 - R * tw > 0 ? t0 - R * tw : 0, ce = t0 + T - R * tw < tw ? t0 + T - R * tw : tw;             \
        int64_t n = R / j->th, r = R % j->th, p = n * g->O + o;                                                       \
        const float *mt = bf->m + o * ld + (R * tw + cb - t0) - cb; /* mt[t] is tile t of the row */                 \
        for (int k = 0; k < (A); k++)                                                                                 \
          for (int64_t t = cb; t < ce; t++) AT(mt + k * xs + t, (A) * xs, tmp + k * tw + t, (A) * tw);                \
        for (int i = 0; i < (M); i++)                                                                                 \
          for (int64_t t = cb; t < ce; t++) AT(tmp + i * (A) * tw + t, tw, buf + i * sw + t * (M), 1);                \
        int64_t oh0 = r * (M), rows = g->OH - oh0 < (M) ? g->OH - oh0 : (M);                                          \
        int64_t c0 = cb * (M), c1 = ce * (M) < g->OW ? ce * (M) : g->OW, at = p * ohw + oh0 * g->OW;                  \
        float *yr = j->y + at;                                                                                        \
        for (int64_t i = 0; i < rows; i++)                                                                            \
          memcpy(yr + i * g->OW + c0, buf + i * sw + c0, (size_t)(c1 - c0) * sizeof(float));                          \
        if (!j->epi) continue;                                                                                        \
        if (c0 == 0 && c1 == g->OW) {                                                                                 \
          j->epi(j->e, yr, at, o, rows * g->OW); /* whole rows: one stretch */                                        \
        } else {                                                                                                      \
          for (int64_t i = 0; i < rows; i++) j->epi(j->e, yr + i * g->OW + c0, at + i * g->OW + c0, o, c1 - c0);      \
        }                                                                                                             \
      }                                                                                                               \
  }

WG_PHASES(f4, 4, 6, WG_BT4, WG_AT4)
WG_PHASES(f2, 2, 4, WG_BT2, WG_AT2)

/* Phase 2: M[xi] = U[xi] @ V[xi] for the nx matrices, T columns, summed
 * over the input channels in slices (ts_rt_conv_sgemm). */
static void wg_gemm(const wg_job *j, int64_t T, const wg_bufs *bf) {
  const ts_rt_wino_geom *g = j->g;
  for (int64_t xi = 0; xi < j->nx; xi++)
    ts_rt_conv_sgemm(g->O, T, g->C, j->u + xi * g->O * g->C, g->C, bf->v + xi * j->xv, j->ld, bf->m + xi * j->xm,
                     j->ld);
}

/* A thread's block of buffers: V and M first, each 64-byte aligned as the
 * block is; *per: its floats (a multiple of 16). */
static wg_bufs wg_layout(const wg_job *j, float *mem, size_t *per) {
  int64_t tw = j->tw, m = j->m, a = j->a;
  size_t nv = (size_t)(j->nx * j->xv), nm = (size_t)(j->nx * j->xm);
  size_t ns = (size_t)(a * (tw * m + 2)), nt = (size_t)(j->nx * tw), no = (size_t)(m * tw * m);
  size_t av = (nv + 15) / 16 * 16, am = (nm + 15) / 16 * 16, as = (ns + 15) / 16 * 16, at = (nt + 15) / 16 * 16;
  *per = av + am + as + at + (no + 15) / 16 * 16;
  return (wg_bufs){mem, mem + av, mem + av + am, mem + av + am + as, mem + av + am + as + at};
}

/* One thread's share: its block of buffers, then chunks taken one at a
 * time until none are left, so that a thread woken late or slowed by
 * another process leaves the rest to the others. */
static void wg_worker(void *arg, int64_t b, int64_t e) {
  (void)b, (void)e;
  wg_job *j = arg;
  int64_t m = j->m;
  size_t per;
  wg_bufs bf = wg_layout(j, j->mem + (size_t)atomic_fetch_add(&j->slot, 1) * j->per, &per);
  int64_t q = j->tiles / j->nchunks, rem = j->tiles % j->nchunks;
  for (;;) {
    int64_t k = (int64_t)atomic_fetch_add(&j->next, 1);
    if (k >= j->nchunks) break;
    int64_t t0 = k * q + (k < rem ? k : rem), n = q + (k < rem ? 1 : 0);
    (m == 2 ? wg_input_f2 : wg_input_f4)(j, t0, n, &bf);
    wg_gemm(j, n, &bf);
    (m == 2 ? wg_output_f2 : wg_output_f4)(j, t0, n, &bf);
  }
}

/* The floats from one of V's (or M's) 36 matrices to the next, at least
 * n: a whole number of cache lines, and an odd one, so that the 36 rows the
 * transforms write (or read) at once fall in 36 different sets of the L1
 * cache (at 128 channels and 28 tiles, 56 KiB apart, 18 of them shared 2
 * sets: resnet18's 28x28 layer ran 1.2x slower). */
static int64_t wg_stride(int64_t n) {
  int64_t lines = (n + 15) / 16;
  return (lines | 1) * 16;
}

bool ts_rt_wino_conv(ts_rt_ctx *c, const ts_rt_wino_geom *g, int m, const float *x, const float *u, float *y,
                     ts_rt_wino_epi_fn epi, const void *e) {
  if (m != 2 && m != 4) return ts_rt_fail(c, "Winograd: no %dx%d tiles", m, m);
  int64_t a = m + 2, nx = a * a;
  int64_t th = (g->OH + m - 1) / m, tw = (g->OW + m - 1) / m, tiles = g->N * th * tw;
  if (tiles == 0) return true;
  int64_t per_tile = nx * (g->C + g->O) * (int64_t)sizeof(float), ubytes = nx * g->O * g->C * (int64_t)sizeof(float);
  int64_t budget = __atomic_load_n(&wg_pass_bytes, __ATOMIC_RELAXED);
  if (budget <= 0) budget = ubytes > WG_PASS_BYTES ? ubytes : WG_PASS_BYTES;
  int64_t pass = budget / per_tile;
  if (pass < 1) pass = 1;
  int64_t nthreads = c->nthreads > 1 ? c->nthreads : 1;
  /* as many chunks as fit the cache, rounded up to a multiple of the
   * threads so that each takes as many tiles */
  int64_t nchunks = (tiles + pass - 1) / pass;
  nchunks = (nchunks + nthreads - 1) / nthreads * nthreads;
  if (nchunks > tiles) nchunks = tiles;
  int64_t tmax = (tiles + nchunks - 1) / nchunks;
  if (tmax > INT32_MAX || g->C > INT32_MAX || g->O > INT32_MAX) return ts_rt_fail(c, "convolution too large for BLAS");
  wg_job j = {.g = g, .m = m, .a = a, .nx = nx, .tw = tw, .th = th, .tiles = tiles, .nchunks = nchunks, .ld = tmax,
              .xv = wg_stride(g->C * tmax), .xm = wg_stride(g->O * tmax), .x = x, .u = u, .y = y, .epi = epi, .e = e};
  atomic_init(&j.next, 0);
  atomic_init(&j.slot, 0);
  /* every thread's buffers from this thread's heap, in one block: memory
   * a worker thread allocated would stay with its own malloc arena */
  int64_t nw = nthreads < nchunks ? nthreads : nchunks;
  wg_layout(&j, NULL, &j.per);
  if (!(j.mem = ts_rt_malloc(j.per * (size_t)nw * sizeof(float)))) return ts_rt_oom(c);
  /* our threads run the GEMMs, so OpenBLAS runs each on the thread that calls it */
  if (nthreads > 1) openblas_set_num_threads(1);
  ts_rt_parallel_for(c, nw, 1, wg_worker, &j);
  if (nthreads > 1) openblas_set_num_threads((int)nthreads);
  ts_rt_free(j.mem);
  return true;
}
