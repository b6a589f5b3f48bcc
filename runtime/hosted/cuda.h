/* runtime/hosted/cuda.h: the CUDA driver API, opened at run time.
 *
 * Nothing here includes cuda.h or links libcuda: ts_rt_cuda_open dlopens
 * libcuda.so.1 on first use and resolves the few entry points it needs, so
 * a host without an NVIDIA driver loads every tool and library and gets a
 * clear error only when it asks for CUDA. The types below are the driver
 * API's (CUDA 12/13 cuda.h, API version 3020+ names: the _v2 entry points
 * of cuMemAlloc and cuMemcpy*) reduced to what is used: CUresult is an
 * int, CUdeviceptr an unsigned long long, handles are opaque pointers.
 *
 * Errors go to a ts_buf as text ("cuModuleLoadData: CUDA_ERROR_INVALID_PTX:
 * a PTX JIT compilation failed"); nothing aborts or prints. */
#ifndef TS_RT_CUDA_H
#define TS_RT_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* ------------------------------------------------- what codegen embeds
 * (codegen/nvptx.c writes these as the exported constant NAME_cuda of a
 * model compiled with --device cuda; the layout must stay as it is). */

#define TS_RT_CUDA_IMAGE_VERSION 2u

/* A kernel parameter's kind (param_kinds below). */
enum {
  TS_RT_CUDA_PARAM_TENSOR = 0, /* device pointer */
  TS_RT_CUDA_PARAM_I64 = 1,
  TS_RT_CUDA_PARAM_F64 = 2,
  TS_RT_CUDA_PARAM_BOOL = 3,   /* one byte */
  TS_RT_CUDA_PARAM_UNUSED = 4, /* an input the group does not read: a NULL pointer */
};

/* One fused kernel of the PTX. */
typedef struct ts_rt_cuda_kernel {
  const char *name;           /* its .entry */
  const uint8_t *param_kinds; /* nparams TS_RT_CUDA_PARAM_* */
  int64_t nelems;             /* output elements */
  uint32_t group;             /* the fusion group's node number (ts_rt_aot_number_nodes) */
  uint32_t block, grid;       /* launch geometry (a grid-stride loop covers nelems) */
  uint32_t index64;           /* 1: compiled with 64-bit element indices */
  uint32_t nparams;           /* the group's inputs, then its outputs */
  uint32_t reserved;
  /* tsaot --cuda-emulate only (else NULL): runs one GPU thread of the
   * kernel on the CPU, for a stand-in driver (codegen.h) */
  void (*emu)(void **args, const uint32_t *sreg);
} ts_rt_cuda_kernel;

typedef struct ts_rt_cuda_image {
  uint32_t version; /* TS_RT_CUDA_IMAGE_VERSION */
  uint32_t nkernels;
  const char *arch; /* "sm_80" */
  const char *ptx;  /* the PTX module, NUL-terminated */
  uint64_t ptx_len; /* without the NUL */
  const ts_rt_cuda_kernel *kernels;
} ts_rt_cuda_image;

/* ---------------------------------------------------------- the driver */

typedef int ts_cu_result;                    /* CUresult */
typedef unsigned long long ts_cu_deviceptr;  /* CUdeviceptr */
typedef struct ts_cu_opaque *ts_cu_handle;   /* CUcontext, CUmodule, CUfunction, CUstream, CUevent */

/* The opened driver and one device's primary context. */
typedef struct ts_rt_cuda {
  void *lib; /* dlopen handle */
  int device;
  ts_cu_handle ctx;
  ts_cu_handle stream;
  ts_cu_handle module; /* ts_rt_cuda_open_library's; unloaded by close */
  struct ts_rt_cuda_api *api;
} ts_rt_cuda;

/* Opens libcuda.so.1 (or $TSAOT_LIBCUDA, for tests), cuInit, device
 * `ordinal`, its primary context made current, one stream. false with the
 * reason in err ("CUDA driver libcuda.so.1 not found (dlopen: ...): this
 * host has no NVIDIA driver"). ts_rt_cuda_close releases what was made. */
bool ts_rt_cuda_open(ts_rt_cuda *c, int ordinal, ts_buf *err);
void ts_rt_cuda_close(ts_rt_cuda *c);

/* Loads a PTX module (JIT-compiled by the driver) and looks up kernels. */
bool ts_rt_cuda_module_load(ts_rt_cuda *c, const char *ptx, ts_cu_handle *module, ts_buf *err);
bool ts_rt_cuda_module_unload(ts_rt_cuda *c, ts_cu_handle module, ts_buf *err);
bool ts_rt_cuda_function(ts_rt_cuda *c, ts_cu_handle module, const char *name, ts_cu_handle *fn, ts_buf *err);

/* Device memory: cuMemAlloc, cuMemFree, copies host<->device and device to
 * device (synchronous with respect to the host). */
bool ts_rt_cuda_alloc(ts_rt_cuda *c, size_t bytes, ts_cu_deviceptr *p, ts_buf *err);
bool ts_rt_cuda_free(ts_rt_cuda *c, ts_cu_deviceptr p, ts_buf *err);
bool ts_rt_cuda_to_device(ts_rt_cuda *c, ts_cu_deviceptr dst, const void *src, size_t bytes, ts_buf *err);
bool ts_rt_cuda_to_host(ts_rt_cuda *c, void *dst, ts_cu_deviceptr src, size_t bytes, ts_buf *err);
bool ts_rt_cuda_copy(ts_rt_cuda *c, ts_cu_deviceptr dst, ts_cu_deviceptr src, size_t bytes, ts_buf *err);

/* Launches a fused kernel on the stream: args[k] points at parameter k's
 * value (a ts_cu_deviceptr for a tensor, an int64_t, a double, a uint8_t
 * bool) as the kernel table's param_kinds say; its grid and block. */
bool ts_rt_cuda_launch(ts_rt_cuda *c, ts_cu_handle fn, const ts_rt_cuda_kernel *k, void **args, ts_buf *err);
bool ts_rt_cuda_sync(ts_rt_cuda *c, ts_buf *err);
/* Makes c's context current on the calling thread (runs may come from any
 * thread; the context is per thread). */
bool ts_rt_cuda_make_current(ts_rt_cuda *c, ts_buf *err);
/* tsaot --cuda-emulate: hands kernel fn's CPU form to a stand-in driver
 * that exports tsaot_fake_cuda_bind; nothing with a real driver or a NULL
 * emu. */
bool ts_rt_cuda_bind_emulation(ts_rt_cuda *c, ts_cu_handle fn, void (*emu)(void **, const uint32_t *), ts_buf *err);

/* Event timing on the stream: record a start, later the milliseconds since
 * (synchronising on the end event). */
bool ts_rt_cuda_event_pair(ts_rt_cuda *c, ts_cu_handle *start, ts_cu_handle *end, ts_buf *err);
bool ts_rt_cuda_event_record(ts_rt_cuda *c, ts_cu_handle ev, ts_buf *err);
/* On the legacy default stream (0), which waits for the work of every
 * blocking stream of the context before it and holds back what follows:
 * brackets a model's runs from another ts_rt_cuda of the same device. */
bool ts_rt_cuda_event_record_legacy(ts_rt_cuda *c, ts_cu_handle ev, ts_buf *err);
bool ts_rt_cuda_event_ms(ts_rt_cuda *c, ts_cu_handle start, ts_cu_handle end, float *ms, ts_buf *err);
void ts_rt_cuda_event_free(ts_rt_cuda *c, ts_cu_handle ev); /* NULL: nothing */

/* Checks an embedded image against the header's layout and bounds (a
 * hostile library is possible): version, counts, NUL-terminated PTX. */
bool ts_rt_cuda_image_check(const ts_rt_cuda_image *im, ts_buf *err);

/* What tsaot-run and tsaot-bench do for --device cuda: opens device 0 and
 * loads the image `NAME_cuda` of the dlopen'ed model library `lib` (its PTX
 * JIT-compiled by the driver, every kernel looked up); *nkernels says how
 * many. The errors: no driver, no device, a library compiled without
 * --device cuda, a malformed image, the driver refusing the PTX. */
bool ts_rt_cuda_open_library(ts_rt_cuda *c, void *lib, const char *name, uint32_t *nkernels, ts_buf *err);

#endif
