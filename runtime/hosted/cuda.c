/* runtime/hosted/cuda.c: the CUDA driver API through dlopen (hosted/cuda.h).
 *
 * The driver is looked up at run time so that the runtime has no link-time
 * dependency on it: a CPU-only host loads everything and is told, only
 * when it asks for CUDA, that there is no driver. The prototypes are the
 * driver API's (cuda.h of CUDA 12/13; the _v2 names are what cuda.h's
 * macros make of cuMemAlloc, cuMemFree, cuMemcpy*, cuStreamDestroy and
 * cuEventDestroy since API version 3020/4000), written out here so that
 * building needs no CUDA toolkit. */
#include "cuda.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ts_cu_result (*ts_cu_init_fn)(unsigned);
typedef ts_cu_result (*ts_cu_device_get_fn)(int *, int);
typedef ts_cu_result (*ts_cu_ctx_retain_fn)(ts_cu_handle *, int);
typedef ts_cu_result (*ts_cu_ctx_release_fn)(int);
typedef ts_cu_result (*ts_cu_ctx_set_fn)(ts_cu_handle);
typedef ts_cu_result (*ts_cu_module_load_fn)(ts_cu_handle *, const void *);
typedef ts_cu_result (*ts_cu_module_unload_fn)(ts_cu_handle);
typedef ts_cu_result (*ts_cu_module_fn_fn)(ts_cu_handle *, ts_cu_handle, const char *);
typedef ts_cu_result (*ts_cu_launch_fn)(ts_cu_handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, ts_cu_handle, void **, void **);
typedef ts_cu_result (*ts_cu_alloc_fn)(ts_cu_deviceptr *, size_t);
typedef ts_cu_result (*ts_cu_free_fn)(ts_cu_deviceptr);
typedef ts_cu_result (*ts_cu_htod_fn)(ts_cu_deviceptr, const void *, size_t);
typedef ts_cu_result (*ts_cu_dtoh_fn)(void *, ts_cu_deviceptr, size_t);
typedef ts_cu_result (*ts_cu_dtod_fn)(ts_cu_deviceptr, ts_cu_deviceptr, size_t);
typedef ts_cu_result (*ts_cu_stream_create_fn)(ts_cu_handle *, unsigned);
typedef ts_cu_result (*ts_cu_handle_fn)(ts_cu_handle); /* cuStreamSynchronize, *Destroy, cuEventSynchronize */
typedef ts_cu_result (*ts_cu_event_create_fn)(ts_cu_handle *, unsigned);
typedef ts_cu_result (*ts_cu_event_record_fn)(ts_cu_handle, ts_cu_handle);
typedef ts_cu_result (*ts_cu_event_elapsed_fn)(float *, ts_cu_handle, ts_cu_handle);
typedef ts_cu_result (*ts_cu_error_fn)(ts_cu_result, const char **);

/* The entry points. */
typedef struct ts_rt_cuda_api {
  ts_cu_init_fn init;
  ts_cu_device_get_fn device_get;
  ts_cu_ctx_retain_fn ctx_retain;
  ts_cu_ctx_release_fn ctx_release;
  ts_cu_ctx_set_fn ctx_set;
  ts_cu_module_load_fn module_load;
  ts_cu_module_unload_fn module_unload;
  ts_cu_module_fn_fn module_fn;
  ts_cu_launch_fn launch;
  ts_cu_alloc_fn alloc;
  ts_cu_free_fn free;
  ts_cu_htod_fn htod;
  ts_cu_dtoh_fn dtoh;
  ts_cu_dtod_fn dtod;
  ts_cu_stream_create_fn stream_create;
  ts_cu_handle_fn stream_sync;
  ts_cu_handle_fn stream_destroy;
  ts_cu_event_create_fn event_create;
  ts_cu_event_record_fn event_record;
  ts_cu_handle_fn event_sync;
  ts_cu_event_elapsed_fn event_elapsed;
  ts_cu_handle_fn event_destroy;
  ts_cu_error_fn error_name;
  ts_cu_error_fn error_string;
} ts_rt_cuda_api;

/* Each entry point's symbol and its field. */
static const struct {
  const char *name;
  size_t off;
} ts_cu_syms[] = {
    {"cuInit", offsetof(ts_rt_cuda_api, init)},
    {"cuDeviceGet", offsetof(ts_rt_cuda_api, device_get)},
    {"cuDevicePrimaryCtxRetain", offsetof(ts_rt_cuda_api, ctx_retain)},
    {"cuDevicePrimaryCtxRelease_v2", offsetof(ts_rt_cuda_api, ctx_release)},
    {"cuCtxSetCurrent", offsetof(ts_rt_cuda_api, ctx_set)},
    {"cuModuleLoadData", offsetof(ts_rt_cuda_api, module_load)},
    {"cuModuleUnload", offsetof(ts_rt_cuda_api, module_unload)},
    {"cuModuleGetFunction", offsetof(ts_rt_cuda_api, module_fn)},
    {"cuLaunchKernel", offsetof(ts_rt_cuda_api, launch)},
    {"cuMemAlloc_v2", offsetof(ts_rt_cuda_api, alloc)},
    {"cuMemFree_v2", offsetof(ts_rt_cuda_api, free)},
    {"cuMemcpyHtoD_v2", offsetof(ts_rt_cuda_api, htod)},
    {"cuMemcpyDtoH_v2", offsetof(ts_rt_cuda_api, dtoh)},
    {"cuMemcpyDtoD_v2", offsetof(ts_rt_cuda_api, dtod)},
    {"cuStreamCreate", offsetof(ts_rt_cuda_api, stream_create)},
    {"cuStreamSynchronize", offsetof(ts_rt_cuda_api, stream_sync)},
    {"cuStreamDestroy_v2", offsetof(ts_rt_cuda_api, stream_destroy)},
    {"cuEventCreate", offsetof(ts_rt_cuda_api, event_create)},
    {"cuEventRecord", offsetof(ts_rt_cuda_api, event_record)},
    {"cuEventSynchronize", offsetof(ts_rt_cuda_api, event_sync)},
    {"cuEventElapsedTime", offsetof(ts_rt_cuda_api, event_elapsed)},
    {"cuEventDestroy_v2", offsetof(ts_rt_cuda_api, event_destroy)},
    {"cuGetErrorName", offsetof(ts_rt_cuda_api, error_name)},
    {"cuGetErrorString", offsetof(ts_rt_cuda_api, error_string)},
};

/* "what: CUDA_ERROR_X: the driver's text" for a failed call. */
static bool ts_cu_fail(const ts_rt_cuda *c, ts_buf *err, const char *what, ts_cu_result r) {
  const char *name = NULL, *text = NULL;
  if (c && c->api) {
    if (c->api->error_name(r, &name) != 0)
      name = NULL;
    if (c->api->error_string(r, &text) != 0)
      text = NULL;
  }
  if (err) {
    if (name)
      ts_buf_printf(err, "%s: %s: %s", what, name, text ? text : "(no description)");
    else
      ts_buf_printf(err, "%s: CUDA error %d", what, r);
  }
  return false;
}

#define TS_CU_CALL(c, err, what, call)                                                                        \
  do {                                                                                                         \
    ts_cu_result r_ = (call);                                                                                  \
    if (r_ != 0)                                                                                               \
      return ts_cu_fail(c, err, what, r_);                                                                     \
  } while (0)

bool ts_rt_cuda_open(ts_rt_cuda *c, int ordinal, ts_buf *err) {
  memset(c, 0, sizeof *c);
  const char *lib = getenv("TSAOT_LIBCUDA");
  if (!lib || !*lib)
    lib = "libcuda.so.1";
  c->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!c->lib) {
    const char *why = dlerror();
    ts_buf_printf(err, "CUDA driver %s not found (dlopen: %s): this host has no NVIDIA driver", lib,
                  why ? why : "?");
    return false;
  }
  ts_rt_cuda_api *api = calloc(1, sizeof *api);
  if (!api) {
    ts_buf_printf(err, "out of memory");
    ts_rt_cuda_close(c);
    return false;
  }
  c->api = api;
  for (size_t i = 0; i < sizeof ts_cu_syms / sizeof ts_cu_syms[0]; i++) {
    void *p = dlsym(c->lib, ts_cu_syms[i].name);
    if (!p) {
      ts_buf_printf(err, "CUDA driver %s lacks %s: the driver is too old", lib, ts_cu_syms[i].name);
      ts_rt_cuda_close(c);
      return false;
    }
    /* POSIX: dlsym's address of a function is the function pointer's bits */
    memcpy((char *)api + ts_cu_syms[i].off, &p, sizeof p);
  }
  ts_cu_result r = api->init(0);
  if (r != 0) {
    ts_cu_fail(c, err, "cuInit", r);
    ts_rt_cuda_close(c);
    return false;
  }
  if ((r = api->device_get(&c->device, ordinal)) != 0 || (r = api->ctx_retain(&c->ctx, c->device)) != 0) {
    char what[48];
    snprintf(what, sizeof what, "CUDA device %d", ordinal);
    ts_cu_fail(c, err, what, r);
    ts_rt_cuda_close(c);
    return false;
  }
  if ((r = api->ctx_set(c->ctx)) != 0 || (r = api->stream_create(&c->stream, 0)) != 0) {
    ts_cu_fail(c, err, c->stream ? "cuCtxSetCurrent" : "cuStreamCreate", r);
    ts_rt_cuda_close(c);
    return false;
  }
  return true;
}

void ts_rt_cuda_close(ts_rt_cuda *c) {
  if (!c)
    return;
  if (c->api) {
    if (c->module)
      c->api->module_unload(c->module);
    if (c->stream)
      c->api->stream_destroy(c->stream);
    if (c->ctx)
      c->api->ctx_release(c->device);
  }
  free(c->api);
  if (c->lib)
    dlclose(c->lib);
  memset(c, 0, sizeof *c);
}

bool ts_rt_cuda_module_load(ts_rt_cuda *c, const char *ptx, ts_cu_handle *module, ts_buf *err) {
  TS_CU_CALL(c, err, "cuModuleLoadData", c->api->module_load(module, ptx));
  return true;
}

bool ts_rt_cuda_module_unload(ts_rt_cuda *c, ts_cu_handle module, ts_buf *err) {
  TS_CU_CALL(c, err, "cuModuleUnload", c->api->module_unload(module));
  return true;
}

bool ts_rt_cuda_function(ts_rt_cuda *c, ts_cu_handle module, const char *name, ts_cu_handle *fn, ts_buf *err) {
  ts_cu_result r = c->api->module_fn(fn, module, name);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "cuModuleGetFunction(%.60s)", name);
    return ts_cu_fail(c, err, what, r);
  }
  return true;
}

bool ts_rt_cuda_alloc(ts_rt_cuda *c, size_t bytes, ts_cu_deviceptr *p, ts_buf *err) {
  *p = 0;
  /* cuMemAlloc refuses 0 bytes; an empty tensor still needs an address */
  TS_CU_CALL(c, err, "cuMemAlloc", c->api->alloc(p, bytes ? bytes : 1));
  return true;
}

bool ts_rt_cuda_free(ts_rt_cuda *c, ts_cu_deviceptr p, ts_buf *err) {
  if (p)
    TS_CU_CALL(c, err, "cuMemFree", c->api->free(p));
  return true;
}

bool ts_rt_cuda_to_device(ts_rt_cuda *c, ts_cu_deviceptr dst, const void *src, size_t bytes, ts_buf *err) {
  if (bytes)
    TS_CU_CALL(c, err, "cuMemcpyHtoD", c->api->htod(dst, src, bytes));
  return true;
}

bool ts_rt_cuda_to_host(ts_rt_cuda *c, void *dst, ts_cu_deviceptr src, size_t bytes, ts_buf *err) {
  if (bytes)
    TS_CU_CALL(c, err, "cuMemcpyDtoH", c->api->dtoh(dst, src, bytes));
  return true;
}

bool ts_rt_cuda_copy(ts_rt_cuda *c, ts_cu_deviceptr dst, ts_cu_deviceptr src, size_t bytes, ts_buf *err) {
  if (bytes)
    TS_CU_CALL(c, err, "cuMemcpyDtoD", c->api->dtod(dst, src, bytes));
  return true;
}

bool ts_rt_cuda_launch(ts_rt_cuda *c, ts_cu_handle fn, const ts_rt_cuda_kernel *k, void **args, ts_buf *err) {
  if (!k->grid || !k->block || k->block > 1024) {
    ts_buf_printf(err, "cuLaunchKernel(%s): bad geometry %u x %u", k->name, k->grid, k->block);
    return false;
  }
  ts_cu_result r = c->api->launch(fn, k->grid, 1, 1, k->block, 1, 1, 0, c->stream, args, NULL);
  if (r != 0) {
    char what[96];
    snprintf(what, sizeof what, "cuLaunchKernel(%.60s)", k->name);
    return ts_cu_fail(c, err, what, r);
  }
  return true;
}

bool ts_rt_cuda_make_current(ts_rt_cuda *c, ts_buf *err) {
  TS_CU_CALL(c, err, "cuCtxSetCurrent", c->api->ctx_set(c->ctx));
  return true;
}

/* The stand-in driver's hook (tests/cuda/fake_libcuda.c); a real driver
 * has no such symbol and the wrapper is not used. */
typedef int (*ts_cu_bind_fn)(ts_cu_handle fn, void (*emu)(void **, const uint32_t *));

bool ts_rt_cuda_bind_emulation(ts_rt_cuda *c, ts_cu_handle fn, void (*emu)(void **, const uint32_t *), ts_buf *err) {
  if (!emu)
    return true;
  void *p = dlsym(c->lib, "tsaot_fake_cuda_bind");
  if (!p)
    return true;
  ts_cu_bind_fn bind;
  memcpy(&bind, &p, sizeof p);
  if (bind(fn, emu) != 0) {
    ts_buf_printf(err, "the stand-in CUDA driver refused an emulated kernel");
    return false;
  }
  return true;
}

bool ts_rt_cuda_sync(ts_rt_cuda *c, ts_buf *err) {
  TS_CU_CALL(c, err, "cuStreamSynchronize", c->api->stream_sync(c->stream));
  return true;
}

bool ts_rt_cuda_event_pair(ts_rt_cuda *c, ts_cu_handle *start, ts_cu_handle *end, ts_buf *err) {
  *start = *end = NULL;
  TS_CU_CALL(c, err, "cuEventCreate", c->api->event_create(start, 0));
  ts_cu_result r = c->api->event_create(end, 0);
  if (r != 0) {
    c->api->event_destroy(*start);
    *start = NULL;
    return ts_cu_fail(c, err, "cuEventCreate", r);
  }
  return true;
}

bool ts_rt_cuda_event_record(ts_rt_cuda *c, ts_cu_handle ev, ts_buf *err) {
  TS_CU_CALL(c, err, "cuEventRecord", c->api->event_record(ev, c->stream));
  return true;
}

bool ts_rt_cuda_event_record_legacy(ts_rt_cuda *c, ts_cu_handle ev, ts_buf *err) {
  TS_CU_CALL(c, err, "cuEventRecord", c->api->event_record(ev, NULL));
  return true;
}

bool ts_rt_cuda_event_ms(ts_rt_cuda *c, ts_cu_handle start, ts_cu_handle end, float *ms, ts_buf *err) {
  TS_CU_CALL(c, err, "cuEventSynchronize", c->api->event_sync(end));
  TS_CU_CALL(c, err, "cuEventElapsedTime", c->api->event_elapsed(ms, start, end));
  return true;
}

void ts_rt_cuda_event_free(ts_rt_cuda *c, ts_cu_handle ev) {
  if (ev && c->api)
    c->api->event_destroy(ev);
}

bool ts_rt_cuda_image_check(const ts_rt_cuda_image *im, ts_buf *err) {
  if (!im || im->version != TS_RT_CUDA_IMAGE_VERSION) {
    ts_buf_printf(err, "the library's CUDA image has version %u, this runtime reads %u", im ? im->version : 0,
                  TS_RT_CUDA_IMAGE_VERSION);
    return false;
  }
  if (!im->ptx || !im->arch || (im->nkernels && !im->kernels) || im->ptx_len > ((uint64_t)1 << 32) ||
      strnlen(im->ptx, (size_t)im->ptx_len + 1) != im->ptx_len) {
    ts_buf_printf(err, "the library's CUDA image is malformed (PTX text, architecture or kernel table)");
    return false;
  }
  for (uint32_t i = 0; i < im->nkernels; i++) {
    const ts_rt_cuda_kernel *k = &im->kernels[i];
    if (!k->name || (k->nparams && !k->param_kinds) || !k->grid || !k->block || k->block > 1024 || k->nelems < 0) {
      ts_buf_printf(err, "the library's CUDA kernel table is malformed (entry %u)", i);
      return false;
    }
    for (uint32_t p = 0; p < k->nparams; p++)
      if (k->param_kinds[p] > 4) {
        ts_buf_printf(err, "the library's CUDA kernel %s has a parameter of unknown kind %u", k->name,
                      k->param_kinds[p]);
        return false;
      }
  }
  return true;
}

bool ts_rt_cuda_open_library(ts_rt_cuda *c, void *lib, const char *name, uint32_t *nkernels, ts_buf *err) {
  *nkernels = 0;
  if (!ts_rt_cuda_open(c, 0, err))
    return false;
  char sym[160];
  snprintf(sym, sizeof sym, "%s_cuda", name);
  const ts_rt_cuda_image *im = dlsym(lib, sym);
  bool ok = false;
  if (!im)
    ts_buf_printf(err, "the library has no CUDA kernels (no %s): compile it with tsaot --device cuda", sym);
  else if (ts_rt_cuda_image_check(im, err) && ts_rt_cuda_module_load(c, im->ptx, &c->module, err)) {
    ok = true;
    for (uint32_t i = 0; ok && i < im->nkernels; i++) {
      ts_cu_handle fn;
      ok = ts_rt_cuda_function(c, c->module, im->kernels[i].name, &fn, err);
    }
    *nkernels = ok ? im->nkernels : 0;
  }
  if (!ok)
    ts_rt_cuda_close(c);
  return ok;
}
