/* tests/cuda/fake_libcuda.c: a stand-in for libcuda.so.1, so that the
 * driver paths of runtime/hosted/cuda.c (and tsaot-run --device cuda) run on hosts
 * without a GPU: TSAOT_LIBCUDA=.../libfake_cuda.so. "Device memory" is host
 * memory, a "module" a copy of the PTX text whose `.entry NAME(` lines are
 * its functions, a launch recorded (fake_cuda_last_launch) and, when the
 * library was compiled with tsaot --cuda-emulate, run on the CPU: the
 * runtime hands each kernel's CPU form to tsaot_fake_cuda_bind, and a
 * launch calls it once per GPU thread (grid x block, in order) with the
 * special registers tid, ntid, ctaid, nctaid. New device memory is filled
 * with 0xff bytes (NaN as floats), so that reading what no one wrote shows
 * in the results. Error
 * codes, names and texts are the real driver's (cuda.h of CUDA 13).
 * FAKE_CUDA_NO_DEVICE set: cuInit fails as on a host whose driver sees no
 * GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
  FAKE_SUCCESS = 0,
  FAKE_INVALID_VALUE = 1,
  FAKE_NOT_INITIALIZED = 3,
  FAKE_NO_DEVICE = 100,
  FAKE_INVALID_DEVICE = 101,
  FAKE_INVALID_PTX = 218,
  FAKE_NOT_FOUND = 500,
};

static int fake_inited;
static unsigned fake_grid, fake_block, fake_launches;

CUresult cuInit(unsigned flags) {
  if (getenv("FAKE_CUDA_NO_DEVICE"))
    return FAKE_NO_DEVICE;
  fake_inited = 1;
  return flags ? FAKE_INVALID_VALUE : FAKE_SUCCESS;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  if (!fake_inited)
    return FAKE_NOT_INITIALIZED;
  if (ordinal != 0)
    return FAKE_INVALID_DEVICE;
  *dev = 0;
  return FAKE_SUCCESS;
}

static int fake_ctx;
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  *ctx = &fake_ctx;
  return dev == 0 ? FAKE_SUCCESS : FAKE_INVALID_DEVICE;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return dev == 0 ? FAKE_SUCCESS : FAKE_INVALID_DEVICE; }
CUresult cuCtxSetCurrent(void *ctx) { return ctx == &fake_ctx ? FAKE_SUCCESS : FAKE_INVALID_VALUE; }

CUresult cuModuleLoadData(void **mod, const void *image) {
  if (!strstr(image, ".version ") || !strstr(image, ".target "))
    return FAKE_INVALID_PTX;
  *mod = strdup(image);
  return *mod ? FAKE_SUCCESS : FAKE_INVALID_VALUE;
}

typedef void (*fake_emu_fn)(void **args, const unsigned *sreg);
static struct {
  const void *fn;
  fake_emu_fn emu;
} fake_binds[4096];
static unsigned fake_nbinds;

int tsaot_fake_cuda_bind(const void *fn, fake_emu_fn emu) {
  for (unsigned i = 0; i < fake_nbinds; i++)
    if (fake_binds[i].fn == fn) {
      fake_binds[i].emu = emu;
      return 0;
    }
  if (fake_nbinds == sizeof fake_binds / sizeof fake_binds[0])
    return 1;
  fake_binds[fake_nbinds].fn = fn;
  fake_binds[fake_nbinds++].emu = emu;
  return 0;
}

CUresult cuModuleUnload(void *mod) {
  const char *lo = mod, *hi = lo + strlen(lo);
  for (unsigned i = 0; i < fake_nbinds;)
    if ((const char *)fake_binds[i].fn >= lo && (const char *)fake_binds[i].fn <= hi)
      fake_binds[i] = fake_binds[--fake_nbinds];
    else
      i++;
  free(mod);
  return FAKE_SUCCESS;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  char pat[128];
  snprintf(pat, sizeof pat, ".entry %s(", name);
  char *p = strstr(mod, pat);
  if (!p)
    return FAKE_NOT_FOUND;
  *fn = p;
  return FAKE_SUCCESS;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
  (void)stream;
  (void)extra;
  if (!fn || !params || gy != 1 || gz != 1 || by != 1 || bz != 1 || shared)
    return FAKE_INVALID_VALUE;
  fake_grid = gx;
  fake_block = bx;
  fake_launches++;
  for (unsigned i = 0; i < fake_nbinds; i++)
    if (fake_binds[i].fn == fn) {
      for (unsigned b = 0; b < gx; b++)
        for (unsigned t = 0; t < bx; t++) {
          unsigned sreg[4] = {t, bx, b, gx};
          fake_binds[i].emu(params, sreg);
        }
      break;
    }
  return FAKE_SUCCESS;
}

/* for the tests: the last launch's geometry and how many there were */
unsigned fake_cuda_last_launch(unsigned *grid, unsigned *block) {
  *grid = fake_grid;
  *block = fake_block;
  return fake_launches;
}

static long fake_live;
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  void *m = n ? malloc(n) : NULL;
  if (m)
    memset(m, 0xff, n);
  *p = (CUdeviceptr)(size_t)m;
  fake_live += m != NULL;
  return m ? FAKE_SUCCESS : FAKE_INVALID_VALUE;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  fake_live -= p != 0;
  free((void *)(size_t)p);
  return FAKE_SUCCESS;
}
/* for the tests: device allocations not freed */
long fake_cuda_live_allocs(void) { return fake_live; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(size_t)d, s, n);
  return FAKE_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(size_t)s, n);
  return FAKE_SUCCESS;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void *)(size_t)d, (const void *)(size_t)s, n);
  return FAKE_SUCCESS;
}

static int fake_stream;
CUresult cuStreamCreate(void **s, unsigned flags) {
  *s = &fake_stream;
  return flags ? FAKE_INVALID_VALUE : FAKE_SUCCESS;
}
CUresult cuStreamSynchronize(void *s) { return s == &fake_stream ? FAKE_SUCCESS : FAKE_INVALID_VALUE; }
CUresult cuStreamDestroy_v2(void *s) { return s == &fake_stream ? FAKE_SUCCESS : FAKE_INVALID_VALUE; }

typedef struct fake_event {
  struct timespec t;
  int recorded;
} fake_event;

CUresult cuEventCreate(void **e, unsigned flags) {
  *e = calloc(1, sizeof(fake_event));
  return *e && !flags ? FAKE_SUCCESS : FAKE_INVALID_VALUE;
}
CUresult cuEventRecord(void *e, void *s) {
  (void)s;
  fake_event *ev = e;
  clock_gettime(CLOCK_MONOTONIC, &ev->t);
  ev->recorded = 1;
  return FAKE_SUCCESS;
}
CUresult cuEventSynchronize(void *e) { return ((fake_event *)e)->recorded ? FAKE_SUCCESS : FAKE_INVALID_VALUE; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  const fake_event *x = a, *y = b;
  if (!x->recorded || !y->recorded)
    return FAKE_INVALID_VALUE;
  *ms = (float)((double)(y->t.tv_sec - x->t.tv_sec) * 1e3 + (double)(y->t.tv_nsec - x->t.tv_nsec) * 1e-6);
  return FAKE_SUCCESS;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  return FAKE_SUCCESS;
}

static const struct {
  int code;
  const char *name, *text;
} fake_errors[] = {
    {FAKE_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {FAKE_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {FAKE_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {FAKE_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {FAKE_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {FAKE_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

static CUresult fake_error(CUresult r, const char **s, int text) {
  for (size_t i = 0; i < sizeof fake_errors / sizeof fake_errors[0]; i++)
    if (fake_errors[i].code == r) {
      *s = text ? fake_errors[i].text : fake_errors[i].name;
      return FAKE_SUCCESS;
    }
  *s = NULL;
  return FAKE_INVALID_VALUE;
}
CUresult cuGetErrorName(CUresult r, const char **s) { return fake_error(r, s, 0); }
CUresult cuGetErrorString(CUresult r, const char **s) { return fake_error(r, s, 1); }
