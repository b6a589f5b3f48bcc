/* runtime/hosted/gpu.c: the GPU run path (hosted/gpu.h). */
#include "gpu.h"

#include "cublas.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One cached device allocation. */
typedef struct ts_gpu_block {
  ts_cu_deviceptr ptr;
  size_t cap;
} ts_gpu_block;

/* What a node needs from the GPU path, decided once at open. */
enum {
  TS_GPU_NODE_DATA = 0,  /* its CPU kernel reads its inputs' bytes */
  TS_GPU_NODE_VIEW = 1,  /* a view of its first input: reads only that one's sizes and strides */
  TS_GPU_NODE_SHAPE = 2, /* reads no bytes at all */
  TS_GPU_NODE_GEMM = 3,  /* aten::linear, mm, addmm, matmul, bmm: cuBLAS when it fits */
};

struct ts_rt_gpu {
  ts_rt_cuda cu;
  const ts_rt_cuda_image *im;
  ts_cu_handle *fns;       /* by kernel */
  int32_t *kernel_of;      /* by node number: kernel index or -1 */
  uint8_t *how;            /* by node number: TS_GPU_NODE_* */
  uint8_t *writes;         /* by node number: its schema writes an input */
  ts_node *const *nodes;
  uint32_t nnodes;
  int ordinal;
  ts_rt_cublas blas;
  bool have_blas;
  char blas_why[200];
  ts_cu_deviceptr ones;    /* float32 ones for the bias GEMM */
  size_t nones;
  pthread_mutex_t run_mu;  /* GPU runs take turns on the stream */
  pthread_mutex_t cache_mu;
  ts_gpu_block *cache;
  uint32_t ncache, cap_cache;
  size_t cached_bytes;
  tsaot_device_stats stats; /* the counters; the rest filled when read */
  char desc[320];
};

/* Device memory the cache keeps at most; more is freed. */
#define TS_GPU_CACHE_MAX ((size_t)4 << 30)

/* ---------------------------------------------------------------- memory */

static size_t ts_gpu_class(size_t n) {
  size_t c = 512;
  while (c < n && c < ((size_t)1 << 20))
    c <<= 1;
  return c >= n ? c : (n + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
}

static bool ts_gpu_alloc(ts_rt_gpu *g, ts_rt_ctx *c, size_t bytes, ts_cu_deviceptr *p, size_t *cap) {
  size_t want = ts_gpu_class(bytes ? bytes : 1);
  pthread_mutex_lock(&g->cache_mu);
  for (uint32_t i = 0; i < g->ncache; i++)
    if (g->cache[i].cap == want) {
      *p = g->cache[i].ptr;
      *cap = want;
      g->cached_bytes -= want;
      g->cache[i] = g->cache[--g->ncache];
      pthread_mutex_unlock(&g->cache_mu);
      return true;
    }
  pthread_mutex_unlock(&g->cache_mu);
  ts_buf err = {0};
  bool ok = ts_rt_cuda_alloc(&g->cu, want, p, &err);
  if (!ok) {
    /* the cache may hold what the device lacks */
    pthread_mutex_lock(&g->cache_mu);
    for (uint32_t i = 0; i < g->ncache; i++)
      ts_rt_cuda_free(&g->cu, g->cache[i].ptr, NULL);
    g->ncache = 0;
    g->cached_bytes = 0;
    pthread_mutex_unlock(&g->cache_mu);
    err.len = 0;
    ok = ts_rt_cuda_alloc(&g->cu, want, p, &err);
  }
  if (!ok)
    ts_rt_fail(c, "CUDA out of memory: %zu bytes: %s", want, err.data ? err.data : "cuMemAlloc failed");
  ts_buf_free(&err);
  *cap = want;
  return ok;
}

static void ts_gpu_give(ts_rt_gpu *g, ts_cu_deviceptr p, size_t cap) {
  pthread_mutex_lock(&g->cache_mu);
  if (g->cached_bytes + cap <= TS_GPU_CACHE_MAX) {
    if (g->ncache == g->cap_cache) {
      uint32_t n = g->cap_cache ? g->cap_cache * 2 : 64;
      ts_gpu_block *b = realloc(g->cache, n * sizeof *b);
      if (b) {
        g->cache = b;
        g->cap_cache = n;
      }
    }
    if (g->ncache < g->cap_cache) {
      g->cache[g->ncache++] = (ts_gpu_block){p, cap};
      g->cached_bytes += cap;
      pthread_mutex_unlock(&g->cache_mu);
      return;
    }
  }
  pthread_mutex_unlock(&g->cache_mu);
  ts_rt_cuda_free(&g->cu, p, NULL);
}

void ts_rt_devbuf_free(ts_rt_devbuf *b) {
  if (!b)
    return;
  if (b->owned && b->g)
    ts_gpu_give(b->g, b->ptr, b->cap);
  free(b);
}

/* Copies s's bytes to its device copy (up) or back, counted. */
static bool ts_gpu_move(ts_rt_gpu *g, ts_rt_ctx *c, ts_rt_storage *s, bool up) {
  ts_rt_devbuf *b = s->dev;
  if (!b->bytes)
    return true;
  ts_buf err = {0};
  bool ok = up ? ts_rt_cuda_to_device(&g->cu, b->ptr, s->data, b->bytes, &err)
               : ts_rt_cuda_to_host(&g->cu, s->data, b->ptr, b->bytes, &err);
  if (!ok)
    ts_rt_fail(c, "copying %zu bytes %s the GPU: %s", b->bytes, up ? "to" : "from", err.data ? err.data : "failed");
  ts_buf_free(&err);
  if (ok)
    *(up ? &g->stats.bytes_to_device : &g->stats.bytes_to_host) += b->bytes;
  return ok;
}

/* s's device copy, made if missing (stale: the host's bytes are the ones
 * to keep); uploaded when stale unless `overwrite` (the caller writes all
 * of it). */
static ts_rt_devbuf *ts_gpu_dev(ts_rt_gpu *g, ts_rt_ctx *c, ts_rt_storage *s, bool overwrite) {
  ts_rt_devbuf *b = s->dev;
  if (!b) {
    if (!(b = calloc(1, sizeof *b))) {
      ts_rt_oom(c);
      return NULL;
    }
    if (!ts_gpu_alloc(g, c, s->nbytes, &b->ptr, &b->cap)) {
      free(b);
      return NULL;
    }
    b->bytes = s->nbytes;
    b->owned = true;
    b->g = g;
    b->dev_stale = true;
    s->dev = b;
    s->dev_free = ts_rt_devbuf_free;
  }
  if (b->dev_stale && !overwrite && !ts_gpu_move(g, c, s, true))
    return NULL;
  b->dev_stale = false;
  return b;
}

static bool ts_gpu_host(ts_rt_gpu *g, ts_rt_ctx *c, ts_rt_storage *s) {
  ts_rt_devbuf *b = s->dev;
  if (!b || !b->host_stale)
    return true;
  if (!ts_gpu_move(g, c, s, false))
    return false;
  b->host_stale = false;
  return true;
}

typedef struct ts_gpu_walker {
  ts_rt_gpu *g;
  ts_rt_ctx *c;
} ts_gpu_walker;

/* The deepest container nesting a walk enters (the C stack bounds it); a
 * deeper value is an error, never a tensor left behind. */
#define TS_GPU_WALK_DEPTH 64

/* Calls fn on every tensor storage in v: containers' elements, dicts' keys
 * and values, objects' attributes. */
static bool ts_gpu_walk(ts_gpu_walker *w, const ts_iv *v, bool (*fn)(ts_gpu_walker *, ts_rt_storage *), int depth) {
  if (depth > TS_GPU_WALK_DEPTH && (v->tag == TS_IV_TENSOR || ts_iv_is_ref(*v)))
    return ts_rt_fail(w->c, "a value nested over %d containers deep cannot move between the GPU and the host",
                      TS_GPU_WALK_DEPTH);
  switch (v->tag) {
  case TS_IV_TENSOR: return fn(w, v->u.t->storage);
  case TS_IV_LIST:
    for (uint32_t i = 0; i < v->u.l->n; i++)
      if (!ts_gpu_walk(w, &v->u.l->items[i], fn, depth + 1))
        return false;
    return true;
  case TS_IV_TUPLE:
    for (uint32_t i = 0; i < v->u.tup->n; i++)
      if (!ts_gpu_walk(w, &v->u.tup->items[i], fn, depth + 1))
        return false;
    return true;
  case TS_IV_DICT:
    for (uint32_t i = 0; i < v->u.dict->n; i++)
      if (!ts_gpu_walk(w, &v->u.dict->keys[i], fn, depth + 1) || !ts_gpu_walk(w, &v->u.dict->values[i], fn, depth + 1))
        return false;
    return true;
  case TS_IV_OBJECT:
    for (uint32_t i = 0; i < v->u.obj->n; i++)
      if (!ts_gpu_walk(w, &v->u.obj->attrs[i], fn, depth + 1))
        return false;
    return true;
  default: return true;
  }
}

static bool ts_gpu_host_fn(ts_gpu_walker *w, ts_rt_storage *s) { return ts_gpu_host(w->g, w->c, s); }

static bool ts_gpu_detach_fn(ts_gpu_walker *w, ts_rt_storage *s) {
  if (!ts_gpu_host(w->g, w->c, s))
    return false;
  ts_rt_devbuf *b = s->dev;
  s->dev = NULL;
  ts_rt_devbuf_free(b);
  return true;
}

static bool ts_gpu_wrote_fn(ts_gpu_walker *w, ts_rt_storage *s) {
  (void)w;
  if (s->dev)
    s->dev->dev_stale = true;
  return true;
}

bool ts_rt_gpu_iv_to_host(ts_rt_gpu *g, ts_rt_ctx *c, const ts_iv *v) {
  ts_gpu_walker w = {g, c};
  return ts_gpu_walk(&w, v, ts_gpu_host_fn, 0);
}

bool ts_rt_gpu_detach(ts_rt_gpu *g, ts_rt_ctx *c, const ts_iv *v) {
  ts_gpu_walker w = {g, c};
  return ts_gpu_walk(&w, v, ts_gpu_detach_fn, 0);
}

/* A tensor's address on the device (its device copy current). */
static bool ts_gpu_tensor_dev(ts_rt_gpu *g, ts_rt_ctx *c, const ts_rt_tensor *t, bool overwrite, ts_cu_deviceptr *p) {
  ts_rt_devbuf *b = ts_gpu_dev(g, c, t->storage, overwrite);
  if (!b)
    return false;
  *p = b->ptr + (ts_cu_deviceptr)t->offset * ts_dtype_size((ts_dtype)t->dtype);
  return true;
}

/* After a GPU op wrote t: the host copy is stale. */
static void ts_gpu_wrote_dev(ts_rt_tensor *t) {
  if (t->storage->dev)
    t->storage->dev->host_stale = true;
}

ts_rt_tensor *ts_rt_gpu_tensor_from_dl(ts_rt_gpu *g, ts_rt_ctx *c, const DLTensor *dl, ts_dtype dt) {
  if (dl->device.device_id != g->ordinal) {
    ts_rt_fail(c, "a tensor on cuda:%d, the model runs on cuda:%d", (int)dl->device.device_id, g->ordinal);
    return NULL;
  }
  if (dl->strides) {
    int64_t want = 1;
    for (int32_t d = dl->ndim - 1; d >= 0; d--) {
      if (dl->shape[d] != 1 && dl->strides[d] != want) {
        ts_rt_fail(c, "a CUDA tensor that is not contiguous: copy it with .contiguous() first");
        return NULL;
      }
      want *= dl->shape[d];
    }
  }
  ts_rt_tensor *t = ts_rt_tensor_new(c, dt, dl->ndim, dl->shape, false);
  if (!t)
    return NULL;
  ts_rt_devbuf *b = calloc(1, sizeof *b);
  if (!b) {
    ts_rt_tensor_release(t);
    ts_rt_oom(c);
    return NULL;
  }
  b->ptr = (ts_cu_deviceptr)(uintptr_t)dl->data + dl->byte_offset;
  b->bytes = t->storage->nbytes;
  b->owned = false;
  b->g = g;
  b->host_stale = true;
  t->storage->dev = b;
  t->storage->dev_free = ts_rt_devbuf_free;
  return t;
}

/* ------------------------------------------------------------ open, close */

/* Whether schema s writes an argument (`!`). */
static bool ts_gpu_schema_writes(const ts_schema *s) {
  for (uint32_t i = 0; s && i < s->nargs; i++) {
    const ts_alias *a = s->args[i].alias;
    if (a && (a->is_write || (a->contained && a->contained->is_write)))
      return true;
  }
  return false;
}

static uint8_t ts_gpu_node_how(const ts_node *n, uint8_t *writes) {
  static const ts_kind shape_only[] = {
      TS_K_aten_size, TS_K_aten_dim, TS_K_aten_numel, TS_K_aten_len, TS_K_prim_ListConstruct,
      TS_K_prim_ListUnpack, TS_K_prim_TupleConstruct, TS_K_prim_TupleUnpack, TS_K_prim_TupleIndex,
      TS_K_prim_dtype, TS_K_prim_device, TS_K_aten___getitem__,
  };
  static const ts_kind gemm[] = {TS_K_aten_linear, TS_K_aten_mm, TS_K_aten_addmm, TS_K_aten_matmul, TS_K_aten_bmm};
  const ts_schema *s = ts_node_schema(n);
  *writes = ts_gpu_schema_writes(s);
  for (size_t i = 0; i < sizeof shape_only / sizeof shape_only[0]; i++)
    if (ts_node_is(n, shape_only[i]))
      return TS_GPU_NODE_SHAPE;
  /* views of self (ts_op_is_view: a Tensor(a) return, and not an op that
   * may copy, as reshape, flatten, contiguous and to do) */
  if (!*writes && ts_op_is_view(s) && s->nargs > 0 && s->args[0].alias)
    return TS_GPU_NODE_VIEW;
  for (size_t i = 0; i < sizeof gemm / sizeof gemm[0]; i++)
    if (ts_node_is(n, gemm[i]))
      return TS_GPU_NODE_GEMM;
  return TS_GPU_NODE_DATA;
}

ts_rt_gpu *ts_rt_gpu_open(const ts_rt_cuda_image *im, int ordinal, ts_node *const *nodes, uint32_t nnodes,
                          ts_buf *err) {
  if (!ts_rt_cuda_image_check(im, err))
    return NULL;
  ts_rt_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    ts_buf_printf(err, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&g->run_mu, NULL);
  pthread_mutex_init(&g->cache_mu, NULL);
  g->im = im;
  g->nodes = nodes;
  g->nnodes = nnodes;
  g->ordinal = ordinal;
  if (!ts_rt_cuda_open(&g->cu, ordinal, err))
    goto fail;
  if (!ts_rt_cuda_module_load(&g->cu, im->ptx, &g->cu.module, err))
    goto fail;
  g->fns = calloc(im->nkernels + 1u, sizeof *g->fns);
  g->kernel_of = malloc((nnodes + 1u) * sizeof *g->kernel_of);
  g->how = calloc(nnodes + 1u, 1);
  g->writes = calloc(nnodes + 1u, 1);
  if (!g->fns || !g->kernel_of || !g->how || !g->writes) {
    ts_buf_printf(err, "out of memory");
    goto fail;
  }
  for (uint32_t k = 0; k < nnodes; k++) {
    g->kernel_of[k] = -1;
    g->how[k] = ts_gpu_node_how(nodes[k], &g->writes[k]);
  }
  /* nnodes 0: the graph runs in the embedded interpreter, on the CPU */
  for (uint32_t i = 0; i < im->nkernels && nnodes; i++) {
    const ts_rt_cuda_kernel *kk = &im->kernels[i];
    if (!ts_rt_cuda_function(&g->cu, g->cu.module, kk->name, &g->fns[i], err) ||
        !ts_rt_cuda_bind_emulation(&g->cu, g->fns[i], kk->emu, err))
      goto fail;
    if (kk->group >= nnodes || !ts_node_is(nodes[kk->group], TS_K_prim_FusionGroup) ||
        kk->nparams != nodes[kk->group]->ninputs + nodes[kk->group]->noutputs) {
      ts_buf_printf(err, "the library's CUDA kernel %s does not match node %u of its graph", kk->name,
                    (unsigned)kk->group);
      goto fail;
    }
    g->kernel_of[kk->group] = (int32_t)i;
  }
  ts_buf why = {0};
  g->have_blas = ts_rt_cublas_open(&g->blas, g->cu.stream, &why);
  snprintf(g->blas_why, sizeof g->blas_why, "%s", g->have_blas ? "" : why.data ? why.data : "not found");
  ts_buf_free(&why);
  snprintf(g->desc, sizeof g->desc, "cuda:%d, %u kernels (%s), cuBLAS: %s%s%s", ordinal, im->nkernels, im->arch,
           g->have_blas ? "yes" : "no: ", g->blas_why,
           nnodes ? "" : "; the graph runs in the embedded interpreter, on the CPU");
  return g;
fail:
  ts_rt_gpu_close(g);
  return NULL;
}

void ts_rt_gpu_close(ts_rt_gpu *g) {
  if (!g)
    return;
  if (g->have_blas)
    ts_rt_cublas_close(&g->blas);
  if (g->ones)
    ts_rt_cuda_free(&g->cu, g->ones, NULL);
  for (uint32_t i = 0; i < g->ncache; i++)
    ts_rt_cuda_free(&g->cu, g->cache[i].ptr, NULL);
  free(g->cache);
  ts_rt_cuda_close(&g->cu); /* unloads the module */
  free(g->fns);
  free(g->kernel_of);
  free(g->how);
  free(g->writes);
  pthread_mutex_destroy(&g->run_mu);
  pthread_mutex_destroy(&g->cache_mu);
  free(g);
}

bool ts_rt_gpu_lock(ts_rt_gpu *g, ts_buf *err) {
  pthread_mutex_lock(&g->run_mu);
  if (ts_rt_cuda_make_current(&g->cu, err))
    return true;
  pthread_mutex_unlock(&g->run_mu);
  return false;
}
void ts_rt_gpu_unlock(ts_rt_gpu *g) { pthread_mutex_unlock(&g->run_mu); }
void ts_rt_gpu_get_stats(const ts_rt_gpu *g, tsaot_device_stats *out) {
  *out = g->stats;
  out->device_type = kDLCUDA;
  out->device_id = g->ordinal;
  out->description = g->desc;
}

/* ------------------------------------------------------------- fusion */

/* Whether t has the complete contiguous type ty's sizes and dtype. */
static bool ts_gpu_fits(const ts_rt_tensor *t, const ts_type *ty) {
  if (!ty || ty->kind != TS_TY_TENSOR || !ty->tensor || ty->tensor->rank != t->ndim ||
      (t->ndim && !ty->tensor->sizes) || ty->tensor->dtype != t->dtype || !ts_rt_tensor_is_contiguous(t))
    return false;
  for (int32_t d = 0; d < t->ndim; d++)
    if (ty->tensor->sizes[d] != t->sizes[d])
      return false;
  return true;
}

int ts_rt_gpu_fusion(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, ts_iv *const *ops, uint32_t nin, uint32_t nout) {
  if (k >= g->nnodes || g->kernel_of[k] < 0)
    return 0;
  const ts_rt_cuda_kernel *kk = &g->im->kernels[g->kernel_of[k]];
  const ts_node *n = g->nodes[k];
  if (kk->nparams != nin + nout || n->ninputs != nin || n->noutputs != nout)
    return 0;
  enum { MAXP = 64 };
  if (kk->nparams > MAXP)
    return 0;
  /* the kernel bakes in its operands' sizes: every tensor must have them */
  for (uint32_t i = 0; i < nin + nout; i++) {
    uint8_t kind = kk->param_kinds[i];
    const ts_iv *v = ops[i];
    const ts_type *ty = i < nin ? n->inputs[i]->type : n->outputs[i - nin]->type;
    if (kind == TS_RT_CUDA_PARAM_TENSOR && (v->tag != TS_IV_TENSOR || !ts_gpu_fits(v->u.t, ty)))
      return 0;
    if ((kind == TS_RT_CUDA_PARAM_I64 && v->tag != TS_IV_INT && v->tag != TS_IV_BOOL) ||
        (kind == TS_RT_CUDA_PARAM_F64 && v->tag != TS_IV_DOUBLE && v->tag != TS_IV_INT) ||
        (kind == TS_RT_CUDA_PARAM_BOOL && v->tag != TS_IV_BOOL))
      return 0;
  }
  if (nout && (ops[nin]->tag != TS_IV_TENSOR || ts_rt_tensor_numel(ops[nin]->u.t) != kk->nelems))
    return 0;
  ts_cu_deviceptr ptrs[MAXP];
  int64_t ints[MAXP];
  double dbls[MAXP];
  uint8_t bools[MAXP];
  void *args[MAXP];
  for (uint32_t i = 0; i < nin + nout; i++) {
    const ts_iv *v = ops[i];
    switch (kk->param_kinds[i]) {
    case TS_RT_CUDA_PARAM_TENSOR:
      if (!ts_gpu_tensor_dev(g, c, v->u.t, i >= nin, &ptrs[i]))
        return -1;
      args[i] = &ptrs[i];
      break;
    case TS_RT_CUDA_PARAM_I64:
      ints[i] = v->tag == TS_IV_BOOL ? v->u.b : v->u.i;
      args[i] = &ints[i];
      break;
    case TS_RT_CUDA_PARAM_F64:
      dbls[i] = v->tag == TS_IV_INT ? (double)v->u.i : v->u.d;
      args[i] = &dbls[i];
      break;
    case TS_RT_CUDA_PARAM_BOOL:
      bools[i] = v->u.b;
      args[i] = &bools[i];
      break;
    default: /* an input the kernel does not read */
      ptrs[i] = 0;
      args[i] = &ptrs[i];
      break;
    }
  }
  ts_buf err = {0};
  bool ok = ts_rt_cuda_launch(&g->cu, g->fns[g->kernel_of[k]], kk, args, &err);
  if (!ok)
    ts_rt_fail(c, "launching %s: %s", kk->name, err.data ? err.data : "failed");
  ts_buf_free(&err);
  if (!ok)
    return -1;
  for (uint32_t j = 0; j < nout; j++)
    ts_gpu_wrote_dev(ops[nin + j]->u.t);
  g->stats.kernel_launches++;
  return 1;
}

/* --------------------------------------------------------------- GEMMs */

/* A float32 tensor, contiguous. */
static bool ts_gpu_f32c(const ts_iv *v) {
  return v->tag == TS_IV_TENSOR && v->u.t->dtype == TS_DT_FLOAT32 && ts_rt_tensor_is_contiguous(v->u.t);
}

/* g->ones with at least n floats. */
static bool ts_gpu_ones(ts_rt_gpu *g, ts_rt_ctx *c, int64_t n) {
  if ((size_t)n <= g->nones)
    return true;
  size_t want = (size_t)n < 1024 ? 1024 : (size_t)n;
  float *h = malloc(want * sizeof *h);
  if (!h)
    return ts_rt_oom(c);
  for (size_t i = 0; i < want; i++)
    h[i] = 1.0f;
  ts_buf err = {0};
  ts_cu_deviceptr p = 0;
  bool ok = ts_rt_cuda_alloc(&g->cu, want * sizeof *h, &p, &err) &&
            ts_rt_cuda_to_device(&g->cu, p, h, want * sizeof *h, &err);
  free(h);
  if (!ok) {
    if (p)
      ts_rt_cuda_free(&g->cu, p, NULL);
    ts_rt_fail(c, "CUDA: %s", err.data ? err.data : "a buffer of ones");
    ts_buf_free(&err);
    return false;
  }
  ts_buf_free(&err);
  if (g->ones)
    ts_rt_cuda_free(&g->cu, g->ones, NULL);
  g->ones = p;
  g->nones = want;
  return true;
}

static bool ts_gpu_gemm(ts_rt_gpu *g, ts_rt_ctx *c, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
                        ts_cu_deviceptr A, int64_t lda, int64_t sa, ts_cu_deviceptr B, int64_t ldb, int64_t sb,
                        float beta, ts_cu_deviceptr C, int64_t ldc, int64_t sc, int64_t batch) {
  ts_buf err = {0};
  bool ok = ts_rt_cublas_gemm(&g->blas, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch, &err);
  if (!ok)
    ts_rt_fail(c, "%s", err.data ? err.data : "cuBLAS failed");
  ts_buf_free(&err);
  g->stats.gemms += ok;
  return ok;
}

/* A float32 matrix whose rows or columns are contiguous: *colmajor says
 * which (a transposed view of a contiguous matrix), *ld the distance
 * between them. */
static bool ts_gpu_mat(const ts_iv *v, bool *colmajor, int64_t *ld) {
  if (v->tag != TS_IV_TENSOR || v->u.t->dtype != TS_DT_FLOAT32 || v->u.t->ndim != 2)
    return false;
  const ts_rt_tensor *t = v->u.t;
  int64_t r = t->sizes[0], cn = t->sizes[1];
  if ((t->strides[1] == 1 || cn == 1) && (t->strides[0] == cn || r == 1)) {
    *colmajor = false;
    *ld = cn > 1 ? cn : 1;
    return true;
  }
  if ((t->strides[0] == 1 || r == 1) && (t->strides[1] == r || cn == 1)) {
    *colmajor = true;
    *ld = r > 1 ? r : 1;
    return true;
  }
  return false;
}

/* out = x @ op(w) (+ bias), x [.., K] (rows M) contiguous; op(w) [K, N]
 * is w^T when `wt` is false (linear's [N, K] weight), else w itself; w may
 * be stored either way round (ts_gpu_mat: mm(x, w.t()) of a contiguous w
 * is a plain GEMM on w's bytes). bias [N] or NULL; `bias_scale`/`alpha` as
 * addmm's beta and alpha. */
static int ts_gpu_linear(ts_rt_gpu *g, ts_rt_ctx *c, const ts_rt_tensor *x, const ts_iv *wv, bool wt,
                         const ts_rt_tensor *bias, double bias_scale, double alpha, ts_iv *out) {
  bool colmajor;
  int64_t ldw;
  if (x->ndim < 1 || !ts_gpu_mat(wv, &colmajor, &ldw))
    return 0;
  const ts_rt_tensor *w = wv->u.t;
  int64_t K = x->sizes[x->ndim - 1], N = wt ? w->sizes[1] : w->sizes[0];
  if ((wt ? w->sizes[0] : w->sizes[1]) != K)
    return 0;
  /* op(w) read as stored: transposed for cuBLAS unless w holds [K, N] row by row */
  bool tb = wt == colmajor;
  if (bias && !((bias->ndim == 1 && bias->sizes[0] == N) || (bias->ndim == 2 && bias->sizes[0] == 1 &&
                                                              bias->sizes[1] == N)))
    return 0;
  int64_t M = x->ndim ? ts_rt_tensor_numel(x) / (K ? K : 1) : 1;
  if (!K)
    return 0;
  int64_t sizes[TS_RT_MAX_DIMS];
  memcpy(sizes, x->sizes, (size_t)x->ndim * sizeof *sizes);
  sizes[x->ndim - 1] = N;
  ts_rt_tensor *o = ts_rt_tensor_new(c, TS_DT_FLOAT32, x->ndim, sizes, false);
  if (!o)
    return -1;
  ts_cu_deviceptr px, pw, po, pb = 0;
  bool ok = ts_gpu_tensor_dev(g, c, x, false, &px) && ts_gpu_tensor_dev(g, c, w, false, &pw) &&
            ts_gpu_tensor_dev(g, c, o, true, &po) && (!bias || ts_gpu_tensor_dev(g, c, bias, false, &pb));
  float beta = 0.0f;
  if (bias_scale == 0.0) /* addmm's beta 0: the bias is not read (NaN in it included) */
    bias = NULL;
  if (ok && bias && M && N) {
    /* out = ones[M,1] x bias[1,N], then the product adds onto it */
    ok = ts_gpu_ones(g, c, M) &&
         ts_gpu_gemm(g, c, false, false, M, N, 1, (float)bias_scale, g->ones, 1, 0, pb, N, 0, 0.0f, po, N, 0, 1);
    beta = 1.0f;
  }
  if (ok && M && N)
    ok = ts_gpu_gemm(g, c, false, tb, M, N, K, (float)alpha, px, K, 0, pw, ldw, 0, beta, po, N, 0, 1);
  if (!ok) {
    ts_rt_tensor_release(o);
    return -1;
  }
  ts_gpu_wrote_dev(o);
  *out = ts_iv_tensor(o);
  return 1;
}

/* bmm: a [B, M, K] @ b [B, K, N]. */
static int ts_gpu_bmm(ts_rt_gpu *g, ts_rt_ctx *c, const ts_rt_tensor *a, const ts_rt_tensor *b, ts_iv *out) {
  if (a->ndim != 3 || b->ndim != 3 || a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1] || !a->sizes[2])
    return 0;
  int64_t B = a->sizes[0], M = a->sizes[1], K = a->sizes[2], N = b->sizes[2];
  int64_t sizes[3] = {B, M, N};
  ts_rt_tensor *o = ts_rt_tensor_new(c, TS_DT_FLOAT32, 3, sizes, false);
  if (!o)
    return -1;
  ts_cu_deviceptr pa, pb, po;
  bool ok = ts_gpu_tensor_dev(g, c, a, false, &pa) && ts_gpu_tensor_dev(g, c, b, false, &pb) &&
            ts_gpu_tensor_dev(g, c, o, true, &po) &&
            (!B || !M || !N || ts_gpu_gemm(g, c, false, false, M, N, K, 1.0f, pa, K, M * K, pb, N, K * N, 0.0f, po, N,
                                            M * N, B));
  if (!ok) {
    ts_rt_tensor_release(o);
    return -1;
  }
  ts_gpu_wrote_dev(o);
  *out = ts_iv_tensor(o);
  return 1;
}

static double ts_gpu_num(const ts_iv *v, bool *ok) {
  if (v->tag == TS_IV_INT)
    return (double)v->u.i;
  if (v->tag == TS_IV_DOUBLE)
    return v->u.d;
  *ok = false;
  return 0;
}

/* aten::linear(x, w, b?), mm(a, b), addmm(bias, a, b, beta, alpha),
 * matmul(a [.., K], b [K, N]) and bmm on contiguous float32 tensors; 0 for
 * anything else (the CPU kernel runs it). */
static int ts_gpu_gemm_node(ts_rt_gpu *g, ts_rt_ctx *c, const ts_node *n, ts_iv *in, uint32_t nin, ts_iv *out,
                            uint32_t nout) {
  if (!g->have_blas || nout != 1)
    return 0;
  if (ts_node_is(n, TS_K_aten_linear) && (nin == 2 || nin == 3) && ts_gpu_f32c(&in[0]) &&
      (nin == 2 || in[2].tag == TS_IV_NONE || ts_gpu_f32c(&in[2])))
    return ts_gpu_linear(g, c, in[0].u.t, &in[1], false, nin == 3 && in[2].tag == TS_IV_TENSOR ? in[2].u.t : NULL,
                         1.0, 1.0, out);
  if ((ts_node_is(n, TS_K_aten_mm) || ts_node_is(n, TS_K_aten_matmul)) && nin == 2 && ts_gpu_f32c(&in[0]) &&
      in[1].tag == TS_IV_TENSOR) {
    const ts_rt_tensor *a = in[0].u.t, *b = in[1].u.t;
    if (b->ndim == 2 && (a->ndim == 2 || (ts_node_is(n, TS_K_aten_matmul) && a->ndim > 2)))
      return ts_gpu_linear(g, c, a, &in[1], true, NULL, 1.0, 1.0, out);
    if (ts_node_is(n, TS_K_aten_matmul) && a->ndim == 3 && b->ndim == 3 && ts_gpu_f32c(&in[1]))
      return ts_gpu_bmm(g, c, a, b, out);
    return 0;
  }
  if (ts_node_is(n, TS_K_aten_addmm) && nin == 5 && ts_gpu_f32c(&in[0]) && ts_gpu_f32c(&in[1]) &&
      in[1].u.t->ndim == 2) {
    bool ok = true;
    double beta = ts_gpu_num(&in[3], &ok), alpha = ts_gpu_num(&in[4], &ok);
    if (!ok)
      return 0;
    return ts_gpu_linear(g, c, in[1].u.t, &in[2], true, in[0].u.t, beta, alpha, out);
  }
  if (ts_node_is(n, TS_K_aten_bmm) && nin == 2 && ts_gpu_f32c(&in[0]) && ts_gpu_f32c(&in[1]))
    return ts_gpu_bmm(g, c, in[0].u.t, in[1].u.t, out);
  return 0;
}

/* --------------------------------------------------------- other nodes */

int ts_rt_gpu_node_begin(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, const ts_node *n, ts_iv *in, uint32_t nin,
                         ts_iv *out, uint32_t nout) {
  uint8_t how = k < g->nnodes && g->nodes[k] == n ? g->how[k] : TS_GPU_NODE_DATA;
  if (how == TS_GPU_NODE_SHAPE)
    return 0;
  if (how == TS_GPU_NODE_GEMM) {
    int r = ts_gpu_gemm_node(g, c, n, in, nin, out, nout);
    if (r)
      return r;
  }
  uint64_t before = g->stats.bytes_to_host;
  /* a view reads its self's sizes and strides only; its other inputs may be
   * read (tensor_split's indices) */
  for (uint32_t i = how == TS_GPU_NODE_VIEW ? 1 : 0; i < nin; i++)
    if (!ts_rt_gpu_iv_to_host(g, c, &in[i]))
      return -1;
  g->stats.host_ops += g->stats.bytes_to_host != before;
  return 0;
}

bool ts_rt_gpu_node_end(ts_rt_gpu *g, ts_rt_ctx *c, uint32_t k, ts_iv *in, uint32_t nin) {
  if (k >= g->nnodes || !g->writes[k])
    return true;
  ts_gpu_walker w = {g, c};
  for (uint32_t i = 0; i < nin; i++)
    if (!ts_gpu_walk(&w, &in[i], ts_gpu_wrote_fn, 0))
      return false;
  return true;
}
