/* runtime/tensor.c: storages, strided tensors, element conversion between
 * the ten dtypes, and copy_ (broadcast + dtype conversion + overlap).
 * Storages and tensors come from ts_rt_malloc (runtime/alloc.c); a new
 * tensor of exactly ctx->plan_nbytes bytes takes the memory plan's region. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ------------------------------------------------------------- half/bf16 */

float ts_rt_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    /* Subnormal: mant * 2^-24, exact in float. */
    float f = (float)mant * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t ts_rt_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return sign | 0x7e00; /* NaN, as c10::Half makes it */
  if (ax >= 0x477ff000u)
    return sign | 0x7c00; /* >= 65520 rounds to inf */
  if (ax < 0x38800000u) {
    /* Below the smallest normal half: adding 0.5 lines the half's subnormal
     * step (2^-24) up with float's ulp at 0.5, so the FPU rounds to even. */
    float a;
    memcpy(&a, &ax, sizeof a);
    a += 0.5f;
    uint32_t r;
    memcpy(&r, &a, sizeof r);
    return sign | (uint16_t)(r - 0x3f000000u);
  }
  uint32_t odd = (ax >> 13) & 1;
  ax += 0xc8000fffu + odd; /* rebias the exponent (127 -> 15) and round to nearest even */
  return sign | (uint16_t)(ax >> 13);
}

float ts_rt_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t ts_rt_float_to_bf16(float f) {
  /* PyTorch's vectorised conversion (what tensors go through) makes every
   * NaN 0xffff; its scalar one makes 0x7fc0. */
  if (isnan(f))
    return 0xffff;
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* ---------------------------------------------------------- load / store */

/* A double to int64 as x86's cvttsd2si does for what C leaves undefined
 * (NaN and out of range give INT64_MIN), which is what PyTorch gets. */
static int64_t ts_t_f2i(double v) {
  if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0))
    return INT64_MIN;
  return (int64_t)v;
}

/* The same for the narrower integer types, which C compilers (and so
 * PyTorch) convert through int32: out of int32's range gives INT32_MIN,
 * whose low bits are then kept. */
static int32_t ts_t_f2i32(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0))
    return INT32_MIN;
  return (int32_t)v;
}

double ts_rt_load_f64(const void *p, ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return *(const float *)p;
  case TS_DT_FLOAT64: return *(const double *)p;
  case TS_DT_FLOAT16: return ts_rt_half_to_float(*(const uint16_t *)p);
  case TS_DT_BFLOAT16: return ts_rt_bf16_to_float(*(const uint16_t *)p);
  case TS_DT_INT64: return (double)*(const int64_t *)p;
  case TS_DT_INT32: return *(const int32_t *)p;
  case TS_DT_INT16: return *(const int16_t *)p;
  case TS_DT_INT8: return *(const int8_t *)p;
  case TS_DT_UINT8: return *(const uint8_t *)p;
  case TS_DT_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
  /* the real part, as ATen's casts from complex to real take it */
  case TS_DT_COMPLEX64: return *(const float *)p;
  case TS_DT_COMPLEX128: return *(const double *)p;
  default: return 0.0;
  }
}

int64_t ts_rt_load_i64(const void *p, ts_dtype dt) {
  switch (dt) {
  case TS_DT_INT64: return *(const int64_t *)p;
  case TS_DT_INT32: return *(const int32_t *)p;
  case TS_DT_INT16: return *(const int16_t *)p;
  case TS_DT_INT8: return *(const int8_t *)p;
  case TS_DT_UINT8: return *(const uint8_t *)p;
  case TS_DT_BOOL: return *(const uint8_t *)p ? 1 : 0;
  default: return ts_t_f2i(ts_rt_load_f64(p, dt));
  }
}

void ts_rt_store_f64(void *p, ts_dtype dt, double v) {
  switch (dt) {
  case TS_DT_FLOAT32: *(float *)p = (float)v; break;
  case TS_DT_FLOAT64: *(double *)p = v; break;
  case TS_DT_FLOAT16: *(uint16_t *)p = ts_rt_float_to_half((float)v); break;
  case TS_DT_BFLOAT16: *(uint16_t *)p = ts_rt_float_to_bf16((float)v); break;
  case TS_DT_BOOL: *(uint8_t *)p = v != 0; break;
  case TS_DT_INT64: *(int64_t *)p = ts_t_f2i(v); break;
  case TS_DT_INT32:
  case TS_DT_INT16:
  case TS_DT_INT8:
  case TS_DT_UINT8: ts_rt_store_i64(p, dt, ts_t_f2i32(v)); break;
  case TS_DT_COMPLEX64: ((float *)p)[0] = (float)v, ((float *)p)[1] = 0; break;
  case TS_DT_COMPLEX128: ((double *)p)[0] = v, ((double *)p)[1] = 0; break;
  default: break;
  }
}

/* Narrower integer types keep the low bits (two's complement), as C's
 * conversions do on every machine we run on. */
void ts_rt_store_i64(void *p, ts_dtype dt, int64_t v) {
  switch (dt) {
  case TS_DT_INT64: *(int64_t *)p = v; break;
  case TS_DT_INT32: *(int32_t *)p = (int32_t)(uint32_t)(uint64_t)v; break;
  case TS_DT_INT16: *(int16_t *)p = (int16_t)(uint16_t)(uint64_t)v; break;
  case TS_DT_INT8: *(int8_t *)p = (int8_t)(uint8_t)(uint64_t)v; break;
  case TS_DT_UINT8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
  case TS_DT_BOOL: *(uint8_t *)p = v != 0; break;
  case TS_DT_FLOAT32: *(float *)p = (float)v; break;
  case TS_DT_FLOAT64: *(double *)p = (double)v; break;
  case TS_DT_FLOAT16: *(uint16_t *)p = ts_rt_float_to_half((float)v); break;
  case TS_DT_BFLOAT16: *(uint16_t *)p = ts_rt_float_to_bf16((float)v); break;
  case TS_DT_COMPLEX64: ((float *)p)[0] = (float)v, ((float *)p)[1] = 0; break;
  case TS_DT_COMPLEX128: ((double *)p)[0] = (double)v, ((double *)p)[1] = 0; break;
  default: break;
  }
}

const char *ts_rt_dtype_name(ts_dtype dt) {
  const char *n = ts_dtype_name(dt);
  return n ? n : "Undefined";
}

bool ts_rt_dtype_is_float(ts_dtype dt) {
  return dt == TS_DT_FLOAT32 || dt == TS_DT_FLOAT64 || dt == TS_DT_FLOAT16 || dt == TS_DT_BFLOAT16;
}

bool ts_rt_dtype_is_integral(ts_dtype dt, bool include_bool) {
  switch (dt) {
  case TS_DT_UINT8:
  case TS_DT_INT8:
  case TS_DT_INT16:
  case TS_DT_INT32:
  case TS_DT_INT64: return true;
  case TS_DT_BOOL: return include_bool;
  default: return false;
  }
}

/* complex32 (chalf) has no kernels at all; complex64 and complex128 have
 * storage, copies and the kernels of kernels/complex.c and fft.c. */
bool ts_rt_dtype_supported(ts_dtype dt) {
  return ts_rt_dtype_is_float(dt) || ts_rt_dtype_is_integral(dt, true) || dt == TS_DT_COMPLEX64 ||
         dt == TS_DT_COMPLEX128;
}

/* -------------------------------------------------------------- storages */

ts_rt_storage *ts_rt_storage_new(ts_rt_ctx *c, size_t nbytes, bool zero) {
  ts_rt_storage *s = ts_rt_malloc(sizeof *s);
  if (!s) {
    ts_rt_oom(c);
    return NULL;
  }
  void *data = NULL;
  if (nbytes) {
    data = zero ? ts_rt_calloc(1, nbytes) : ts_rt_malloc(nbytes);
    if (!data) {
      ts_rt_free(s);
      ts_rt_fail(c, "DefaultCPUAllocator: not enough memory: you tried to allocate %zu bytes.", nbytes);
      return NULL;
    }
  }
  s->h.refcount = 1;
  s->h.kind = TS_RT_OBJ_STORAGE;
  s->data = data;
  s->nbytes = nbytes;
  s->free_fn = NULL;
  s->free_ctx = NULL;
  s->derived = NULL;
  s->dev = NULL;
  s->dev_free = NULL;
  return s;
}

ts_rt_storage *ts_rt_storage_wrap(ts_rt_ctx *c, void *data, size_t nbytes, void (*free_fn)(void *, void *),
                                  void *free_ctx) {
  ts_rt_storage *s = ts_rt_malloc(sizeof *s);
  if (!s) {
    ts_rt_oom(c);
    return NULL;
  }
  s->h.refcount = 1;
  s->h.kind = TS_RT_OBJ_STORAGE;
  s->data = data;
  s->nbytes = nbytes;
  s->free_fn = free_fn;
  s->free_ctx = free_ctx;
  s->derived = NULL;
  s->dev = NULL;
  s->dev_free = NULL;
  return s;
}

const ts_rt_derived *ts_rt_storage_derived(const ts_rt_storage *s) {
  return __atomic_load_n(&s->derived, __ATOMIC_ACQUIRE);
}

void ts_rt_storage_add_derived(ts_rt_storage *s, ts_rt_derived *d) {
  d->next = __atomic_load_n(&s->derived, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&s->derived, &d->next, d, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
}

void ts_rt_storage_retain(ts_rt_storage *s) {
  if (s)
    ts_rt_obj_ref(&s->h);
}

void ts_rt_storage_release(ts_rt_storage *s) {
  if (!s || !ts_rt_obj_unref(&s->h))
    return;
  for (ts_rt_derived *d = s->derived, *next; d; d = next) {
    next = d->next;
    d->free_fn(d);
  }
  if (s->dev && s->dev_free)
    s->dev_free(s->dev);
  if (s->free_fn)
    s->free_fn(s->free_ctx, s->data);
  else
    ts_rt_free(s->data);
  ts_rt_free(s);
}

/* --------------------------------------------------------------- tensors */

/* "[2, 3]" */
static void ts_t_put_shape(ts_buf *b, int32_t ndim, const int64_t *sizes) {
  ts_buf_putc(b, '[');
  for (int32_t i = 0; i < ndim; i++)
    ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)sizes[i]);
  ts_buf_putc(b, ']');
}

/* A planned region belongs to the compiled code's arena, not the storage. */
static void ts_t_plan_free(void *ctx, void *data) {
  (void)ctx;
  (void)data;
}

/* The tensor struct with room for its sizes and strides after it. */
static ts_rt_tensor *ts_t_alloc(ts_rt_ctx *c, int32_t ndim) {
  if (ndim < 0 || ndim > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "tensors of %d dimensions are not supported (at most %d)", (int)ndim, TS_RT_MAX_DIMS);
    return NULL;
  }
  ts_rt_tensor *t = ts_rt_malloc(sizeof *t + 2 * (size_t)ndim * sizeof(int64_t));
  if (!t) {
    ts_rt_oom(c);
    return NULL;
  }
  t->h.refcount = 1;
  t->h.kind = TS_RT_OBJ_TENSOR;
  t->storage = NULL;
  t->offset = 0;
  t->dtype = TS_DT_FLOAT32;
  t->requires_grad = false;
  t->device.type = TS_DEV_CPU;
  t->device.index = -1;
  t->ndim = ndim;
  t->sizes = (int64_t *)(t + 1);
  t->strides = t->sizes + ndim;
  return t;
}

ts_rt_tensor *ts_rt_tensor_new(ts_rt_ctx *c, ts_dtype dt, int32_t ndim, const int64_t *sizes, bool zero) {
  if (!ts_rt_dtype_supported(dt)) {
    ts_rt_fail(c, "unsupported dtype %s", ts_dtype_name(dt) ? ts_dtype_name(dt) : "?");
    return NULL;
  }
  if (ndim < 0 || ndim > TS_RT_MAX_DIMS) {
    ts_rt_fail(c, "tensors of %d dimensions are not supported (at most %d)", (int)ndim, TS_RT_MAX_DIMS);
    return NULL;
  }
  size_t esz = ts_dtype_size(dt);
  int64_t numel = 1;
  for (int32_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0) {
      ts_buf b = {0};
      ts_t_put_shape(&b, ndim, sizes);
      ts_rt_fail(c, "Trying to create tensor with negative dimension %lld: %s", (long long)sizes[i],
                 b.data ? b.data : "");
      ts_buf_free(&b);
      return NULL;
    }
    if (sizes[i] && numel > INT64_MAX / sizes[i]) {
      ts_rt_fail(c, "tensor of too many elements");
      return NULL;
    }
    numel *= sizes[i];
  }
  if ((uint64_t)numel > SIZE_MAX / esz) {
    ts_rt_fail(c, "tensor of too many elements");
    return NULL;
  }
  size_t nbytes = (size_t)numel * esz;
  ts_rt_storage *s;
  if (c && c->plan_nbytes && nbytes == c->plan_nbytes) {
    /* The memory plan's slot for this tensor (runtime/hosted/aot.h); it is taken
     * once, whatever happens next. */
    void *data = c->plan_ptr;
    c->plan_ptr = NULL;
    c->plan_nbytes = 0;
    if (zero)
      memset(data, 0, nbytes);
    s = ts_rt_storage_wrap(c, data, nbytes, ts_t_plan_free, NULL);
  } else {
    s = ts_rt_storage_new(c, nbytes, zero);
  }
  if (!s)
    return NULL;
  ts_rt_tensor *t = ts_t_alloc(c, ndim);
  if (!t) {
    ts_rt_storage_release(s);
    return NULL;
  }
  t->storage = s;
  t->dtype = (int8_t)dt;
  if (ndim)
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof(int64_t));
  ts_rt_strides_contiguous(ndim, sizes, t->strides);
  return t;
}

ts_rt_tensor *ts_rt_tensor_new_view(ts_rt_ctx *c, ts_rt_storage *storage, ts_dtype dt, int64_t offset, int32_t ndim,
                                    const int64_t *sizes, const int64_t *strides) {
  /* A view allocates nothing, so expand can ask for any sizes: their
   * product must still fit int64, as ATen's safe_compute_numel checks (in
   * order, so an overflow before a 0 size counts, as there). */
  uint64_t numel = 1;
  bool over = false;
  for (int32_t i = 0; i < ndim; i++)
    if (sizes[i] >= 0)
      over = __builtin_mul_overflow(numel, (uint64_t)sizes[i], &numel) || over;
  if (over || numel > (uint64_t)INT64_MAX) {
    ts_rt_fail(c, "numel: integer multiplication overflow");
    return NULL;
  }
  ts_rt_tensor *t = ts_t_alloc(c, ndim);
  if (!t)
    return NULL;
  ts_rt_storage_retain(storage);
  t->storage = storage;
  t->offset = offset;
  t->dtype = (int8_t)dt;
  if (ndim) {
    memcpy(t->sizes, sizes, (size_t)ndim * sizeof(int64_t));
    memcpy(t->strides, strides, (size_t)ndim * sizeof(int64_t));
  }
  return t;
}

ts_rt_tensor *ts_rt_tensor_view(ts_rt_ctx *c, const ts_rt_tensor *base, int64_t offset, int32_t ndim,
                                const int64_t *sizes, const int64_t *strides) {
  ts_rt_tensor *t = ts_rt_tensor_new_view(c, base->storage, (ts_dtype)base->dtype, offset, ndim, sizes, strides);
  if (t) {
    t->device = base->device;
    t->requires_grad = base->requires_grad;
  }
  return t;
}

void ts_rt_tensor_retain(ts_rt_tensor *t) {
  if (t)
    ts_rt_obj_ref(&t->h);
}

void ts_rt_tensor_release(ts_rt_tensor *t) {
  if (!t || !ts_rt_obj_unref(&t->h))
    return;
  ts_rt_storage_release(t->storage);
  if (t->sizes != (int64_t *)(t + 1))
    ts_rt_free(t->sizes); /* grown by ts_rt_tensor_set_geometry */
  ts_rt_free(t);
}

bool ts_rt_tensor_resize(ts_rt_ctx *c, ts_rt_tensor *t, int32_t ndim, const int64_t *sizes, const int64_t *strides) {
  if (ndim < 0 || ndim > TS_RT_MAX_DIMS)
    return ts_rt_fail(c, "tensors of %d dimensions are not supported (at most %d)", (int)ndim, TS_RT_MAX_DIMS);
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  uint64_t numel = 1;
  bool over = false;
  for (int32_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0)
      return ts_rt_fail(c, "Trying to create tensor with negative dimension %lld", (long long)sizes[i]);
    over = __builtin_mul_overflow(numel, (uint64_t)sizes[i], &numel) || over;
  }
  if (over || numel > SIZE_MAX / es)
    return ts_rt_fail(c, "tensor of too many elements");
  int64_t contig[TS_RT_MAX_DIMS];
  if (!strides) {
    ts_rt_strides_contiguous(ndim, sizes, contig);
    strides = contig;
  }
  /* dense strides: the elements take numel slots from the offset */
  size_t need = (size_t)numel * es, have = t->storage->nbytes;
  if ((size_t)t->offset <= have / es && have - (size_t)t->offset * es >= need)
    return ts_rt_tensor_set_geometry(c, t, NULL, t->offset, ndim, sizes, strides);
  ts_rt_storage *st = ts_rt_storage_new(c, need, true);
  if (!st)
    return false;
  bool ok = ts_rt_tensor_set_geometry(c, t, st, 0, ndim, sizes, strides);
  ts_rt_storage_release(st);
  return ok;
}

bool ts_rt_tensor_resize_out(ts_rt_ctx *c, ts_rt_tensor *out, int32_t ndim, const int64_t *sizes,
                             const int64_t *strides) {
  if (out->ndim == ndim && (ndim == 0 || memcmp(out->sizes, sizes, (size_t)ndim * sizeof(int64_t)) == 0))
    return true;
  if (ts_rt_tensor_numel(out) != 0) {
    ts_buf a = {0}, b = {0};
    ts_t_put_shape(&a, out->ndim, out->sizes);
    ts_t_put_shape(&b, ndim, sizes);
    ts_rt_warn(c,
               "An output with one or more elements was resized since it had shape %s, which does not match the "
               "required output shape %s. This behavior is deprecated, and in a future PyTorch release outputs will "
               "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
               "it, inplace, to zero elements with t.resize_(0).",
               a.data ? a.data : "", b.data ? b.data : "");
    ts_buf_free(&a);
    ts_buf_free(&b);
  }
  return ts_rt_tensor_resize(c, out, ndim, sizes, strides);
}

bool ts_rt_tensor_set_geometry(ts_rt_ctx *c, ts_rt_tensor *t, ts_rt_storage *storage, int64_t offset, int32_t ndim,
                               const int64_t *sizes, const int64_t *strides) {
  if (ndim < 0 || ndim > TS_RT_MAX_DIMS)
    return ts_rt_fail(c, "tensors of %d dimensions are not supported (at most %d)", (int)ndim, TS_RT_MAX_DIMS);
  /* sizes/strides may be t's own */
  int64_t sz[TS_RT_MAX_DIMS], st[TS_RT_MAX_DIMS];
  if (ndim) {
    memcpy(sz, sizes, (size_t)ndim * sizeof(int64_t));
    memcpy(st, strides, (size_t)ndim * sizeof(int64_t));
  }
  int64_t *inline_room = (int64_t *)(t + 1);
  int64_t *room = t->sizes;
  /* the room after the struct holds 2 * (the rank it was made with), at
   * least the current rank's; beyond that the arrays move out of line */
  if (ndim > t->ndim) {
    room = ts_rt_malloc(2 * (size_t)ndim * sizeof(int64_t));
    if (!room)
      return ts_rt_oom(c);
    if (t->sizes != inline_room)
      ts_rt_free(t->sizes);
  }
  if (storage && storage != t->storage) {
    ts_rt_storage_retain(storage);
    ts_rt_storage_release(t->storage);
    t->storage = storage;
  }
  t->offset = offset;
  t->ndim = ndim;
  t->sizes = room;
  t->strides = room + ndim;
  if (ndim) {
    memcpy(t->sizes, sz, (size_t)ndim * sizeof(int64_t));
    memcpy(t->strides, st, (size_t)ndim * sizeof(int64_t));
  }
  return true;
}

int64_t ts_rt_tensor_numel(const ts_rt_tensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; i++)
    n *= t->sizes[i];
  return n;
}

void *ts_rt_tensor_data(const ts_rt_tensor *t) {
  if (!t->storage->data)
    return NULL;
  return (char *)t->storage->data + (size_t)t->offset * ts_dtype_size((ts_dtype)t->dtype);
}

bool ts_rt_tensor_is_contiguous(const ts_rt_tensor *t) {
  int64_t expect = 1;
  for (int32_t i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 0)
      return true;
  }
  for (int32_t i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 1)
      continue;
    if (t->strides[i] != expect)
      return false;
    expect *= t->sizes[i];
  }
  return true;
}

void ts_rt_strides_contiguous(int32_t ndim, const int64_t *sizes, int64_t *strides) {
  int64_t s = 1;
  for (int32_t i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    /* PyTorch treats size-0 dims as size 1 when computing strides. */
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
}

ts_rt_tensor *ts_rt_tensor_contiguous(ts_rt_ctx *c, ts_rt_tensor *t) {
  if (ts_rt_tensor_is_contiguous(t)) {
    ts_rt_tensor_retain(t);
    return t;
  }
  ts_rt_tensor *r = ts_rt_tensor_new(c, (ts_dtype)t->dtype, t->ndim, t->sizes, false);
  if (!r)
    return NULL;
  r->device = t->device;
  if (!ts_rt_tensor_copy_(c, r, t)) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  return r;
}

/* ----------------------------------------------------------------- copy_ */

/* A copy flattened to rows: dims coalesced, the last one the inner loop. */
typedef struct ts_t_copy {
  int32_t ndim;
  int64_t sizes[TS_RT_MAX_DIMS];
  int64_t dst_st[TS_RT_MAX_DIMS], src_st[TS_RT_MAX_DIMS];
  char *dst;
  const char *src;
  ts_dtype ddt, sdt;
  size_t desz, sesz;
} ts_t_copy;

/* Copies one row of n elements with the given element strides. */
static void ts_t_copy_row(const ts_t_copy *cp, char *d, const char *s, int64_t n, int64_t ds, int64_t ss) {
  if (cp->ddt == cp->sdt) {
    size_t esz = cp->desz;
    if (ds == 1 && ss == 1) {
      memcpy(d, s, (size_t)n * esz);
      return;
    }
    int64_t dstep = ds * (int64_t)esz, sstep = ss * (int64_t)esz;
    switch (esz) {
    case 4:
      for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
        memcpy(d, s, 4);
      return;
    case 8:
      for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
        memcpy(d, s, 8);
      return;
    case 16:
      for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
        memcpy(d, s, 16);
      return;
    case 2:
      for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
        memcpy(d, s, 2);
      return;
    default:
      for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
        *d = *s;
      return;
    }
  }
  int64_t dstep = ds * (int64_t)cp->desz, sstep = ss * (int64_t)cp->sesz;
  /* Typed loops for the conversions models do most; the rest go through
   * the generic load/store below. */
#define TS_T_CONV(SDT, DDT, ST, DT, EXPR)                                                                         \
  if (cp->sdt == SDT && cp->ddt == DDT) {                                                                        \
    for (int64_t i = 0; i < n; i++, d += dstep, s += sstep) {                                                    \
      ST x_;                                                                                                     \
      memcpy(&x_, s, sizeof x_);                                                                                 \
      DT y_ = EXPR;                                                                                              \
      memcpy(d, &y_, sizeof y_);                                                                                 \
    }                                                                                                            \
    return;                                                                                                      \
  }
  TS_T_CONV(TS_DT_FLOAT32, TS_DT_FLOAT64, float, double, (double)x_)
  TS_T_CONV(TS_DT_FLOAT64, TS_DT_FLOAT32, double, float, (float)x_)
  TS_T_CONV(TS_DT_FLOAT16, TS_DT_FLOAT32, uint16_t, float, ts_rt_half_to_float(x_))
  TS_T_CONV(TS_DT_FLOAT32, TS_DT_FLOAT16, float, uint16_t, ts_rt_float_to_half(x_))
  TS_T_CONV(TS_DT_BFLOAT16, TS_DT_FLOAT32, uint16_t, float, ts_rt_bf16_to_float(x_))
  TS_T_CONV(TS_DT_FLOAT32, TS_DT_BFLOAT16, float, uint16_t, ts_rt_float_to_bf16(x_))
  TS_T_CONV(TS_DT_INT64, TS_DT_FLOAT32, int64_t, float, (float)x_)
  TS_T_CONV(TS_DT_INT32, TS_DT_FLOAT32, int32_t, float, (float)x_)
  TS_T_CONV(TS_DT_BOOL, TS_DT_FLOAT32, uint8_t, float, x_ ? 1.0f : 0.0f)
  TS_T_CONV(TS_DT_UINT8, TS_DT_FLOAT32, uint8_t, float, (float)x_)
  TS_T_CONV(TS_DT_FLOAT32, TS_DT_INT64, float, int64_t, ts_t_f2i(x_))
  TS_T_CONV(TS_DT_FLOAT32, TS_DT_BOOL, float, uint8_t, x_ != 0)
  TS_T_CONV(TS_DT_INT32, TS_DT_INT64, int32_t, int64_t, x_)
  TS_T_CONV(TS_DT_BOOL, TS_DT_INT64, uint8_t, int64_t, x_ ? 1 : 0)
#undef TS_T_CONV
  if (ts_dtype_is_complex(cp->sdt) && ts_dtype_is_complex(cp->ddt)) {
    /* both parts, through double (complex64 <-> complex128) */
    for (int64_t i = 0; i < n; i++, d += dstep, s += sstep) {
      double re, im;
      if (cp->sdt == TS_DT_COMPLEX64) re = ((const float *)s)[0], im = ((const float *)s)[1];
      else re = ((const double *)s)[0], im = ((const double *)s)[1];
      if (cp->ddt == TS_DT_COMPLEX64) ((float *)d)[0] = (float)re, ((float *)d)[1] = (float)im;
      else ((double *)d)[0] = re, ((double *)d)[1] = im;
    }
  } else if (ts_rt_dtype_is_integral(cp->sdt, true)) {
    /* Integers through int64 so that int64 values above 2^53 stay exact. */
    for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
      ts_rt_store_i64(d, cp->ddt, ts_rt_load_i64(s, cp->sdt));
  } else {
    for (int64_t i = 0; i < n; i++, d += dstep, s += sstep)
      ts_rt_store_f64(d, cp->ddt, ts_rt_load_f64(s, cp->sdt));
  }
}

/* Rows [begin, end) of the copy (a ts_rt_range_fn). */
static void ts_t_copy_rows(void *arg, int64_t begin, int64_t end) {
  const ts_t_copy *cp = arg;
  int32_t last = cp->ndim - 1;
  int64_t idx[TS_RT_MAX_DIMS];
  /* Multi-index of row `begin` over the outer dims. */
  int64_t r = begin;
  for (int32_t k = last - 1; k >= 0; k--) {
    idx[k] = r % cp->sizes[k];
    r /= cp->sizes[k];
  }
  for (int64_t row = begin; row < end; row++) {
    int64_t doff = 0, soff = 0;
    for (int32_t k = 0; k < last; k++) {
      doff += idx[k] * cp->dst_st[k];
      soff += idx[k] * cp->src_st[k];
    }
    ts_t_copy_row(cp, cp->dst + doff * (int64_t)cp->desz, cp->src + soff * (int64_t)cp->sesz, cp->sizes[last],
                  cp->dst_st[last], cp->src_st[last]);
    for (int32_t k = last - 1; k >= 0; k--) {
      if (++idx[k] < cp->sizes[k])
        break;
      idx[k] = 0;
    }
  }
}

/* The transposed case (the inner dim is strided in src but the one before it
 * is not): jobs are (plane, block of 32 rows), copied in 32x32 tiles so that
 * both sides stay in cache. */
static void ts_t_copy_tiles(void *arg, int64_t begin, int64_t end) {
  const ts_t_copy *cp = arg;
  int32_t last = cp->ndim - 1;
  int64_t R = cp->sizes[last - 1], C = cp->sizes[last];
  int64_t rblocks = (R + 31) / 32;
  for (int64_t job = begin; job < end; job++) {
    int64_t plane = job / rblocks, r0 = (job % rblocks) * 32;
    int64_t doff = 0, soff = 0, rem = plane;
    for (int32_t k = last - 2; k >= 0; k--) {
      int64_t ik = rem % cp->sizes[k];
      rem /= cp->sizes[k];
      doff += ik * cp->dst_st[k];
      soff += ik * cp->src_st[k];
    }
    int64_t r1 = r0 + 32 < R ? r0 + 32 : R;
    for (int64_t c0 = 0; c0 < C; c0 += 32) {
      int64_t w = C - c0 < 32 ? C - c0 : 32;
      for (int64_t r = r0; r < r1; r++) {
        int64_t d = doff + r * cp->dst_st[last - 1] + c0 * cp->dst_st[last];
        int64_t s = soff + r * cp->src_st[last - 1] + c0 * cp->src_st[last];
        ts_t_copy_row(cp, cp->dst + d * (int64_t)cp->desz, cp->src + s * (int64_t)cp->sesz, w, cp->dst_st[last],
                      cp->src_st[last]);
      }
    }
  }
}

/* Whether two views of one storage may touch the same bytes (a cheap
 * bounding-interval test). */
static bool ts_t_may_overlap(const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->storage != b->storage)
    return false;
  int64_t alo = a->offset * (int64_t)ts_dtype_size((ts_dtype)a->dtype), ahi = alo;
  int64_t blo = b->offset * (int64_t)ts_dtype_size((ts_dtype)b->dtype), bhi = blo;
  for (int32_t i = 0; i < a->ndim; i++)
    ahi += (a->sizes[i] - 1) * a->strides[i] * (int64_t)ts_dtype_size((ts_dtype)a->dtype);
  for (int32_t i = 0; i < b->ndim; i++)
    bhi += (b->sizes[i] - 1) * b->strides[i] * (int64_t)ts_dtype_size((ts_dtype)b->dtype);
  ahi += (int64_t)ts_dtype_size((ts_dtype)a->dtype);
  bhi += (int64_t)ts_dtype_size((ts_dtype)b->dtype);
  return alo < bhi && blo < ahi;
}

static bool ts_t_same_geometry(const ts_rt_tensor *a, const ts_rt_tensor *b) {
  if (a->storage != b->storage || a->offset != b->offset || a->dtype != b->dtype || a->ndim != b->ndim)
    return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i]))
      return false;
  return true;
}

/* Whether src broadcasts to dst's shape exactly; PyTorch's messages if not. */
static bool ts_t_check_broadcast(ts_rt_ctx *c, const ts_rt_tensor *dst, const ts_rt_tensor *src) {
  int32_t nd = dst->ndim > src->ndim ? dst->ndim : src->ndim;
  int64_t shape[TS_RT_MAX_DIMS];
  bool same = nd == dst->ndim;
  for (int32_t i = 0; i < nd; i++) {
    int32_t di = i - (nd - dst->ndim), si = i - (nd - src->ndim);
    int64_t a = di >= 0 ? dst->sizes[di] : 1, b = si >= 0 ? src->sizes[si] : 1;
    if (a != b && a != 1 && b != 1)
      return ts_rt_fail(c, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                           "dimension %d",
                        (long long)a, (long long)b, (int)i);
    shape[i] = a == 1 ? b : a;
    if (di < 0 || shape[i] != a)
      same = false;
  }
  if (same)
    return true;
  ts_buf a = {0}, b = {0};
  ts_t_put_shape(&a, dst->ndim, dst->sizes);
  ts_t_put_shape(&b, nd, shape);
  ts_rt_fail(c, "output with shape %s doesn't match the broadcast shape %s", a.data ? a.data : "",
             b.data ? b.data : "");
  ts_buf_free(&a);
  ts_buf_free(&b);
  return false;
}

bool ts_rt_tensor_copy_(ts_rt_ctx *c, ts_rt_tensor *dst, const ts_rt_tensor *src) {
  if (!ts_rt_dtype_supported((ts_dtype)dst->dtype) || !ts_rt_dtype_supported((ts_dtype)src->dtype))
    return ts_rt_fail(c, "copy_: unsupported dtype");
  if (!ts_t_check_broadcast(c, dst, src))
    return false;
  if (ts_dtype_is_complex((ts_dtype)src->dtype) && !ts_dtype_is_complex((ts_dtype)dst->dtype))
    ts_rt_warn(c, "Casting complex values to real discards the imaginary part");
  /* src's dims right-aligned to dst's; broadcast dims get stride 0. */
  int32_t nd = dst->ndim, lead = dst->ndim - src->ndim;
  int64_t sst[TS_RT_MAX_DIMS];
  for (int32_t i = 0; i < nd; i++) {
    int64_t ss = i < lead ? 1 : src->sizes[i - lead];
    sst[i] = ss == 1 ? 0 : src->strides[i - lead];
  }
  int64_t numel = ts_rt_tensor_numel(dst);
  if (numel == 0)
    return true;
  if (ts_t_same_geometry(dst, src))
    return true;
  if (ts_t_may_overlap(dst, src)) {
    /* Read everything before writing anything. */
    ts_rt_tensor *tmp = ts_rt_tensor_new(c, (ts_dtype)src->dtype, src->ndim, src->sizes, false);
    if (!tmp)
      return false;
    bool ok = ts_rt_tensor_copy_(c, tmp, src) && ts_rt_tensor_copy_(c, dst, tmp);
    ts_rt_tensor_release(tmp);
    return ok;
  }
  ts_t_copy cp;
  cp.ddt = (ts_dtype)dst->dtype;
  cp.sdt = (ts_dtype)src->dtype;
  cp.desz = ts_dtype_size(cp.ddt);
  cp.sesz = ts_dtype_size(cp.sdt);
  cp.dst = ts_rt_tensor_data(dst);
  cp.src = ts_rt_tensor_data(src);
  /* Drop size-1 dims and merge dims that are contiguous in both. */
  cp.ndim = 0;
  for (int32_t i = 0; i < nd; i++) {
    int64_t sz = dst->sizes[i];
    if (sz == 1)
      continue;
    if (cp.ndim > 0) {
      int32_t p = cp.ndim - 1;
      if (cp.dst_st[p] == dst->strides[i] * sz && cp.src_st[p] == sst[i] * sz) {
        cp.sizes[p] *= sz;
        cp.dst_st[p] = dst->strides[i];
        cp.src_st[p] = sst[i];
        continue;
      }
    }
    cp.sizes[cp.ndim] = sz;
    cp.dst_st[cp.ndim] = dst->strides[i];
    cp.src_st[cp.ndim] = sst[i];
    cp.ndim++;
  }
  if (cp.ndim == 0) {
    cp.ndim = 1;
    cp.sizes[0] = 1;
    cp.dst_st[0] = 1;
    cp.src_st[0] = 1;
  }
  int32_t last = cp.ndim - 1;
  if (cp.ndim >= 2 && cp.sizes[last] >= 32 && cp.sizes[last - 1] >= 32 &&
      ((cp.src_st[last] != 1 && cp.src_st[last - 1] == 1) || (cp.dst_st[last] != 1 && cp.dst_st[last - 1] == 1))) {
    int64_t jobs = numel / (cp.sizes[last - 1] * cp.sizes[last]) * ((cp.sizes[last - 1] + 31) / 32);
    int64_t per_job = 32 * cp.sizes[last];
    int64_t tgrain = per_job >= 65536 ? 1 : 65536 / per_job;
    ts_rt_parallel_for(c, jobs, tgrain, ts_t_copy_tiles, &cp);
    return true;
  }
  int64_t rows = numel / cp.sizes[cp.ndim - 1];
  int64_t row_len = cp.sizes[cp.ndim - 1];
  /* Chunks of about 64K elements. */
  int64_t grain = row_len >= 65536 ? 1 : 65536 / row_len;
  if (rows == 1 || numel < 131072) {
    ts_t_copy_rows(&cp, 0, rows);
  } else {
    ts_rt_parallel_for(c, rows, grain, ts_t_copy_rows, &cp);
  }
  return true;
}

ts_rt_tensor *ts_rt_tensor_to_dtype(ts_rt_ctx *c, const ts_rt_tensor *src, ts_dtype dt) {
  ts_rt_tensor *r = ts_rt_tensor_new(c, dt, src->ndim, src->sizes, false);
  if (!r)
    return NULL;
  r->device = src->device;
  if (!ts_rt_tensor_copy_(c, r, src)) {
    ts_rt_tensor_release(r);
    return NULL;
  }
  return r;
}

ts_rt_tensor *ts_rt_tensor_scalar(ts_rt_ctx *c, ts_dtype dt, double f, int64_t i) {
  ts_rt_tensor *t = ts_rt_tensor_new(c, dt, 0, NULL, false);
  if (!t)
    return NULL;
  if (ts_rt_dtype_is_float(dt))
    ts_rt_store_f64(ts_rt_tensor_data(t), dt, f);
  else
    ts_rt_store_i64(ts_rt_tensor_data(t), dt, i);
  return t;
}

void ts_rt_tensor_foreach(const ts_rt_tensor *t, void (*fn)(void *arg, void *elem, int64_t index), void *arg) {
  int64_t n = ts_rt_tensor_numel(t);
  if (n == 0)
    return;
  size_t esz = ts_dtype_size((ts_dtype)t->dtype);
  char *base = ts_rt_tensor_data(t);
  int64_t idx[TS_RT_MAX_DIMS] = {0};
  int64_t off = 0;
  for (int64_t k = 0; k < n; k++) {
    fn(arg, base + off * (int64_t)esz, k);
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
      if (++idx[d] < t->sizes[d]) {
        off += t->strides[d];
        break;
      }
      off -= (idx[d] - 1) * t->strides[d];
      idx[d] = 0;
    }
  }
}
