/* runtime/kernels/winograd.h: float32 3x3 stride-1 convolution by Winograd
 * F(4x4, 3x3) or F(2x2, 3x3) (winograd.c), for conv.c. Internal to
 * runtime/. */
#ifndef TS_RT_KERNELS_WINOGRAD_H
#define TS_RT_KERNELS_WINOGRAD_H

#include "runtime.h"

/* The geometry: x [N, C, H, W] zero-padded by ph rows above and pw columns
 * left (and as many below and right as OH, OW need), weight [O, C, 3, 3],
 * y [N, O, OH, OW]; all contiguous. */
typedef struct ts_rt_wino_geom {
  int64_t N, C, H, W, O, ph, pw, OH, OW;
} ts_rt_wino_geom;

/* The epilogue conv.c runs on y[0, n): element `at` of the output, of
 * output channel o. */
typedef void (*ts_rt_wino_epi_fn)(const void *e, float *y, int64_t at, int64_t o, int64_t n);

/* The output tile m x m with which Winograd pays off for this geometry
 * (measured on resnet18's layers): 4, 2, or 0 where it does not (too few
 * channels or too few tiles for the GEMMs). */
int ts_rt_wino_tile(const ts_rt_wino_geom *g);

/* ts_rt_wino_tile(g) != 0 */
bool ts_rt_wino_worth(const ts_rt_wino_geom *g);

/* The floats of the transformed weights of [O, C, 3, 3] for m x m tiles (m
 * 4 or 2): (m + 2)^2 * O * C; 0 if m is neither or that is not below 2^40. */
size_t ts_rt_wino_weights_len(int m, int64_t O, int64_t C);

/* w [O, C, 3, 3] transformed for m x m tiles into u
 * (ts_rt_wino_weights_len floats): (m + 2)^2 matrices [O, C], u[(xi * O +
 * o) * C + c]. */
void ts_rt_wino_weights(int m, const float *w, int64_t O, int64_t C, float *u);

/* The transformed weights for m x m tiles of input i of the call (a
 * contiguous float32 [O, C, 3, 3] tensor w), made on the first call and
 * kept with w's storage when w is a constant nothing writes
 * (ts_rt_call_input_const); NULL otherwise or when out of memory: the
 * caller transforms them per call. */
const float *ts_rt_wino_weights_input(const ts_rt_call *call, uint32_t i, const ts_rt_tensor *w, int m);

/* y = conv(x, w) by m x m tiles with u = w transformed for them, then
 * epi(e, ...) on every output row strip (NULL: none), on c's threads.
 * False (reported to c) when out of memory. */
bool ts_rt_wino_conv(ts_rt_ctx *c, const ts_rt_wino_geom *g, int m, const float *x, const float *u, float *y,
                     ts_rt_wino_epi_fn epi, const void *e);

/* Sets the bytes of V and M one chunk of tiles may take (tests: many
 * chunks, rows cut between chunks, on small shapes; <= 0: the default,
 * chosen per geometry) and returns the previous setting (0: the default). */
int64_t ts_rt_wino_pass_bytes(int64_t bytes);

#endif
