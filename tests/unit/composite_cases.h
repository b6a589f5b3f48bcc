/* tests/unit/composite_cases.h: reading the flat fixture arrays of
 * tests/fixtures/composite/ (made by tests/fixtures/make_composite_cases.py)
 * and comparing tensors, for test_rt_rnn.c and test_rt_transformer.c.
 * Header only, like test.h: the checks count in the including test. It
 * defines the test's ts_rt_ctx `ctx`. */
#ifndef TS_TEST_COMPOSITE_CASES_H
#define TS_TEST_COMPOSITE_CASES_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "npy.h"
#include "runtime.h"
#include "test.h"

static ts_rt_ctx ctx;

/* A fixture's flat array and a cursor into it. */
typedef struct flat {
  ts_rt_tensor *t;
  int64_t pos;
} flat;

static bool flat_open(flat *f, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/fixtures/composite/%s.npy", TSAOT_SOURCE_DIR, name);
  f->t = ts_rt_npy_read(&ctx, path);
  f->pos = 0;
  if (!f->t) fprintf(stderr, "%s: %s\n", path, ctx.err.data ? ctx.err.data : "?");
  return TS_CHECK(f->t != NULL);
}

/* The next tensor of the given shape (a new contiguous copy). */
static ts_rt_tensor *flat_next(flat *f, int32_t ndim, const int64_t *sizes) {
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, (ts_dtype)f->t->dtype, ndim, sizes, false);
  if (!t) return NULL;
  int64_t n = ts_rt_tensor_numel(t);
  size_t es = ts_dtype_size((ts_dtype)f->t->dtype);
  if (!TS_CHECK(f->pos + n <= ts_rt_tensor_numel(f->t))) {
    ts_rt_tensor_release(t);
    return NULL;
  }
  if (n) memcpy(ts_rt_tensor_data(t), (char *)ts_rt_tensor_data(f->t) + (size_t)f->pos * es, (size_t)n * es);
  f->pos += n;
  return t;
}

#define NEXT(f, ...) \
  flat_next((f), (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static void flat_close(flat *f) {
  TS_CHECK_INTEQ(f->pos, ts_rt_tensor_numel(f->t));
  ts_rt_tensor_release(f->t);
}

/* got and want have the same shape and |got - want| <= atol + rtol*|want|. */
static bool check_close(const ts_rt_tensor *got, const ts_rt_tensor *want, double atol, double rtol) {
  if (!TS_CHECK(got != NULL) || !TS_CHECK_INTEQ(got->ndim, want->ndim)) return false;
  for (int32_t i = 0; i < got->ndim; i++)
    if (!TS_CHECK_INTEQ(got->sizes[i], want->sizes[i])) return false;
  if (!TS_CHECK_INTEQ(got->dtype, want->dtype)) return false;
  int64_t n = ts_rt_tensor_numel(want);
  size_t es = ts_dtype_size((ts_dtype)want->dtype);
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  double worst = 0;
  bool ok = true;
  for (int64_t k = 0; k < n; k++) {
    int64_t off = got->offset;
    for (int32_t d = 0; d < got->ndim; d++) off += idx[d] * got->strides[d];
    double g = ts_rt_load_f64((char *)got->storage->data + (size_t)off * es, (ts_dtype)got->dtype);
    double w = ts_rt_load_f64((char *)ts_rt_tensor_data(want) + (size_t)k * es, (ts_dtype)want->dtype);
    double err = fabs(g - w);
    if (!(err <= atol + rtol * fabs(w))) {
      if (ok) fprintf(stderr, "  element %lld: got %.8g, want %.8g\n", (long long)k, g, w);
      ok = false;
    }
    if (err > worst) worst = err;
    for (int32_t d = got->ndim - 1; d >= 0; d--) {
      if (++idx[d] < got->sizes[d]) break;
      idx[d] = 0;
    }
  }
  return TS_CHECK(ok);
}

#endif
