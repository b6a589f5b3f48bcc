/* runtime/hosted/gpu.h: the GPU run path of a model compiled with --device cuda.
 *
 * NAME_set_device("cuda") opens the driver (runtime/hosted/cuda.h) and the
 * library's PTX; from then on a run keeps two copies of each storage it
 * touches, the host's and the device's, with a flag each saying which is
 * out of date (ts_rt_devbuf, hung on the storage):
 *
 *   - a fusion group with a kernel in the image launches it: its inputs
 *     are uploaded if the device copy is stale, its outputs exist only on
 *     the device (the host copy is stale);
 *   - a GEMM-shaped op (aten::linear, mm, addmm, matmul, bmm on float32)
 *     runs through cuBLAS (runtime/hosted/cublas.h) when it opened;
 *   - any other op runs its CPU kernel: stale host copies of its inputs are
 *     downloaded first (ops that only look at sizes and strides, the view
 *     ops, download nothing), and the device copies of the inputs it
 *     writes are marked stale after.
 *
 * So an activation crosses the bus only where a CPU op reads what a GPU op
 * made, or the reverse. Inputs given as host DLTensors are uploaded when a
 * GPU op first reads them; kDLCUDA inputs are used in place. Outputs come
 * back as host tensors, downloaded once at the end of the run.
 *
 * Device memory is cached by size (cuMemFree synchronises the device): a
 * storage's buffer goes back to the cache when the storage is freed. GPU
 * runs take turns on one stream (ts_rt_gpu_lock). Constants keep their
 * device copies between runs. */
#ifndef TS_RT_GPU_H
#define TS_RT_GPU_H

#include "cuda.h"
#include "runtime.h"
#include "tsaot.h"

#include <dlpack/dlpack.h>

typedef struct ts_rt_gpu ts_rt_gpu;

/* A storage's device copy (ts_rt_storage.dev). */
typedef struct ts_rt_devbuf {
  ts_cu_deviceptr ptr;
  size_t bytes;      /* the storage's nbytes */
  size_t cap;        /* the allocation (the cache's size class) */
  bool host_stale;   /* the device holds the newer bytes */
  bool dev_stale;    /* the host holds the newer bytes */
  bool owned;        /* false: a caller's kDLCUDA memory */
  ts_rt_gpu *g;
} ts_rt_devbuf;

/* A storage's device copy back to its model's cache (the storage's
 * dev_free). */
void ts_rt_devbuf_free(ts_rt_devbuf *b);

/* Opens device `ordinal`, loads the image and its kernels (binding the
 * emulated ones when the driver is a stand-in that takes them), and opens
 * cuBLAS if it can (without it, GEMMs run on the CPU). nodes[0, nnodes) are
 * the compiled graph's nodes by ts_rt_aot_number_nodes (kept; nnodes 0: the
 * graph runs in the interpreter, nothing on the GPU). NULL with the reason
 * in err. */
ts_rt_gpu *ts_rt_gpu_open(const ts_rt_cuda_image *im, int ordinal, ts_node *const *nodes, uint32_t nnodes,
                          ts_buf *err);
/* Frees the device memory cache, cuBLAS and the driver. Storages that
 * still hold device copies must have been detached (ts_rt_gpu_detach). */
void ts_rt_gpu_close(ts_rt_gpu *g);
/* A run's turn on the GPU, its context made current on this thread; false
 * (not locked) with the reason in err. */
bool ts_rt_gpu_lock(ts_rt_gpu *g, ts_buf *err);
void ts_rt_gpu_unlock(ts_rt_gpu *g);
/* What the GPU path did since it opened, with its device and description
 * (valid while g is open), into include/tsaot.h's struct. */
void ts_rt_gpu_get_stats(const ts_rt_gpu *g, tsaot_device_stats *out);

/* A tensor over a caller's kDLCUDA memory (used in place, not freed), with
 * a host copy allocated and stale. dl was checked as a CPU tensor would be
 * (aot.c: dtype dt, shape, extent); contiguous tensors only. */
ts_rt_tensor *ts_rt_gpu_tensor_from_dl(ts_rt_gpu *g, ts_rt_ctx *c, const DLTensor *dl, ts_dtype dt);

/* Makes the host copy of every tensor in v (lists, tuples, dicts, objects
 * entered) current. False with the error in c (a failed copy, a value
 * nested too deep to walk). */
bool ts_rt_gpu_iv_to_host(ts_rt_gpu *g, ts_rt_ctx *c, const ts_iv *v);
/* ts_rt_gpu_iv_to_host, then drops the device copies (the storages outlive
 * the run: results handed to the caller, constants at close). */
bool ts_rt_gpu_detach(ts_rt_gpu *g, ts_rt_ctx *c, const ts_iv *v);

/* Fusion group node k with the tensors made for its outputs (ops[nin,
 * nin+nout)): 1 its kernel was launched, 0 it has none or these operands do
 * not fit it (the caller runs the CPU kernel, after ts_rt_gpu_iv_to_host on
 * the inputs), -1 an error (in c). */
int ts_rt_gpu_fusion(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, ts_iv *const *ops, uint32_t nin, uint32_t nout);

/* Node k (n) about to run with inputs in[0, nin): 1 it ran on the GPU and
 * its outputs are in out[], 0 the caller runs its CPU kernel (stale host
 * copies of the inputs have been made current unless the op reads no
 * data), -1 an error. */
int ts_rt_gpu_node_begin(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, const ts_node *n, ts_iv *in, uint32_t nin,
                         ts_iv *out, uint32_t nout);
/* After node k's CPU kernel: the device copies of inputs it may have
 * written are stale. False (the error in c) only for a value nested too
 * deep to walk. */
bool ts_rt_gpu_node_end(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, ts_iv *in, uint32_t nin);

#endif
