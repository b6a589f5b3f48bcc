/* runtime/hosted/aot.c: the run-time half of compiled models (hosted/aot.h,
 * include/tsaot.h).
 *
 * Init parses the embedded graph texts, points their tensor constants at
 * the embedded weights (tensors wrap the read-only bytes, no copy), and
 * binds every node the entry function may call: its kernel, or the
 * interpreter's one-node runner for structural ops and fusion groups left
 * to the interpreter; the interpreter's code for the fallback graph (and for
 * the graph itself when there is no entry function) is built then too, so
 * that a run builds nothing. A run reads the caller's DLTensors back into
 * forward's arguments by their declared types (include/tsaot.h's slots,
 * runtime/hosted/io.c's ts_rt_io_args; the types come from the signature the
 * descriptor embeds), checks them against the specialisation (the guard:
 * the input specs walked with the values, ts_aot_match), and runs the entry
 * function (on the arguments' leaves when the graph was specialised to
 * their forms, desc->leaves), or the fallback graph in the interpreter.
 * run_static runs with a heap over the caller's arena made current, so
 * that nothing of the run comes from the C library.
 *
 * Runs are reentrant (aot.h): what init makes is the model's and is only
 * read by runs; what a run changes is its ts_rt_aot_state (from a free list
 * for run, laid out in the arena for run_static); last_error and
 * last_bailout are thread-local records.
 *
 * A tensor constant that the graph may write (alias analysis: an in-place
 * op, batch_norm's running stats in training mode) gets a writable copy
 * made at init, shared by the constants of both graphs at the same weights
 * offset, so its updates persist from run to run as a module buffer's do.
 *
 * Where it does less than PyTorch's runtime (which has no such mode): runs
 * of a model that writes its module or constants take turns; CPU tensors
 * only; a constant that is not written itself but shares bytes with one
 * that is does not see the writes; prim::Print output of compiled code is
 * dropped (and a run's error text is cut at 1 KiB).
 */
#include "aot.h"
#include "gpu.h"

#include "tsaot.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  TS_AOT_ERR_CAP = 1024,     /* last_error and the bailout reason, truncated */
  TS_AOT_STACK_OPS = 16,     /* a node's inputs gathered on the stack up to this */
  TS_AOT_FUSION_DIMS = 512,  /* operands * dims of a compiled group */
  TS_AOT_GRAIN = 16384,      /* elements per chunk of a fused kernel */
  TS_AOT_CTX_TEXT = 1024,    /* a run's ctx error and print text (cut off past it) */
  TS_AOT_LAST_MODELS = 4,    /* models whose last error a thread remembers */
};

/* kDLBool of DLPack 0.8; Debian's header (0.6) predates it. */
#define TS_AOT_DL_BOOL 6

/* How node k runs. */
typedef enum ts_aot_how {
  TS_AOT_NONE,   /* not callable (control flow, or not supported) */
  TS_AOT_KERNEL, /* fn */
  TS_AOT_INTERP, /* ts_rt_interp_node */
  TS_AOT_CONST,  /* value */
} ts_aot_how;

typedef struct ts_aot_node {
  const ts_node *n;
  ts_rt_kernel_fn fn;
  ts_iv value;
  uint8_t how;
  bool complex_ok; /* fn takes complex tensors (ts_rt_kernel_complex_ok) */
} ts_aot_node;

/* A writable copy of weights that the graph may write. */
typedef struct ts_aot_wcopy {
  uint64_t offset, nbytes; /* in the weights */
  uint8_t *mem;
} ts_aot_wcopy;

/* What init makes: shared by every run and read-only while runs go on
 * (set_threads, profile and release are not called during runs). */
struct ts_rt_aot_model {
  ts_rt_aot_desc *desc;
  ts_aot_wcopy *wcopies;
  uint32_t nwcopies;
  ts_graph *graph, *fallback;
  ts_aot_node *nodes;
  uint32_t nnodes;
  ts_rt_interp *ip;
  void *model; /* desc->archive loaded (desc->module_ops): the module object and its methods */
  ts_rt_ctx ctx;      /* init's errors; owns the worker pool that runs borrow */
  /* every constant the code and the interpreter hold, marked
   * TS_RT_RC_SHARED, with a reference of the model's: unmarked and
   * released by teardown */
  ts_iv *shared;
  uint32_t nshared, cap_shared;
  bool have_ctx;
  int nthreads;
  uint32_t nparams; /* graph inputs, self included */
  uint32_t nrets;
  /* forward's arguments after self, as callers pass them (desc->signature;
   * types and names in the graph's arena) */
  uint32_t nargs;
  const ts_type **argtypes;
  const char **argnames;
  bool fixed;     /* every argument one slot: the count is desc->nslots whatever the values */
  uint32_t nvals; /* a run's argument values: the graph's, then (desc->leaves) self and the arguments */
  /* runs take run_mu, one at a time: they may change state that runs share
   * (the module's attributes, constants the graph writes, a constant that
   * could not be marked TS_RT_RC_SHARED) */
  bool serial;
  pthread_mutex_t run_mu;
  /* NAME_run's states between runs (each with its planned region): one in
   * spare1, taken and put back with one atomic operation each (the common
   * case: one caller at a time), the others on a list */
  ts_rt_aot_state *spare1;
  pthread_mutex_t spare_mu;
  ts_rt_aot_state *spare;
  char *err; /* during init: the calling thread's last_error text */
  /* NAME_profile: on while profiling; rows and their strings are made by
   * NAME_profile_rows */
  bool profiling;
  ts_rt_profile prof;
  tsaot_profile_row *prof_rows;
  ts_buf prof_text;
  /* NAME_set_device("cuda"): the GPU run path (gpu.h), NULL on the CPU;
   * gpu_nodes are nodes[k].n, which it keeps */
  ts_rt_gpu *gpu;
  ts_node **gpu_nodes;
};

/* One run's state: what the entry function and its helpers get. NAME_run
 * takes one from the model's spares (or makes one); run_static lays one
 * out in the caller's arena after the plan. The ctx's text buffers, the
 * arguments and the results follow it (ts_rt_aot_call_bytes). */
struct ts_rt_aot_state {
  ts_rt_aot_state_head head; /* first: the entry function reads it */
  ts_rt_aot_model *m;
  ts_rt_ctx ctx;      /* its pool is the model's */
  ts_iv *args, *rets; /* m->nparams, m->nrets */
  ts_iv *dargs;       /* self and the arguments (m->nargs + 1): args, or after rets with desc->leaves */
  uint8_t *plan;      /* NAME_run's planned region (aligned_alloc), kept with the state */
  ts_rt_aot_state *next; /* in m->spare */
  int bailout;
  int64_t fail_node; /* the node whose error ctx holds, or -1 */
  char *err;         /* the calling thread's last_error text (TS_AOT_ERR_CAP) */
  char why[TS_AOT_ERR_CAP];
};

/* What NAME_last_error and NAME_last_bailout report: the calling thread's
 * last call of a model, for the last few models it called. */
typedef struct ts_aot_last {
  const ts_rt_aot_desc *desc;
  int bailout;
  char err[TS_AOT_ERR_CAP];
} ts_aot_last;

/* A thread's records are on the heap, found through a thread-local pointer
 * (an array of them in TLS, 4 KiB, would be in every thread of every
 * program that links the runtime) and freed at the thread's exit by a
 * key's destructor. */
typedef struct ts_aot_lasts {
  ts_aot_last v[TS_AOT_LAST_MODELS];
  unsigned next;
} ts_aot_lasts;

static TS_TLS ts_aot_lasts *ts_aot_mine;
static pthread_key_t ts_aot_lasts_key;
static pthread_once_t ts_aot_lasts_once = PTHREAD_ONCE_INIT;
static bool ts_aot_lasts_key_ok;

static void ts_aot_lasts_make_key(void) { ts_aot_lasts_key_ok = pthread_key_create(&ts_aot_lasts_key, free) == 0; }

/* The calling thread's records; with make, made on first use (the C
 * library's: they outlive runs' heaps). NULL when there are none. */
static ts_aot_lasts *ts_aot_lasts_of_thread(bool make) {
  if (ts_aot_mine || !make)
    return ts_aot_mine;
  pthread_once(&ts_aot_lasts_once, ts_aot_lasts_make_key);
  ts_aot_lasts *l = calloc(1, sizeof *l);
  if (l && ts_aot_lasts_key_ok && pthread_setspecific(ts_aot_lasts_key, l) != 0) {
    free(l);
    l = NULL;
  }
  ts_aot_mine = l;
  return l;
}

/* The calling thread's record of desc; with make, a new one (cleared)
 * replaces the oldest when there is none. NULL: none (or out of memory). */
static ts_aot_last *ts_aot_last_of(const ts_rt_aot_desc *desc, bool make) {
  ts_aot_lasts *t = ts_aot_lasts_of_thread(make);
  if (!t)
    return NULL;
  for (unsigned i = 0; i < TS_AOT_LAST_MODELS; i++)
    if (t->v[i].desc == desc)
      return &t->v[i];
  if (!make)
    return NULL;
  ts_aot_last *l = &t->v[t->next++ % TS_AOT_LAST_MODELS];
  l->desc = desc;
  l->bailout = 0;
  l->err[0] = 0;
  return l;
}

/* A new call of desc from this thread: its record, cleared; `spare` (the
 * caller's) when the thread's records cannot be made: the call still
 * works, last_error then has nothing to say. */
static ts_aot_last *ts_aot_last_begin(const ts_rt_aot_desc *desc, ts_aot_last *spare) {
  ts_aot_last *l = ts_aot_last_of(desc, true);
  if (!l)
    l = spare;
  l->desc = desc;
  l->bailout = 0;
  l->err[0] = 0;
  return l;
}

static void ts_aot_noop_free(void *ctx, void *data) {
  (void)ctx;
  (void)data;
}

static void ts_aot_seterr(char *err, const char *fmt, ...) TS_PRINTF(2, 3);
static void ts_aot_seterr(char *err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, TS_AOT_ERR_CAP, fmt, ap);
  va_end(ap);
}

static uint64_t ts_aot_round64(uint64_t n) { return (n + 63) & ~(uint64_t)63; }

/* ------------------------------------------------------------ numbering */

static uint32_t ts_aot_number_block(const ts_block *b, ts_node **out, uint32_t k) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (out)
      out[k] = n;
    k++;
    for (uint32_t i = 0; i < n->nblocks; i++)
      k = ts_aot_number_block(n->blocks[i], out, k);
  }
  return k;
}

uint32_t ts_rt_aot_number_nodes(ts_graph *g, ts_node **out) { return ts_aot_number_block(g->block, out, 0); }

static bool ts_aot_is_tconst(const ts_node *n) {
  if (!ts_node_is(n, TS_K_prim_Constant))
    return false;
  const ts_attr *a = ts_node_attr(n, "value");
  return a && a->kind == TS_ATTR_TENSOR;
}

/* Per node: itself, its blocks, then the graphs of its graph attributes. */
static uint32_t ts_aot_tconsts_block(const ts_block *b, ts_node **out, uint32_t k) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (ts_aot_is_tconst(n)) {
      if (out)
        out[k] = n;
      k++;
    }
    for (uint32_t i = 0; i < n->nblocks; i++)
      k = ts_aot_tconsts_block(n->blocks[i], out, k);
    for (const ts_attr *a = n->attrs; a; a = a->next)
      if (a->kind == TS_ATTR_GRAPH && a->u.g)
        k = ts_aot_tconsts_block(a->u.g->block, out, k);
  }
  return k;
}

uint32_t ts_rt_aot_tensor_consts(ts_graph *g, ts_node **out) { return ts_aot_tconsts_block(g->block, out, 0); }

static bool ts_aot_unsupported(const ts_node *n, ts_diag *d) {
  ts_diag_error(d, "%s is not supported in compiled code", n->kind_name);
  return false;
}

/* Every node of a fusion group's subgraph has a kernel or is structural. */
static bool ts_aot_group_supported(const ts_node *n, ts_diag *d) {
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  const ts_graph *sub = a && a->kind == TS_ATTR_GRAPH ? a->u.g : NULL;
  if (!sub) {
    ts_diag_error(d, "malformed prim::FusionGroup: no Subgraph");
    return false;
  }
  for (const ts_node *m = ts_block_first(sub->block); m != sub->block->ret; m = m->next)
    if (!ts_node_is(m, TS_K_prim_Constant) && !ts_rt_aot_node_supported(m, d))
      return false;
  return true;
}

/* Nodes on objects or calls: compiled code cannot run them, and the
 * interpreter's instructions for them keep caches that runs write. */
static bool ts_aot_is_object_op(const ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_GetAttr:
  case TS_K_prim_SetAttr:
  case TS_K_prim_CallMethod:
  case TS_K_prim_CallFunction:
  case TS_K_prim_CreateObject:
  case TS_K_prim_Enter:
  case TS_K_prim_Exit: return true;
  default: return false;
  }
}

bool ts_rt_aot_node_supported(const ts_node *n, ts_diag *d) {
  if (ts_aot_is_object_op(n))
    return ts_aot_unsupported(n, d);
  switch (n->kind) {
  case TS_K_prim_ListConstruct:
  case TS_K_prim_ListUnpack:
  case TS_K_prim_TupleConstruct:
  case TS_K_prim_TupleUnpack:
  case TS_K_prim_TupleIndex:
  case TS_K_prim_TupleSlice:
  case TS_K_prim_DictConstruct:
  case TS_K_prim_Uninitialized:
  case TS_K_prim_unchecked_cast:
  case TS_K_prim_unchecked_unwrap_optional:
  case TS_K_prim_tolist:
  case TS_K_prim_ConstantChunk:
    return true;
  case TS_K_prim_FusionGroup:
    return ts_aot_group_supported(n, d);
  case TS_K_prim_Constant:
  case TS_K_prim_If:
  case TS_K_prim_Loop:
    ts_diag_error(d, "%s is compiled into the entry function, not called", n->kind_name);
    return false;
  case TS_K_prim_fork:
  case TS_K_prim_isinstance:
  case TS_K_prim_Param:
  case TS_K_prim_Return:
    return ts_aot_unsupported(n, d);
  default:
    break;
  }
  /* an operator nothing runs (the op table lacks it, or it has no kernel):
   * called, it fails as in the interpreter (ts_rt_interp_no_kernel), so
   * that the rest of the graph stays compiled */
  if (n->kind == TS_K_OTHER)
    return true;
  if (n->nblocks)
    return ts_aot_unsupported(n, d);
  if (ts_node_schema(n))
    return true;
  ts_diag_error(d, "no overload of %s matches its inputs", n->kind_name);
  return false;
}

/* ------------------------------------------------------------ DLPack */

static bool ts_aot_dtype_from_dl(DLDataType t, ts_dtype *out) {
  if (t.lanes != 1)
    return false;
  ts_dtype dt = TS_DT_NONE;
  switch (t.code) {
  case kDLFloat:
    dt = t.bits == 32 ? TS_DT_FLOAT32 : t.bits == 64 ? TS_DT_FLOAT64 : t.bits == 16 ? TS_DT_FLOAT16 : dt;
    break;
  case kDLBfloat: dt = t.bits == 16 ? TS_DT_BFLOAT16 : dt; break;
  case kDLInt:
    dt = t.bits == 64   ? TS_DT_INT64
         : t.bits == 32 ? TS_DT_INT32
         : t.bits == 16 ? TS_DT_INT16
         : t.bits == 8  ? TS_DT_INT8
                        : dt;
    break;
  case kDLUInt: dt = t.bits == 8 ? TS_DT_UINT8 : dt; break;
  case TS_AOT_DL_BOOL: dt = t.bits == 8 ? TS_DT_BOOL : dt; break;
  case kDLComplex: dt = t.bits == 64 ? TS_DT_COMPLEX64 : t.bits == 128 ? TS_DT_COMPLEX128 : dt; break;
  default: break;
  }
  *out = dt;
  return dt != TS_DT_NONE;
}

static DLDataType ts_aot_dtype_to_dl(ts_dtype dt) {
  DLDataType t = {.code = kDLFloat, .bits = 32, .lanes = 1};
  switch (dt) {
  case TS_DT_FLOAT64: t.bits = 64; break;
  case TS_DT_FLOAT16: t.bits = 16; break;
  case TS_DT_BFLOAT16: t.code = kDLBfloat, t.bits = 16; break;
  case TS_DT_INT64: t.code = kDLInt, t.bits = 64; break;
  case TS_DT_INT32: t.code = kDLInt, t.bits = 32; break;
  case TS_DT_INT16: t.code = kDLInt, t.bits = 16; break;
  case TS_DT_INT8: t.code = kDLInt, t.bits = 8; break;
  case TS_DT_UINT8: t.code = kDLUInt, t.bits = 8; break;
  case TS_DT_BOOL: t.code = TS_AOT_DL_BOOL, t.bits = 8; break;
  case TS_DT_COMPLEX64: t.code = kDLComplex, t.bits = 64; break;
  case TS_DT_COMPLEX128: t.code = kDLComplex, t.bits = 128; break;
  default: break;
  }
  return t;
}

/* Bytes from the first element of a view to one past the last it reaches;
 * false on a negative size or stride, or when the element count, an
 * offset or the byte count does not fit in int64 (kernels index with it). */
static bool ts_aot_extent(int32_t ndim, const int64_t *sizes, const int64_t *strides, size_t es, uint64_t *out) {
  int64_t numel = 1;
  for (int32_t i = 0; i < ndim; i++) {
    if (sizes[i] < 0 || (strides && strides[i] < 0) || __builtin_mul_overflow(numel, sizes[i], &numel))
      return false;
  }
  if (numel == 0) {
    *out = 0;
    return true;
  }
  int64_t cs[TS_RT_MAX_DIMS];
  if (!strides) {
    ts_rt_strides_contiguous(ndim, sizes, cs);
    strides = cs;
  }
  int64_t last = 0, span;
  for (int32_t i = 0; i < ndim; i++)
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last))
      return false;
  int64_t bytes;
  if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, (int64_t)es, &bytes))
    return false;
  *out = (uint64_t)bytes;
  return true;
}

/* Whether the ABI takes dl (include/tsaot.h), with its dtype and the bytes
 * it spans from data + byte_offset; else the reason in why. */
static bool ts_aot_dl_check(const DLTensor *dl, ts_dtype *dtp, uint64_t *nbytesp, char *why, size_t cap) {
  ts_dtype dt;
  uint64_t nbytes;
  if (dl->device.device_type != kDLCPU) {
    snprintf(why, cap, "a tensor on device type %d (only CPU tensors, kDLCPU, are taken)", (int)dl->device.device_type);
    return false;
  }
  if (!ts_aot_dtype_from_dl(dl->dtype, &dt)) {
    snprintf(why, cap, "unsupported DLPack dtype (code %u, %u bits, %u lanes)", (unsigned)dl->dtype.code,
             (unsigned)dl->dtype.bits, (unsigned)dl->dtype.lanes);
    return false;
  }
  if (dl->ndim < 0 || dl->ndim > TS_RT_MAX_DIMS) {
    snprintf(why, cap, "a tensor of %d dimensions (0 to %d are taken)", dl->ndim, TS_RT_MAX_DIMS);
    return false;
  }
  if (dl->ndim && !dl->shape) {
    snprintf(why, cap, "a tensor of %d dimensions without a shape (NULL)", dl->ndim);
    return false;
  }
  size_t es = ts_dtype_size(dt);
  if (!ts_aot_extent(dl->ndim, dl->shape, dl->strides, es, &nbytes) || nbytes > SIZE_MAX / 2) {
    for (int32_t d = 0; d < dl->ndim; d++)
      if (dl->shape[d] < 0 || (dl->strides && dl->strides[d] < 0)) {
        snprintf(why, cap, "a negative %s (%lld) at dimension %d", dl->shape[d] < 0 ? "size" : "stride",
                 (long long)(dl->shape[d] < 0 ? dl->shape[d] : dl->strides[d]), (int)d);
        return false;
      }
    snprintf(why, cap, "a tensor whose sizes and strides reach past 2^63 bytes");
    return false;
  }
  *dtp = dt;
  *nbytesp = nbytes;
  if (!nbytes)
    return true;
  if (!dl->data) {
    snprintf(why, cap, "a tensor of %llu bytes whose data is NULL", (unsigned long long)nbytes);
    return false;
  }
  uintptr_t p, end;
  if (dl->byte_offset > SIZE_MAX / 2 || __builtin_add_overflow((uintptr_t)dl->data, (uintptr_t)dl->byte_offset, &p) ||
      __builtin_add_overflow(p, (uintptr_t)nbytes, &end)) {
    snprintf(why, cap, "byte_offset %llu overflows the address space", (unsigned long long)dl->byte_offset);
    return false;
  }
  if (p & (es - 1)) { /* element sizes are powers of two */
    snprintf(why, cap, "data + byte_offset is not aligned to the %zu-byte elements", es);
    return false;
  }
  return true;
}

ts_rt_tensor *ts_rt_tensor_from_dl(ts_rt_ctx *c, const DLTensor *dl) {
  char why[256];
  ts_dtype dt;
  uint64_t nbytes;
  if (!ts_aot_dl_check(dl, &dt, &nbytes, why, sizeof why)) {
    ts_rt_fail(c, "%s", why);
    return NULL;
  }
  char *data = nbytes ? (char *)dl->data + dl->byte_offset : dl->data;
  ts_rt_storage *s = ts_rt_storage_wrap(c, data, (size_t)nbytes, ts_aot_noop_free, NULL);
  if (!s)
    return NULL;
  int64_t cs[TS_RT_MAX_DIMS];
  const int64_t *strides = dl->strides;
  if (!strides) {
    ts_rt_strides_contiguous(dl->ndim, dl->shape, cs);
    strides = cs;
  }
  ts_rt_tensor *t = ts_rt_tensor_new_view(c, s, dt, 0, dl->ndim, dl->shape, strides);
  ts_rt_storage_release(s);
  return t;
}

bool ts_rt_tensor_to_dl(const ts_rt_tensor *t, DLTensor *dl) {
  if (!ts_rt_dtype_supported((ts_dtype)t->dtype))
    return false;
  memset(dl, 0, sizeof *dl);
  dl->data = ts_rt_tensor_data(t);
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = t->ndim;
  dl->dtype = ts_aot_dtype_to_dl((ts_dtype)t->dtype);
  dl->shape = t->sizes;
  dl->strides = t->strides;
  dl->byte_offset = 0;
  return true;
}

/* ------------------------------------------------------------------ init */

/* Whether p lies in the embedded weights or a writable copy of them. */
static bool ts_aot_embedded(const ts_rt_aot_model *m, const void *p) {
  const uint8_t *w = m->desc->weights, *q = p;
  if (w && q >= w && q < w + m->desc->weights_len)
    return true;
  for (uint32_t i = 0; i < m->nwcopies; i++)
    if (q >= m->wcopies[i].mem && q < m->wcopies[i].mem + m->wcopies[i].nbytes)
      return true;
  return false;
}

/* A tensor constant whose bytes lie in the embedded weights becomes a tensor
 * over them; any other constant as the interpreter reads it. */
static bool ts_aot_const_make(ts_rt_aot_model *m, ts_rt_ctx *ctx, const ts_node *n, ts_iv *out) {
  const ts_attr *a = ts_node_attr(n, "value");
  const ts_tconst *tc = a && a->kind == TS_ATTR_TENSOR ? a->u.t : NULL;
  if (!tc || !tc->data || !ts_aot_embedded(m, tc->data))
    return ts_rt_iv_from_constant(ctx, n, out);
  uint64_t nbytes;
  /* checked when the constant was attached */
  if (!ts_aot_extent(tc->rank, tc->sizes, tc->strides, ts_dtype_size((ts_dtype)tc->dtype), &nbytes))
    return ts_rt_fail(ctx, "malformed tensor constant");
  ts_rt_storage *s = ts_rt_storage_wrap(ctx, (void *)(uintptr_t)tc->data, (size_t)nbytes, ts_aot_noop_free, NULL);
  if (!s)
    return false;
  int64_t cs[TS_RT_MAX_DIMS];
  const int64_t *strides = tc->strides;
  if (!strides) {
    ts_rt_strides_contiguous(tc->rank, tc->sizes, cs);
    strides = cs;
  }
  ts_rt_tensor *t = ts_rt_tensor_new_view(ctx, s, (ts_dtype)tc->dtype, 0, tc->rank, tc->sizes, strides);
  ts_rt_storage_release(s);
  if (!t)
    return false;
  *out = ts_iv_tensor(t);
  return true;
}

/* Reads one embedded graph text. */
static ts_graph *ts_aot_parse(ts_rt_aot_model *m, const char *what, const char *text, uint64_t len) {
  char file[160];
  snprintf(file, sizeof file, "<%s: %s graph>", m->desc->name ? m->desc->name : "model", what);
  ts_diag d = {0};
  d.max_errors = 1;
  ts_graph *g = text ? ts_graph_parse(file, text, (size_t)len, &d) : NULL;
  if (!g) {
    const char *t = d.text.data && d.text.len ? d.text.data : "no text";
    const char *nl = strchr(t, '\n');
    ts_aot_seterr(m->err, "cannot read the %s graph: %.*s", what, (int)(nl ? nl - t : (ptrdiff_t)strlen(t)), t);
  }
  ts_diag_free(&d);
  return g;
}

/* The writable copy of weights [offset, offset + nbytes), made on first
 * request. */
static uint8_t *ts_aot_wcopy_of(ts_rt_aot_model *m, uint64_t offset, uint64_t nbytes) {
  for (uint32_t i = 0; i < m->nwcopies; i++)
    if (m->wcopies[i].offset == offset && m->wcopies[i].nbytes >= nbytes)
      return m->wcopies[i].mem;
  ts_aot_wcopy *w = ts_rt_realloc(m->wcopies, (m->nwcopies + 1) * sizeof *w);
  if (!w)
    return NULL;
  m->wcopies = w;
  uint8_t *mem = aligned_alloc(64, (size_t)ts_aot_round64(nbytes ? nbytes : 1));
  if (!mem)
    return NULL;
  if (nbytes)
    memcpy(mem, m->desc->weights + offset, (size_t)nbytes);
  m->wcopies[m->nwcopies++] = (ts_aot_wcopy){.offset = offset, .nbytes = nbytes, .mem = mem};
  return mem;
}

/* Constants of g (nodes[i] with tcs[i]) that the compiler did not find
 * never written get a writable copy of their bytes; the others are marked
 * for the kernels (TS_NODE_NEVER_WRITTEN: packed weights may be kept). */
static bool ts_aot_writable(ts_rt_aot_model *m, ts_node **nodes, const ts_rt_aot_tconst *tcs, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const ts_rt_aot_tconst *tc = &tcs[i];
    if (tc->flags & TS_RT_AOT_TCONST_NEVER_WRITTEN) {
      nodes[i]->flags |= TS_NODE_NEVER_WRITTEN;
      continue;
    }
    nodes[i]->flags &= ~(uint32_t)TS_NODE_NEVER_WRITTEN;
    uint8_t *mem = ts_aot_wcopy_of(m, tc->offset, tc->nbytes);
    ts_tconst t = {.dtype = (int8_t)tc->dtype, .rank = tc->rank, .sizes = tc->sizes, .strides = tc->strides,
                   .data = mem};
    if (!mem || !ts_node_set_t(nodes[i], "value", &t)) {
      ts_aot_seterr(m->err, "out of memory");
      return false;
    }
  }
  return true;
}

/* Points g's tensor constants at the weights: tconsts[0, n) in
 * ts_rt_aot_tensor_consts order. */
static bool ts_aot_attach(ts_rt_aot_model *m, ts_graph *g, const ts_rt_aot_tconst *tcs, uint32_t n, const char *what) {
  const ts_rt_aot_desc *desc = m->desc;
  uint32_t have = ts_rt_aot_tensor_consts(g, NULL);
  if (have != n) {
    ts_aot_seterr(m->err, "the %s graph has %u tensor constants, the weights table %u", what, have, n);
    return false;
  }
  if (!n)
    return true;
  ts_node **nodes = ts_rt_malloc((size_t)n * sizeof *nodes);
  if (!nodes) {
    ts_aot_seterr(m->err, "out of memory");
    return false;
  }
  ts_rt_aot_tensor_consts(g, nodes);
  bool ok = true;
  for (uint32_t i = 0; i < n && ok; i++) {
    const ts_rt_aot_tconst *tc = &tcs[i];
    uint64_t ext = 0;
    ok = ts_rt_dtype_supported((ts_dtype)tc->dtype) && tc->rank >= 0 && tc->rank <= TS_RT_MAX_DIMS &&
         (tc->rank == 0 || tc->sizes) &&
         ts_aot_extent(tc->rank, tc->sizes, tc->strides, ts_dtype_size((ts_dtype)tc->dtype), &ext) &&
         ext <= tc->nbytes && tc->offset <= desc->weights_len && tc->nbytes <= desc->weights_len - tc->offset &&
         (ext == 0 || desc->weights);
    if (!ok) {
      ts_aot_seterr(m->err, "tensor constant %u of the %s graph: malformed entry of the weights table", i, what);
      break;
    }
    ts_tconst t = {.dtype = (int8_t)tc->dtype,
                   .rank = tc->rank,
                   .sizes = tc->sizes,
                   .strides = tc->strides,
                   .data = desc->weights ? desc->weights + tc->offset : NULL};
    if (!ts_node_set_t(nodes[i], "value", &t)) {
      ts_aot_seterr(m->err, "out of memory");
      ok = false;
    }
  }
  if (ok)
    ok = ts_aot_writable(m, nodes, tcs, n);
  ts_rt_free(nodes);
  return ok;
}

static void ts_aot_noop_range(void *arg, int64_t b, int64_t e) {
  (void)arg;
  (void)b;
  (void)e;
}

/* Every constant the code and the interpreter hold: made at init, then
 * retained and released by runs on any thread, so marked TS_RT_RC_SHARED
 * (kept in m->shared for teardown); one that cannot be marked makes runs
 * take turns. */
static bool ts_aot_const_value(void *arg, ts_rt_ctx *ctx, const ts_node *n, ts_iv *out) {
  ts_rt_aot_model *m = arg;
  if (!ts_aot_const_make(m, ctx, n, out))
    return false;
  if (!ts_iv_is_ref(*out))
    return true;
  if (m->nshared == m->cap_shared) {
    uint32_t cap = m->cap_shared ? m->cap_shared * 2 : 64;
    ts_iv *grown = cap > m->cap_shared ? ts_rt_realloc(m->shared, (size_t)cap * sizeof *grown) : NULL;
    if (!grown) {
      m->serial = true;
      return true;
    }
    m->shared = grown;
    m->cap_shared = cap;
  }
  ts_iv_retain(*out);
  m->shared[m->nshared++] = *out;
  if (!ts_iv_share(*out))
    m->serial = true;
  return true;
}

/* The model's ctx (init's errors) and its worker pool, started now: runs
 * borrow it (a pool made inside run_static would come from the arena). */
static void ts_aot_ctx_init(ts_rt_aot_model *m) {
  ts_rt_ctx_init(&m->ctx, m->nthreads);
  m->have_ctx = true;
  if (m->ctx.nthreads > 1)
    ts_rt_parallel_for(&m->ctx, 2, 1, ts_aot_noop_range, NULL);
}

/* Binds node k of the compiled graph. */
static bool ts_aot_bind(ts_rt_aot_model *m, ts_aot_node *an, const ts_node *n) {
  an->n = n;
  an->value = ts_iv_none();
  if (ts_node_is(n, TS_K_prim_Constant)) {
    if (!ts_aot_const_value(m, &m->ctx, n, &an->value))
      return false;
    an->how = TS_AOT_CONST;
    return true;
  }
  if (ts_node_is(n, TS_K_prim_If) || ts_node_is(n, TS_K_prim_Loop))
    return true;
  if (!ts_rt_aot_node_supported(n, NULL))
    return true; /* the entry function never calls it; a call fails */
  const ts_schema *sc = n->kind != TS_K_OTHER && !ts_node_is(n, TS_K_prim_FusionGroup) ? ts_node_schema(n) : NULL;
  ts_rt_kernel_fn fn = sc ? ts_rt_kernel_for(sc) : NULL;
  if (fn) {
    an->fn = fn;
    an->complex_ok = ts_rt_kernel_complex_ok(sc);
    an->how = TS_AOT_KERNEL;
    return true;
  }
  if (!ts_rt_interp_prepare_node(m->ip, &m->ctx, n))
    return false;
  an->how = TS_AOT_INTERP;
  return true;
}

/* Whether a node of b (its blocks and subgraphs included) works on objects
 * or calls: the interpreter's instructions for those keep caches that runs
 * write (runtime/hosted/interp.c), so such a model's runs take turns. */
static bool ts_aot_has_object_ops(const ts_block *b) {
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    if (ts_aot_is_object_op(n))
      return true;
    for (uint32_t i = 0; i < n->nblocks; i++)
      if (ts_aot_has_object_ops(n->blocks[i]))
        return true;
    for (const ts_attr *a = n->attrs; a; a = a->next)
      if (a->kind == TS_ATTR_GRAPH && a->u.g && ts_aot_has_object_ops(a->u.g->block))
        return true;
  }
  return false;
}

/* Frees what init made (not the model itself). */
static void ts_aot_gpu_off(ts_rt_aot_model *m);

static void ts_aot_teardown(ts_rt_aot_model *m) {
  ts_aot_gpu_off(m);
  /* counted again from here on: no run sees them */
  for (uint32_t i = 0; i < m->nshared; i++)
    ts_iv_unshare(m->shared[i]);
  for (uint32_t k = 0; k < m->nnodes; k++)
    ts_iv_release(m->nodes[k].value);
  ts_rt_free(m->nodes);
  m->nodes = NULL;
  m->nnodes = 0;
  if (m->spare1) {
    m->spare1->next = m->spare;
    m->spare = m->spare1;
    m->spare1 = NULL;
  }
  while (m->spare) {
    ts_rt_aot_state *st = m->spare;
    m->spare = st->next;
    free(st->plan);
    free(st);
  }
  ts_rt_interp_free(m->ip);
  m->ip = NULL;
  if (m->model)
    m->desc->module_ops->free(m->model);
  m->model = NULL;
  for (uint32_t i = 0; i < m->nshared; i++)
    ts_iv_release(m->shared[i]);
  ts_rt_free(m->shared);
  m->shared = NULL;
  m->nshared = m->cap_shared = 0;
  ts_graph_free(m->graph);
  ts_graph_free(m->fallback);
  m->graph = m->fallback = NULL;
  if (m->have_ctx)
    ts_rt_ctx_free(&m->ctx);
  m->have_ctx = false;
  for (uint32_t i = 0; i < m->nwcopies; i++)
    free(m->wcopies[i].mem);
  ts_rt_free(m->wcopies);
  m->wcopies = NULL;
  m->nwcopies = 0;
  ts_rt_profile_free(&m->prof);
  free(m->prof_rows);
  m->prof_rows = NULL;
  ts_buf_free(&m->prof_text);
  m->profiling = false;
}

/* The template specs of one value of type ty from inputs[*r] on. */
static bool ts_aot_rows_fit(const ts_rt_aot_desc *desc, uint32_t *r, const ts_type *ty) {
  uint32_t n = ts_rt_io_template_slots(ty);
  if (n > desc->ninputs - *r)
    return false;
  *r += n;
  return true;
}

/* forward's arguments (desc->signature, else the graph's inputs), checked
 * against the graph and the specs. */
static bool ts_aot_signature(ts_rt_aot_model *m) {
  ts_rt_aot_desc *desc = m->desc;
  ts_arena *a = ts_graph_arena(m->graph);
  if (m->nparams < 1 || (desc->ninputs && !desc->inputs)) {
    ts_aot_seterr(m->err, "the compiled graph takes no self, or the descriptor has no input specs");
    return false;
  }
  if (!desc->signature) {
    if (desc->leaves) {
      ts_aot_seterr(m->err, "a graph of leaves without a signature");
      return false;
    }
    m->nargs = m->nparams - 1;
  } else {
    m->nargs = 0;
    for (uint64_t i = 0; i < desc->signature_len; i++)
      m->nargs += desc->signature[i] == '\n';
  }
  m->argtypes = ts_arena_alloc(a, (m->nargs + 1) * sizeof *m->argtypes);
  m->argnames = ts_arena_alloc(a, (m->nargs + 1) * sizeof *m->argnames);
  if (!m->argtypes || !m->argnames) {
    ts_aot_seterr(m->err, "out of memory");
    return false;
  }
  const char *p = desc->signature, *end = p ? p + desc->signature_len : NULL;
  for (uint32_t k = 0; k < m->nargs; k++) {
    if (!p) {
      const ts_value *v = ts_block_input(m->graph->block, k + 1);
      m->argtypes[k] = v->type;
      m->argnames[k] = v->name;
      continue;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *colon = memchr(p, ':', (size_t)(nl - p));
    ts_diag d = {0};
    d.max_errors = 1;
    m->argnames[k] = colon ? ts_arena_strndup(a, p, (size_t)(colon - p)) : NULL;
    m->argtypes[k] = colon ? ts_type_parse(a, colon + 1, (size_t)(nl - colon - 1), &d) : NULL;
    ts_diag_free(&d);
    if (!m->argtypes[k] || !m->argnames[k]) {
      ts_aot_seterr(m->err, "the signature's line %u does not read: '%.*s'", k + 1, (int)(nl - p), p);
      return false;
    }
    p = nl + 1;
  }
  /* the specs: one template per argument, or (leaves) one per leaf, None
   * and length of the specialisation */
  m->fixed = true;
  uint32_t r = 0, nleaves = 0;
  for (uint32_t k = 0; k < m->nargs; k++) {
    const ts_type *t = m->argtypes[k];
    m->fixed = m->fixed && t->kind != TS_TY_OPTIONAL && ts_rt_io_leaf(t);
    ts_buf why = {0};
    bool ok = ts_rt_io_passable(t, &why);
    ts_buf_free(&why);
    if (!ok || (!desc->leaves && !ts_aot_rows_fit(desc, &r, t))) {
      ts_aot_seterr(m->err, "argument %u: its type does not cross the ABI, or its specs are missing", k + 1);
      return false;
    }
  }
  if (desc->leaves) {
    for (uint32_t i = 0; i < desc->ninputs; i++) {
      int kind = desc->inputs[i].kind & TSAOT_SPEC_KIND_MASK;
      nleaves += kind != TSAOT_SPEC_NONE && kind != TSAOT_SPEC_LENGTH;
    }
    r = desc->ninputs;
  }
  if (r != desc->ninputs || (desc->leaves ? nleaves : m->nargs) != m->nparams - 1) {
    ts_aot_seterr(m->err, "the compiled graph takes %u inputs after self, the descriptor's %u specs say %u",
                  m->nparams - 1, desc->ninputs, desc->leaves ? nleaves : m->nargs);
    return false;
  }
  m->nvals = m->nparams + (desc->leaves ? m->nargs + 1 : 0);
  return true;
}

/* The failure of a step of init that left its reason in ctx. */
static bool ts_aot_init_fail(ts_rt_aot_model *m, const char *what) {
  ts_aot_seterr(m->err, "%s: %s", what, m->ctx.err.data && m->ctx.err.len ? m->ctx.err.data : "out of memory");
  return false;
}

static bool ts_aot_load(ts_rt_aot_model *m) {
  ts_rt_aot_desc *desc = m->desc;
  if (desc->abi != TS_RT_AOT_ABI) {
    ts_aot_seterr(m->err, "the model was compiled for runtime ABI %u, this runtime is ABI %d", desc->abi,
                  TS_RT_AOT_ABI);
    return false;
  }
  ts_diag d = {0};
  if (!ts_ops_init(&d)) {
    ts_diag_free(&d);
    ts_aot_seterr(m->err, "the op table does not parse");
    return false;
  }
  ts_diag_free(&d);
  ts_rt_kernels_init(NULL);
  ts_aot_ctx_init(m);
  if (!(m->graph = ts_aot_parse(m, "compiled", desc->graph, desc->graph_len)))
    return false;
  if (desc->fallback && !(m->fallback = ts_aot_parse(m, "fallback", desc->fallback, desc->fallback_len)))
    return false;
  if (desc->ntconsts_graph + (uint64_t)desc->ntconsts_fallback && !desc->tconsts) {
    ts_aot_seterr(m->err, "no weights table");
    return false;
  }
  if (!ts_aot_attach(m, m->graph, desc->tconsts, desc->ntconsts_graph, "compiled"))
    return false;
  if (m->fallback
          ? !ts_aot_attach(m, m->fallback, desc->tconsts + desc->ntconsts_graph, desc->ntconsts_fallback, "fallback")
          : desc->ntconsts_fallback != 0) {
    if (!m->err[0])
      ts_aot_seterr(m->err, "tensor constants for a fallback graph that is not there");
    return false;
  }
  m->nparams = ts_block_ninputs(m->graph->block);
  m->nrets = ts_block_noutputs(m->graph->block);
  if (!ts_aot_signature(m))
    return false;
  if (m->fallback && (ts_block_ninputs(m->fallback->block) != m->nargs + 1 ||
                       ts_block_noutputs(m->fallback->block) != m->nrets)) {
    ts_aot_seterr(m->err, "the fallback graph's inputs or outputs differ from the compiled graph's");
    return false;
  }
  ts_rt_resolver none = {0};
  if (!(m->ip = ts_rt_interp_new(&none))) {
    ts_aot_seterr(m->err, "out of memory");
    return false;
  }
  ts_rt_interp_set_constants(m->ip, ts_aot_const_value, m);
  if (desc->archive) {
    /* the graphs read the module: its own interpreter runs them */
    ts_diag md = {0};
    md.max_errors = 1;
    if (!desc->module_ops) {
      ts_aot_seterr(m->err, "the model embeds its module but names no loader (module_ops)");
      return false;
    }
    m->model = desc->module_ops->load(desc->archive, (size_t)desc->archive_len, desc->name, &md);
    if (!m->model) {
      ts_aot_seterr(m->err, "cannot load the embedded module: %s", md.text.data ? md.text.data : "?");
      ts_diag_free(&md);
      return false;
    }
    ts_diag_free(&md);
    ts_rt_clear_error(&m->ctx);
    m->serial = true; /* runs change the module's attributes */
    return true;
  }
  if (desc->entry) {
    uint32_t n = ts_rt_aot_number_nodes(m->graph, NULL);
    if (n != desc->nnodes) {
      ts_aot_seterr(m->err, "the compiled graph has %u nodes, the code expects %u", n, desc->nnodes);
      return false;
    }
    ts_node **order = ts_rt_malloc((n ? n : 1) * sizeof *order);
    m->nodes = ts_rt_calloc(n ? n : 1, sizeof *m->nodes);
    if (!order || !m->nodes) {
      ts_rt_free(order);
      ts_aot_seterr(m->err, "out of memory");
      return false;
    }
    ts_rt_aot_number_nodes(m->graph, order);
    bool ok = true;
    for (uint32_t k = 0; k < n && ok; k++) {
      ok = ts_aot_bind(m, &m->nodes[k], order[k]);
      m->nnodes = k + 1;
      if (!ok)
        ts_aot_init_fail(m, order[k]->kind_name);
    }
    ts_rt_free(order);
    if (!ok)
      return false;
  } else if (!ts_rt_interp_prepare(m->ip, &m->ctx, m->graph, NULL))
    return ts_aot_init_fail(m, "the compiled graph");
  if (m->fallback && !ts_rt_interp_prepare(m->ip, &m->ctx, m->fallback, NULL))
    return ts_aot_init_fail(m, "the fallback graph");
  ts_rt_clear_error(&m->ctx);
  /* runs would write the copies (in-place ops on constants, batch_norm's
   * running statistics in training mode), or the interpreter's caches */
  if (m->nwcopies || ts_aot_has_object_ops(m->graph->block) ||
      (m->fallback && ts_aot_has_object_ops(m->fallback->block)))
    m->serial = true;
  return true;
}

/* Init runs once per model, whichever thread calls first; one lock for
 * every model of the process, since init also fills process-wide tables
 * (the op table, the kernel registry) on first use. */
static pthread_mutex_t ts_aot_init_mu = PTHREAD_MUTEX_INITIALIZER;

/* The model, once init has published it (NULL before). */
static ts_rt_aot_model *ts_aot_model_of(const ts_rt_aot_desc *desc) {
  return __atomic_load_n(&desc->state, __ATOMIC_ACQUIRE);
}

/* Init for a call whose record is last: a failure's reason goes there. */
static int ts_aot_init(ts_rt_aot_desc *desc, ts_aot_last *last) {
  if (ts_aot_model_of(desc))
    return TSAOT_OK;
  pthread_mutex_lock(&ts_aot_init_mu);
  int rc = TSAOT_OK;
  if (!ts_aot_model_of(desc)) {
    /* the model outlives runs: the C library's, whatever heap is current */
    ts_rt_heap *prev = ts_rt_heap_use(NULL);
    ts_rt_aot_model *m = ts_rt_calloc(1, sizeof *m);
    if (!m) {
      ts_aot_seterr(last->err, "out of memory");
      rc = TSAOT_E_INIT;
    } else {
      m->desc = desc;
      m->nthreads = 1;
      m->err = last->err;
      pthread_mutex_init(&m->run_mu, NULL);
      pthread_mutex_init(&m->spare_mu, NULL);
      if (ts_aot_load(m)) {
        m->err = NULL;
        __atomic_store_n(&desc->state, m, __ATOMIC_RELEASE);
      } else {
        ts_aot_teardown(m);
        pthread_mutex_destroy(&m->run_mu);
        pthread_mutex_destroy(&m->spare_mu);
        ts_rt_free(m);
        rc = TSAOT_E_INIT;
      }
    }
    ts_rt_heap_use(prev);
  }
  pthread_mutex_unlock(&ts_aot_init_mu);
  return rc;
}

int ts_rt_aot_init(ts_rt_aot_desc *desc) {
  ts_aot_last spare;
  return ts_aot_init(desc, ts_aot_last_begin(desc, &spare));
}

void ts_rt_aot_release(ts_rt_aot_desc *desc) {
  pthread_mutex_lock(&ts_aot_init_mu);
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  if (m) {
    ts_rt_heap *prev = ts_rt_heap_use(NULL);
    ts_aot_teardown(m);
    pthread_mutex_destroy(&m->run_mu);
    pthread_mutex_destroy(&m->spare_mu);
    ts_rt_free(m);
    ts_rt_heap_use(prev);
    __atomic_store_n(&desc->state, NULL, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&ts_aot_init_mu);
}

/* ------------------------------------------------------------- queries */

int ts_rt_aot_num_inputs(ts_rt_aot_desc *desc) { return desc->signature ? desc->nslots : (int)desc->ninputs; }

int ts_rt_aot_num_outputs(ts_rt_aot_desc *desc) { return desc->noutputs; }

static void ts_aot_spec_out(const ts_rt_aot_spec *sp, tsaot_spec *out) {
  memset(out, 0, sizeof *out);
  int kind = sp->kind & TSAOT_SPEC_KIND_MASK;
  out->kind = sp->kind & (TSAOT_SPEC_KIND_MASK | TSAOT_SPEC_OPTIONAL);
  ts_dtype dt = kind == TSAOT_SPEC_INT     ? TS_DT_INT64
                : kind == TSAOT_SPEC_FLOAT ? TS_DT_FLOAT64
                : kind == TSAOT_SPEC_BOOL  ? TS_DT_BOOL
                                           : (ts_dtype)sp->dtype;
  if (kind != TSAOT_SPEC_NONE)
    out->dtype = ts_aot_dtype_to_dl(dt);
  bool shaped = kind == TSAOT_SPEC_TENSOR || kind >= TSAOT_SPEC_LENGTH;
  out->ndim = shaped ? sp->ndim : 0;
  out->shape = shaped ? sp->sizes : NULL;
}

int ts_rt_aot_input_spec(ts_rt_aot_desc *desc, int i, void *tsaot_spec_out) {
  if (i < 0 || (uint32_t)i >= desc->ninputs || !desc->inputs || !tsaot_spec_out)
    return TSAOT_E_INPUT;
  ts_aot_spec_out(&desc->inputs[i], tsaot_spec_out);
  return TSAOT_OK;
}

int ts_rt_aot_output_spec(ts_rt_aot_desc *desc, int i, void *tsaot_spec_out) {
  if (i < 0 || desc->noutputs < 0 || i >= desc->noutputs || !desc->outputs || !tsaot_spec_out)
    return TSAOT_E_OUTPUT;
  ts_aot_spec_out(&desc->outputs[i], tsaot_spec_out);
  return TSAOT_OK;
}

size_t ts_rt_aot_arena_size(ts_rt_aot_desc *desc) {
  /* the compiler's arena_heap includes a run's state (ts_rt_aot_call_bytes) */
  return (size_t)(ts_aot_round64(desc->arena_plan) + desc->arena_heap);
}

/* Not while runs go on: they borrow the pool this replaces. */
void ts_rt_aot_set_threads(ts_rt_aot_desc *desc, int n) {
  if (ts_rt_aot_init(desc) != TSAOT_OK)
    return;
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  if (n == m->nthreads)
    return;
  m->nthreads = n;
  ts_rt_heap *prev = ts_rt_heap_use(NULL);
  ts_rt_ctx_free(&m->ctx);
  ts_aot_ctx_init(m);
  ts_rt_heap_use(prev);
}

/* ----------------------------------------------------------- the device */

/* Back to the CPU: constants' device copies dropped (their host bytes made
 * current first: a graph may write its constants), the driver closed. */
static void ts_aot_gpu_off(ts_rt_aot_model *m) {
  if (!m->gpu)
    return;
  ts_rt_ctx c = {.nthreads = 1};
  for (uint32_t i = 0; i < m->nshared; i++)
    ts_rt_gpu_detach(m->gpu, &c, &m->shared[i]);
  for (uint32_t k = 0; k < m->nnodes; k++)
    ts_rt_gpu_detach(m->gpu, &c, &m->nodes[k].value);
  ts_buf_free(&c.err);
  ts_buf_free(&c.out);
  ts_rt_gpu_close(m->gpu);
  m->gpu = NULL;
  free(m->gpu_nodes);
  m->gpu_nodes = NULL;
}

int ts_rt_aot_set_device(ts_rt_aot_desc *desc, const void *image, const char *device) {
  ts_aot_last spare, *last = ts_aot_last_begin(desc, &spare);
  int rc = ts_aot_init(desc, last);
  if (rc != TSAOT_OK)
    return rc;
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  long ordinal = 0;
  char *end = NULL;
  if (device && !strcmp(device, "cpu")) {
    ts_aot_gpu_off(m);
    return TSAOT_OK;
  }
  if (!device || strncmp(device, "cuda", 4) ||
      (device[4] && (device[4] != ':' || !(device[5] >= '0' && device[5] <= '9') ||
                     (ordinal = strtol(device + 5, &end, 10), *end) || ordinal < 0 || ordinal > 1024))) {
    ts_aot_seterr(last->err, "device '%s': expected cpu, cuda or cuda:N", device ? device : "(NULL)");
    return TSAOT_E_DEVICE;
  }
  if (!image) {
    ts_aot_seterr(last->err, "%s was compiled without --device cuda: it has no GPU code", desc->name);
    return TSAOT_E_DEVICE;
  }
  /* the new device opened first: on failure the model stays where it was */
  ts_rt_heap *prev = ts_rt_heap_use(NULL);
  ts_node **nodes = malloc(((size_t)m->nnodes + 1) * sizeof *nodes);
  ts_rt_gpu *g = NULL;
  ts_buf err = {0};
  if (nodes) {
    for (uint32_t k = 0; k < m->nnodes; k++)
      nodes[k] = (ts_node *)m->nodes[k].n;
    g = ts_rt_gpu_open(image, (int)ordinal, nodes, m->nnodes, &err);
  } else
    ts_buf_printf(&err, "out of memory");
  if (g) {
    ts_aot_gpu_off(m);
    m->gpu = g;
    m->gpu_nodes = nodes;
  } else {
    ts_aot_seterr(last->err, "%s", err.data ? err.data : "out of memory");
    free(nodes);
    rc = TSAOT_E_DEVICE;
  }
  ts_rt_heap_use(prev);
  ts_buf_free(&err);
  return rc;
}

int ts_rt_aot_device_stats(ts_rt_aot_desc *desc, void *tsaot_device_stats_out) {
  tsaot_device_stats *o = tsaot_device_stats_out;
  if (!o)
    return TSAOT_E_INPUT;
  memset(o, 0, sizeof *o);
  o->device_type = kDLCPU;
  o->description = "cpu";
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  if (!m || !m->gpu)
    return TSAOT_OK;
  ts_rt_gpu_get_stats(m->gpu, o);
  return TSAOT_OK;
}

const char *ts_rt_aot_last_error(ts_rt_aot_desc *desc) {
  const ts_aot_last *l = ts_aot_last_of(desc, false);
  return l ? l->err : "";
}

int ts_rt_aot_last_bailout(ts_rt_aot_desc *desc) {
  const ts_aot_last *l = ts_aot_last_of(desc, false);
  return l ? l->bailout : 0;
}

int ts_rt_aot_profile(ts_rt_aot_desc *desc, int enable) {
  int rc = ts_rt_aot_init(desc);
  if (rc != TSAOT_OK)
    return rc;
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  ts_rt_profile_clear(&m->prof);
  m->profiling = enable != 0;
  m->prof.trace = enable == 2;
  return TSAOT_OK;
}

int ts_rt_aot_profile_rows(ts_rt_aot_desc *desc, tsaot_profile_row *rows, int max) {
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  if (!m || max < 0 || (max && !rows))
    return 0;
  const ts_rt_profile *p = &m->prof;
  /* the strings first (the buffer moves as it grows), then the rows;
   * tracing, one row per event (include/tsaot.h) */
  m->prof_text.len = 0;
  uint32_t n = p->trace ? p->nevents : p->nentries;
  size_t *at = malloc(((size_t)n + 1) * 2 * sizeof *at);
  if (!at)
    return 0;
  for (uint32_t i = 0; i < n; i++) {
    const ts_node *nd = p->trace ? p->events[i].node : p->entries[i].node;
    at[2 * i] = m->prof_text.len;
    ts_buf_puts(&m->prof_text, nd->kind_name);
    ts_buf_putc(&m->prof_text, 0);
    at[2 * i + 1] = m->prof_text.len;
    if (p->trace)
      ts_rt_profile_event_detail(p, i, &m->prof_text);
    else
      ts_rt_profile_describe(nd, &m->prof_text);
    ts_buf_putc(&m->prof_text, 0);
  }
  if (m->prof_text.failed) {
    free(at);
    return 0;
  }
  for (uint32_t i = 0; i < n && (int)i < max; i++) {
    const ts_rt_prof_entry *e = p->trace ? NULL : &p->entries[i];
    const ts_rt_prof_event *v = p->trace ? &p->events[i] : NULL;
    rows[i] = (tsaot_profile_row){.op = m->prof_text.data + at[2 * i],
                                  .detail = m->prof_text.data + at[2 * i + 1],
                                  .native = e ? e->native : v->native,
                                  .calls = e ? e->calls : v->start,
                                  .ns = e ? e->ns : v->ns};
  }
  free(at);
  return (int)n;
}

/* ----------------------------------------------------------------- guard */

static const char *ts_aot_dt_short(ts_dtype dt) {
  switch (dt) {
  case TS_DT_BOOL: return "bool";
  case TS_DT_UINT8: return "u8";
  case TS_DT_INT8: return "i8";
  case TS_DT_INT16: return "i16";
  case TS_DT_INT32: return "i32";
  case TS_DT_INT64: return "i64";
  case TS_DT_FLOAT16: return "f16";
  case TS_DT_BFLOAT16: return "bf16";
  case TS_DT_FLOAT32: return "f32";
  case TS_DT_FLOAT64: return "f64";
  case TS_DT_COMPLEX64: return "c64";
  case TS_DT_COMPLEX128: return "c128";
  default: return "?";
  }
}

/* Appends to a fixed buffer, truncating. */
typedef struct ts_aot_text {
  char *p;
  size_t cap, len;
} ts_aot_text;

static void ts_aot_put(ts_aot_text *t, const char *fmt, ...) TS_PRINTF(2, 3);
static void ts_aot_put(ts_aot_text *t, const char *fmt, ...) {
  if (t->len + 1 >= t->cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

/* "f32[1,3,224,224]" ("?" for a size the code does not fix). */
static void ts_aot_put_shape(ts_aot_text *t, ts_dtype dt, int32_t ndim, const int64_t *sizes) {
  ts_aot_put(t, "%s", ts_aot_dt_short(dt));
  if (ndim < 0) {
    ts_aot_put(t, "[...]");
    return;
  }
  ts_aot_put(t, "[");
  for (int32_t d = 0; d < ndim; d++) {
    if (sizes[d] < 0)
      ts_aot_put(t, "%s?", d ? "," : "");
    else
      ts_aot_put(t, "%s%lld", d ? "," : "", (long long)sizes[d]);
  }
  ts_aot_put(t, "]");
}

static const char *const ts_aot_kind_names[] = {"a tensor", "an int", "a float", "a bool",
                                                 "None",     "a list", "a str",   "a list of numbers"};

static void ts_aot_put_spec(ts_aot_text *t, const ts_rt_aot_spec *sp) {
  int kind = sp->kind & TSAOT_SPEC_KIND_MASK;
  if (kind == TSAOT_SPEC_TENSOR)
    ts_aot_put_shape(t, (ts_dtype)sp->dtype, sp->ndim, sp->sizes);
  else if (kind == TSAOT_SPEC_LENGTH && sp->sizes && sp->sizes[0] >= 0)
    ts_aot_put(t, "a list of %lld", (long long)sp->sizes[0]);
  else
    ts_aot_put(t, "%s", kind < 8 ? ts_aot_kind_names[kind] : "?");
}

static void ts_aot_put_value(ts_aot_text *t, ts_iv v) {
  if (v.tag == TS_IV_TENSOR)
    ts_aot_put_shape(t, (ts_dtype)v.u.t->dtype, v.u.t->ndim, v.u.t->sizes);
  else if (v.tag == TS_IV_NONE)
    ts_aot_put(t, "None");
  else if (v.tag == TS_IV_LIST)
    ts_aot_put(t, "a list of %u", v.u.l->n);
  else
    ts_aot_put(t, "%s %s", v.tag == TS_IV_INT ? "an" : "a", ts_iv_tag_name(v));
}

/* Whether an argument's slot is the argument itself (a tensor or a number,
 * as in ABI 1): messages then name the slot only. */
static bool ts_aot_plain(const ts_type *ty) {
  return ty->kind != TS_TY_OPTIONAL && ty->kind != TS_TY_STR && ts_rt_io_leaf(ty);
}

/* "input 3" or "input 3 (xs[1])": the slot, and where it is in its
 * argument unless the argument is plain. */
static void ts_aot_put_input(ts_aot_text *t, const ts_rt_aot_model *m, uint32_t slot, uint32_t arg,
                             const uint32_t *idx, uint32_t depth) {
  ts_aot_put(t, "input %u", (unsigned)slot);
  if (arg < m->nargs && !ts_aot_plain(m->argtypes[arg])) {
    char path[128];
    ts_rt_io_path(path, sizeof path, m->argnames[arg], arg, idx, depth);
    ts_aot_put(t, " (%s)", path);
  }
}

/* The guard's walk over the input specs (desc->inputs) with the values of
 * the arguments: the slot, spec and place of the value in hand. */
typedef struct ts_aot_guard {
  ts_rt_aot_state *st;
  const ts_rt_aot_spec *specs;
  uint32_t nspecs, r, slot, arg, depth;
  uint32_t idx[TS_RT_IO_MAX_DEPTH + 1];
} ts_aot_guard;

/* A mismatch: the reason in st->why ("input 0: expected f32[4,16], got
 * f32[2,16]"); `sp` NULL for a list of the wrong length. */
static bool ts_aot_off(ts_aot_guard *g, const ts_rt_aot_spec *sp, ts_iv v, int64_t want_len) {
  ts_aot_text t = {.p = g->st->why, .cap = sizeof g->st->why};
  ts_aot_put_input(&t, g->st->m, g->slot, g->arg, g->idx, g->depth);
  if (!sp) {
    ts_aot_put(&t, ": expected a list of %lld, got %u", (long long)want_len, v.u.l->n);
    return false;
  }
  ts_aot_put(&t, ": expected ");
  if (sp == g->specs + g->nspecs)
    ts_aot_put(&t, "no more inputs");
  else
    ts_aot_put_spec(&t, sp);
  ts_aot_put(&t, ", got ");
  ts_aot_put_value(&t, v);
  return false;
}

/* Whether a leaf's value (a tensor, a number, a str; not None) matches its
 * spec: a tensor's dtype and sizes (the others are what their types say). */
static bool ts_aot_match_leaf(const ts_rt_aot_spec *sp, ts_iv v) {
  if ((sp->kind & TSAOT_SPEC_KIND_MASK) != TSAOT_SPEC_TENSOR)
    return true;
  const ts_rt_tensor *t = v.u.t;
  /* TS_DT_NONE: code compiled without examples takes any dtype */
  bool ok = v.tag == TS_IV_TENSOR && (sp->dtype == TS_DT_NONE || t->dtype == sp->dtype) &&
            (sp->ndim < 0 || sp->ndim == t->ndim);
  for (int32_t d = 0; ok && sp->ndim >= 0 && d < sp->ndim; d++)
    ok = sp->sizes[d] < 0 || sp->sizes[d] == t->sizes[d];
  return ok;
}

/* Whether value v (of type ty) matches the specs from g->r on, which it
 * then steps over, as it does its slots. */
static bool ts_aot_match(ts_aot_guard *g, ts_iv v, const ts_type *ty) {
  if (g->r >= g->nspecs || g->depth > TS_RT_IO_MAX_DEPTH)
    return ts_aot_off(g, g->specs + g->nspecs, v, 0);
  const ts_rt_aot_spec *sp = &g->specs[g->r];
  int kind = sp->kind & TSAOT_SPEC_KIND_MASK;
  while (ty->kind == TS_TY_OPTIONAL)
    ty = ty->elems[0];
  if (kind == TSAOT_SPEC_NONE || v.tag == TS_IV_NONE) {
    bool ok = v.tag == TS_IV_NONE && (kind == TSAOT_SPEC_NONE || (sp->kind & TS_RT_AOT_SPEC_OPEN));
    if (!ok)
      return ts_aot_off(g, sp, v, 0);
    g->r += kind == TSAOT_SPEC_NONE ? 1 : ts_rt_io_template_slots(ty);
    g->slot++;
    return true;
  }
  if (ts_rt_io_leaf(ty)) {
    if (!ts_aot_match_leaf(sp, v))
      return ts_aot_off(g, sp, v, 0);
    g->r++;
    g->slot++;
    return true;
  }
  uint32_t d = g->depth++;
  bool ok = true;
  if (ty->kind == TS_TY_TUPLE) {
    for (uint32_t i = 0; i < ty->n && ok; i++) {
      g->idx[d] = i;
      ok = ts_aot_match(g, v.u.tup->items[i], ty->elems[i]);
    }
  } else {
    /* a list: its length, then its elements */
    int64_t len = kind == TSAOT_SPEC_LENGTH && sp->sizes ? sp->sizes[0] : -1;
    g->depth = d;
    if (kind != TSAOT_SPEC_LENGTH)
      return ts_aot_off(g, sp, v, 0);
    if (len >= 0 && (uint64_t)len != v.u.l->n)
      return ts_aot_off(g, NULL, v, len);
    g->depth = d + 1;
    g->r++;
    g->slot++;
    uint32_t first = g->r, each = ts_rt_io_template_slots(ty->elems[0]);
    for (uint32_t i = 0; i < v.u.l->n && ok; i++) {
      g->idx[d] = i;
      if (len < 0)
        g->r = first;
      ok = ts_aot_match(g, v.u.l->items[i], ty->elems[0]);
    }
    if (ok && len < 0)
      g->r = first + each;
  }
  g->depth = d;
  return ok;
}

/* ------------------------------------------------------------------ runs */

static size_t ts_aot_round16(size_t n) { return (n + 15) & ~(size_t)15; }

uint64_t ts_rt_aot_call_bytes(uint32_t nparams, uint32_t nrets) {
  return ts_aot_round64(ts_aot_round16(sizeof(ts_rt_aot_state)) + ((uint64_t)nparams + nrets) * sizeof(ts_iv) +
                        2 * (uint64_t)TS_AOT_CTX_TEXT);
}

/* Lays out a run's state over mem (ts_rt_aot_call_bytes(m->nvals,
 * m->nrets) bytes, 16-byte aligned): its ctx's text in fixed buffers there,
 * so that a run's errors and prints never reach the C library. */
static ts_rt_aot_state *ts_aot_state_init(ts_rt_aot_model *m, void *mem) {
  ts_rt_aot_state *st = mem;
  memset(st, 0, sizeof *st);
  st->m = m;
  st->args = (ts_iv *)((char *)mem + ts_aot_round16(sizeof *st));
  st->rets = st->args + m->nparams;
  st->dargs = m->desc->leaves ? st->rets + m->nrets : st->args;
  char *text = (char *)(st->args + m->nvals + m->nrets);
  for (uint32_t i = 0; i < m->nvals + m->nrets; i++)
    st->args[i] = ts_iv_none();
  st->ctx.err = (ts_buf){.data = text, .cap = TS_AOT_CTX_TEXT, .fixed = true};
  st->ctx.out = (ts_buf){.data = text + TS_AOT_CTX_TEXT, .cap = TS_AOT_CTX_TEXT, .fixed = true};
  text[0] = text[TS_AOT_CTX_TEXT] = 0;
  st->ctx.pool_borrowed = true;
  st->ctx.nthreads = 1;
  return st;
}

/* A state for NAME_run: a spare one, or a new one from the C library. */
static ts_rt_aot_state *ts_aot_state_take(ts_rt_aot_model *m) {
  ts_rt_aot_state *st = __atomic_exchange_n(&m->spare1, NULL, __ATOMIC_ACQUIRE);
  if (st)
    return st;
  pthread_mutex_lock(&m->spare_mu);
  st = m->spare;
  if (st)
    m->spare = st->next;
  pthread_mutex_unlock(&m->spare_mu);
  if (st)
    return st;
  void *mem = calloc(1, (size_t)ts_rt_aot_call_bytes(m->nvals, m->nrets));
  return mem ? ts_aot_state_init(m, mem) : NULL;
}

static void ts_aot_state_give(ts_rt_aot_model *m, ts_rt_aot_state *st) {
  ts_rt_aot_state *none = NULL;
  if (__atomic_compare_exchange_n(&m->spare1, &none, st, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    return;
  pthread_mutex_lock(&m->spare_mu);
  st->next = m->spare;
  m->spare = st;
  pthread_mutex_unlock(&m->spare_mu);
}

/* The start of a call on st: the model's threads and pool, nothing left of
 * the last call, its error text in the calling thread's record. */
static void ts_aot_state_begin(ts_rt_aot_state *st, ts_aot_last *last) {
  ts_rt_aot_model *m = st->m;
  ts_rt_ctx *c = &st->ctx;
  ts_rt_clear_error(c);
  c->out.len = 0;
  c->out.failed = false;
  c->out.data[0] = 0;
  c->nthreads = m->ctx.nthreads;
  c->pool = m->ctx.pool;
  c->plan_ptr = NULL;
  c->plan_nbytes = 0;
  c->profile = m->profiling ? &m->prof : NULL;
  st->bailout = 0;
  st->fail_node = -1;
  st->err = last->err;
  st->why[0] = 0;
}

/* args, rets and (desc->leaves) dargs are one array */
static void ts_aot_clear_values(ts_rt_aot_state *st) {
  for (uint32_t i = 0; i < st->m->nvals + st->m->nrets; i++)
    ts_iv_clear(&st->args[i]);
}

/* The message of the run's error. */
static void ts_aot_run_error(ts_rt_aot_state *st) {
  ts_rt_ctx *c = &st->ctx;
  const char *msg = c->err.data && c->err.len ? c->err.data : "the model failed";
  ts_aot_text t = {.p = st->err, .cap = TS_AOT_ERR_CAP};
  const ts_node *n = st->fail_node >= 0 && (uint64_t)st->fail_node < st->m->nnodes ? st->m->nodes[st->fail_node].n
                                                                                     : NULL;
  /* the node's source place as the interpreter gives it (the source line
   * itself is not at hand), else its kind */
  if (n && n->loc.file)
    ts_aot_put(&t, "%s:%d:%d: error: ", n->loc.file, (int)n->loc.line, (int)n->loc.col);
  else if (n)
    ts_aot_put(&t, "%s: ", n->kind_name);
  if (c->exc_class)
    ts_aot_put(&t, "%s: ", c->exc_class);
  ts_aot_put(&t, "%s", msg);
  if (st->bailout)
    ts_aot_put(&t, " (in the interpreter, after a bailout: %s)", st->why);
}

/* Converts and checks the inputs, then runs the entry function or the
 * interpreter; the results are left in st->rets. */
/* A kDLCUDA input of a run on the GPU: checked as a CPU tensor would be,
 * then used in place (gpu.c); a number's 0-d tensor comes to the host. */
static ts_rt_tensor *ts_aot_gpu_input(ts_rt_aot_model *m, ts_rt_ctx *c, const DLTensor *dl, const ts_type *ty) {
  DLTensor h = *dl;
  h.device.device_type = kDLCPU;
  char why[256];
  ts_dtype dt;
  uint64_t nbytes;
  if (!ts_aot_dl_check(&h, &dt, &nbytes, why, sizeof why)) {
    ts_rt_fail(c, "%s", why);
    return NULL;
  }
  ts_rt_tensor *t = ts_rt_gpu_tensor_from_dl(m->gpu, c, dl, dt);
  if (t && ty->kind != TS_TY_TENSOR) {
    ts_iv v = ts_iv_tensor(t);
    if (!ts_rt_gpu_iv_to_host(m->gpu, c, &v)) {
      ts_rt_tensor_release(t);
      return NULL;
    }
  }
  return t;
}

/* What ts_rt_io_args reads slots from: the caller's DLTensors. */
typedef struct ts_aot_slots {
  ts_rt_aot_model *m;
  const DLTensor *in;
} ts_aot_slots;

static ts_rt_tensor *ts_aot_slot(void *arg, ts_rt_ctx *c, uint32_t i, const ts_type *as, bool *none) {
  ts_aot_slots *s = arg;
  const DLTensor *dl = &s->in[i];
  if (!dl->data && dl->ndim == -1) { /* TSAOT_NONE */
    *none = true;
    return NULL;
  }
  if (!as)
    return NULL;
  if (s->m->gpu && dl->device.device_type == kDLCUDA)
    return ts_aot_gpu_input(s->m, c, dl, as);
  return ts_rt_tensor_from_dl(c, dl);
}

/* Converts and checks the inputs, then runs the entry function or the
 * interpreter; the results are left in st->rets. */
static int ts_aot_exec(ts_rt_aot_state *st, const DLTensor *inputs, int ninputs) {
  ts_rt_aot_model *m = st->m;
  ts_rt_aot_desc *desc = m->desc;
  ts_rt_ctx *c = &st->ctx;
  int nslots = ts_rt_aot_num_inputs(desc);
  if (ninputs < 0 || (ninputs && !inputs) || (m->fixed && ninputs != nslots)) {
    if (ninputs > 0 && !inputs)
      ts_aot_seterr(st->err, "the inputs are NULL (%d given)", ninputs);
    else
      ts_aot_seterr(st->err, "the model takes %d inputs, %d given", nslots, ninputs);
    return TSAOT_E_INPUT;
  }
  /* the arguments, by their types (errors here are the caller's, whatever
   * the specialisation), then the guard */
  ts_aot_slots src = {.m = m, .in = inputs};
  st->dargs[0] = ts_iv_none();
  bool match = true, fast = m->fixed;
  if (fast) {
    /* every argument one slot of its own, as in ABI 1: slot by slot (an
     * error is read again below, for its message) */
    for (uint32_t i = 0; i < m->nargs && fast; i++) {
      bool none = false;
      ts_rt_tensor *t = ts_aot_slot(&src, c, i, m->argtypes[i], &none);
      fast = t && ts_rt_io_arg(c, t, m->argtypes[i], &st->dargs[i + 1]);
      if (t)
        ts_rt_tensor_release(t);
    }
    if (!fast) {
      ts_aot_clear_values(st);
      ts_rt_clear_error(c);
    }
  }
  if (fast) {
    for (uint32_t i = 0; i < m->nargs && match; i++)
      if (!(match = ts_aot_match_leaf(&desc->inputs[i], st->dargs[i + 1]))) {
        ts_aot_text t = {.p = st->why, .cap = sizeof st->why};
        ts_aot_put(&t, "input %u: expected ", (unsigned)i);
        ts_aot_put_spec(&t, &desc->inputs[i]);
        ts_aot_put(&t, ", got ");
        ts_aot_put_value(&t, st->dargs[i + 1]);
      }
  } else {
    ts_rt_io_where w;
    if (!ts_rt_io_args(c, m->argtypes, m->nargs, (uint32_t)ninputs, ts_aot_slot, &src, st->dargs + 1, &w)) {
      ts_aot_text t = {.p = st->err, .cap = TS_AOT_ERR_CAP};
      if (w.arg < m->nargs)
        ts_aot_put_input(&t, m, w.slot, w.arg, w.idx, w.depth);
      ts_aot_put(&t, "%s%s", w.arg < m->nargs ? ": " : "", c->err.data && c->err.len ? c->err.data : "out of memory");
      ts_aot_clear_values(st);
      return TSAOT_E_INPUT;
    }
    ts_aot_guard g;
    g.st = st;
    g.specs = desc->inputs;
    g.nspecs = desc->ninputs;
    g.r = g.slot = g.depth = 0;
    for (uint32_t k = 0; k < m->nargs && match; k++) {
      g.arg = k;
      match = ts_aot_match(&g, st->dargs[k + 1], m->argtypes[k]);
    }
  }
  bool ok = true;
  if (match && desc->leaves) {
    uint32_t n = 1;
    st->args[0] = ts_iv_none();
    for (uint32_t k = 0; k < m->nargs && ok; k++)
      ok = ts_rt_io_leaves(st->dargs[k + 1], m->argtypes[k], st->args, m->nparams, &n);
    if (!ok || n != m->nparams) {
      for (uint32_t i = 0; i < m->nparams; i++)
        st->args[i] = ts_iv_none();
      ts_aot_seterr(st->err, "the inputs' leaves do not fit the compiled graph's %u inputs", m->nparams - 1);
      ts_aot_clear_values(st);
      return TSAOT_E_INPUT;
    }
    for (uint32_t i = 1; i < m->nparams; i++)
      ts_iv_retain(st->args[i]);
  }
  ts_iv *args = match ? st->args : st->dargs;
  uint32_t nargs = match ? m->nparams : m->nargs + 1;
  /* only the entry function's path keeps tensors on the GPU */
  if (m->gpu && !(match && desc->entry && !m->model))
    for (uint32_t i = 1; i < nargs && ok; i++)
      ok = ts_rt_gpu_iv_to_host(m->gpu, c, &args[i]);
  if (!ok) {
  } else if (m->model && (match || m->fallback)) {
    st->bailout = !match;
    ok = desc->module_ops->run_graph(m->model, c, "forward", match ? m->graph : m->fallback, args + 1, nargs - 1,
                                     st->rets, NULL);
  } else if (match && desc->entry) {
    ok = desc->entry(st, c, args, st->rets);
  } else if (match) {
    ok = ts_rt_interp_run(m->ip, c, m->graph, args, nargs, st->rets, NULL);
  } else if (m->fallback) {
    st->bailout = 1;
    ok = ts_rt_interp_run(m->ip, c, m->fallback, args, nargs, st->rets, NULL);
  } else {
    memcpy(st->err, st->why, TS_AOT_ERR_CAP);
    ts_aot_clear_values(st);
    return TSAOT_E_INPUT;
  }
  c->plan_ptr = NULL;
  c->plan_nbytes = 0;
  for (uint32_t i = 0; i < m->nparams; i++)
    ts_iv_clear(&st->args[i]);
  if (desc->leaves)
    for (uint32_t i = 0; i < m->nargs + 1; i++)
      ts_iv_clear(&st->dargs[i]);
  /* results leave as host tensors, their device copies dropped */
  for (uint32_t i = 0; m->gpu && ok && i < m->nrets; i++)
    ok = ts_rt_gpu_detach(m->gpu, c, &st->rets[i]);
  if (!ok) {
    ts_aot_run_error(st);
    ts_aot_clear_values(st);
    return TSAOT_E_RUN;
  }
  if (st->bailout)
    memcpy(st->err, st->why, TS_AOT_ERR_CAP);
  return TSAOT_OK;
}

/* A result handed to the caller: the runtime tensor it keeps alive. */
typedef struct ts_aot_managed {
  DLManagedTensor m;
  ts_rt_tensor *t;
} ts_aot_managed;

static void ts_aot_managed_delete(DLManagedTensor *self) {
  ts_aot_managed *b = self->manager_ctx;
  ts_rt_tensor_release(b->t);
  ts_rt_free(b);
}

typedef struct ts_aot_collect {
  ts_rt_aot_state *st;
  DLManagedTensor **outs;
  int max, n;
} ts_aot_collect;

/* One flattened output as a DLManagedTensor owning contiguous memory of its
 * own (a result may view the caller's input or the weights: it is copied). */
static bool ts_aot_collect_one(void *arg, ts_rt_tensor *t, ts_iv v) {
  (void)v;
  ts_aot_collect *col = arg;
  ts_rt_ctx *c = &col->st->ctx;
  if (!t)
    return true; /* no array form (a str, an object) */
  if (col->n >= col->max) {
    col->n++;
    return true;
  }
  ts_rt_tensor *own;
  if (!t->storage->free_fn && ts_rt_tensor_is_contiguous(t)) {
    ts_rt_tensor_retain(t);
    own = t;
  } else {
    own = ts_rt_tensor_new(c, (ts_dtype)t->dtype, t->ndim, t->sizes, false);
    if (own && !ts_rt_tensor_copy_(c, own, t)) {
      ts_rt_tensor_release(own);
      own = NULL;
    }
  }
  if (!own)
    return false;
  ts_aot_managed *b = ts_rt_calloc(1, sizeof *b);
  if (!b) {
    ts_rt_tensor_release(own);
    return ts_rt_oom(c);
  }
  b->t = own;
  ts_rt_tensor_to_dl(own, &b->m.dl_tensor);
  b->m.manager_ctx = b;
  b->m.deleter = ts_aot_managed_delete;
  col->outs[col->n++] = &b->m;
  return true;
}

static int ts_aot_rets_fail(ts_rt_aot_state *st, int rc, const char *what) {
  ts_aot_seterr(st->err, "%s: %s", what, st->ctx.err.data && st->ctx.err.len ? st->ctx.err.data : "out of memory");
  return rc;
}

/* NAME_run on st (the caller's heap is the C library's): the flattened
 * results as new DLManagedTensors. */
static int ts_aot_run_on(ts_rt_aot_state *st, const DLTensor *inputs, int ninputs, DLManagedTensor **outputs,
                         int max_outputs, int *noutputs) {
  ts_rt_aot_desc *desc = st->m->desc;
  if (desc->arena_plan && !st->plan) {
    st->plan = aligned_alloc(64, (size_t)ts_aot_round64(desc->arena_plan));
    if (!st->plan) {
      ts_aot_seterr(st->err, "out of memory (the model's %llu-byte arena)", (unsigned long long)desc->arena_plan);
      return TSAOT_E_RUN;
    }
  }
  st->head.arena = st->plan;
  int rc = ts_aot_exec(st, inputs, ninputs);
  if (rc != TSAOT_OK)
    return rc;
  ts_aot_collect col = {.st = st, .outs = outputs, .max = max_outputs};
  bool ok = true;
  for (uint32_t i = 0; i < st->m->nrets && ok; i++)
    ok = ts_rt_io_flatten(&st->ctx, st->rets[i], ts_aot_collect_one, &col);
  ts_aot_clear_values(st);
  int made = col.n < col.max ? col.n : col.max;
  if (!ok || col.n > col.max) {
    for (int i = 0; i < made; i++)
      outputs[i]->deleter(outputs[i]);
    if (!ok)
      return ts_aot_rets_fail(st, TSAOT_E_RUN, "the outputs");
    ts_aot_seterr(st->err, "the model gave %d outputs, room for %d", col.n, max_outputs);
    return TSAOT_E_OUTPUT;
  }
  *noutputs = made;
  return TSAOT_OK;
}

int ts_rt_aot_run(ts_rt_aot_desc *desc, const DLTensor *inputs, int ninputs, DLManagedTensor **outputs,
                  int max_outputs, int *noutputs) {
  ts_aot_last spare, *last = ts_aot_last_begin(desc, &spare);
  if (noutputs)
    *noutputs = 0;
  if (!outputs || !noutputs || max_outputs < 0) {
    ts_aot_seterr(last->err, "%s", !outputs      ? "the outputs array is NULL"
                                    : !noutputs ? "noutputs is NULL"
                                                : "max_outputs is negative");
    return TSAOT_E_OUTPUT;
  }
  int rc = ts_aot_init(desc, last);
  if (rc != TSAOT_OK)
    return rc;
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  /* the state and the results outlive the call: the C library's, whatever
   * heap is current */
  ts_rt_heap *prev = ts_rt_heap_use(NULL);
  ts_rt_aot_state *st = ts_aot_state_take(m);
  if (!st) {
    ts_rt_heap_use(prev);
    ts_aot_seterr(last->err, "out of memory (a run's state)");
    return TSAOT_E_RUN;
  }
  ts_aot_state_begin(st, last);
  ts_rt_gpu *gpu = m->gpu;
  ts_buf gerr = {0};
  if (gpu && !ts_rt_gpu_lock(gpu, &gerr)) {
    ts_aot_seterr(st->err, "%s", gerr.data ? gerr.data : "the GPU");
    rc = TSAOT_E_DEVICE;
  } else {
    if (m->serial)
      pthread_mutex_lock(&m->run_mu);
    rc = ts_aot_run_on(st, inputs, ninputs, outputs, max_outputs, noutputs);
    if (m->serial)
      pthread_mutex_unlock(&m->run_mu);
    if (gpu)
      ts_rt_gpu_unlock(gpu);
  }
  ts_buf_free(&gerr);
  last->bailout = st->bailout;
  ts_aot_state_give(m, st);
  ts_rt_heap_use(prev);
  return rc;
}

typedef struct ts_aot_copyout {
  ts_rt_aot_state *st;
  DLTensor *outs;
  int max, n;
  bool bad;
} ts_aot_copyout;

/* Copies one flattened output into the caller's tensor of the same index
 * (checked by ts_aot_dl_check before the run). */
static bool ts_aot_copy_one(void *arg, ts_rt_tensor *t, ts_iv v) {
  (void)v;
  ts_aot_copyout *co = arg;
  ts_rt_aot_state *st = co->st;
  if (!t)
    return true;
  int i = co->n++;
  if (i >= co->max || co->bad)
    return true;
  DLTensor *dl = &co->outs[i];
  ts_dtype dt;
  bool same = ts_aot_dtype_from_dl(dl->dtype, &dt) && dt == t->dtype && dl->ndim == t->ndim;
  for (int32_t d = 0; same && d < t->ndim; d++)
    same = dl->shape[d] == t->sizes[d];
  if (!same) {
    ts_aot_text x = {.p = st->err, .cap = TS_AOT_ERR_CAP};
    ts_aot_put(&x, "output %d: the result is ", i);
    ts_aot_put_shape(&x, (ts_dtype)t->dtype, t->ndim, t->sizes);
    ts_aot_put(&x, ", the caller's tensor ");
    ts_aot_put_shape(&x, dt, dl->ndim, dl->shape);
    co->bad = true;
    return true;
  }
  ts_rt_tensor *dst = ts_rt_tensor_from_dl(&st->ctx, dl);
  bool ok = dst && ts_rt_tensor_copy_(&st->ctx, dst, t);
  if (dst)
    ts_rt_tensor_release(dst);
  return ok;
}

/* run_static on st, with the arena's heap current. */
static int ts_aot_run_static_on(ts_rt_aot_state *st, const DLTensor *inputs, int ninputs, DLTensor *outputs,
                                int noutputs) {
  int rc = ts_aot_exec(st, inputs, ninputs);
  if (rc == TSAOT_OK) {
    ts_aot_copyout co = {.st = st, .outs = outputs, .max = noutputs};
    bool ok = true;
    for (uint32_t i = 0; i < st->m->nrets && ok; i++)
      ok = ts_rt_io_flatten(&st->ctx, st->rets[i], ts_aot_copy_one, &co);
    if (!ok) {
      rc = ts_aot_rets_fail(st, TSAOT_E_RUN, "the outputs");
    } else if (co.bad) {
      rc = TSAOT_E_OUTPUT;
    } else if (co.n != noutputs) {
      ts_aot_seterr(st->err, "the model gave %d outputs, %d tensors given", co.n, noutputs);
      rc = TSAOT_E_OUTPUT;
    }
  }
  ts_aot_clear_values(st);
  return rc;
}

int ts_rt_aot_run_static(ts_rt_aot_desc *desc, const DLTensor *inputs, int ninputs, DLTensor *outputs,
                         int noutputs, void *arena, size_t arena_size) {
  ts_aot_last spare, *last = ts_aot_last_begin(desc, &spare);
  int rc = ts_aot_init(desc, last);
  if (rc != TSAOT_OK)
    return rc;
  ts_rt_aot_model *m = ts_aot_model_of(desc);
  if (m->gpu) {
    ts_aot_seterr(last->err, "run_static runs on the CPU only: call %s_set_device(\"cpu\") first, or use %s_run",
                  desc->name, desc->name);
    return TSAOT_E_DEVICE;
  }
  if (m->model) {
    /* the module's methods are compiled on first use and would land in
     * the arena */
    ts_aot_seterr(last->err, "this model reads or writes its module's state, which run_static cannot do; use %s_run",
                  desc->name);
    return TSAOT_E_INPUT;
  }
  size_t need = ts_rt_aot_arena_size(desc), plan = (size_t)ts_aot_round64(desc->arena_plan);
  size_t call = (size_t)ts_rt_aot_call_bytes(m->nvals, m->nrets);
  if (!arena || (uintptr_t)arena % TSAOT_ARENA_ALIGN) {
    ts_aot_seterr(last->err, "the arena %s", arena ? "is not 64-byte aligned" : "is NULL");
    return TSAOT_E_ARENA;
  }
  if (arena_size < need || arena_size - plan < call) {
    ts_aot_seterr(last->err, "the arena has %zu bytes, the model needs %zu", arena_size,
                  need > plan + call ? need : plan + call);
    return TSAOT_E_ARENA;
  }
  if (noutputs < 0 || (noutputs && !outputs)) {
    ts_aot_seterr(last->err, noutputs < 0 ? "%d output tensors given" : "the outputs are NULL (%d given)", noutputs);
    return TSAOT_E_OUTPUT;
  }
  for (int i = 0; i < noutputs; i++) {
    char why[TS_AOT_ERR_CAP];
    ts_dtype dt;
    uint64_t nbytes;
    if (!ts_aot_dl_check(&outputs[i], &dt, &nbytes, why, sizeof why)) {
      ts_aot_seterr(last->err, "output %d: %s", i, why);
      return TSAOT_E_OUTPUT;
    }
  }
  /* the arena: the plan, this run's state, the heap */
  ts_rt_aot_state *st = ts_aot_state_init(m, (uint8_t *)arena + plan);
  ts_rt_heap *heap = ts_rt_heap_init((uint8_t *)arena + plan + call, arena_size - plan - call);
  if (!heap) {
    ts_aot_seterr(last->err, "the arena has no room for its heap (%zu bytes after the plan and the run's state)",
                  arena_size - plan - call);
    return TSAOT_E_ARENA;
  }
  ts_aot_state_begin(st, last);
  ts_rt_heap *prev = ts_rt_heap_use(heap);
  st->head.arena = arena;
  if (m->serial)
    pthread_mutex_lock(&m->run_mu);
  rc = ts_aot_run_static_on(st, inputs, ninputs, outputs, noutputs);
  if (m->serial)
    pthread_mutex_unlock(&m->run_mu);
  last->bailout = st->bailout;
  ts_rt_heap_use(prev);
  return rc;
}

/* ------------------------------------------- helpers of the entry function */

static bool ts_aot_node_ok(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k) {
  if (k < st->m->nnodes)
    return true;
  return ts_rt_fail(ctx, "internal error: node %u of %u", (unsigned)k, (unsigned)st->m->nnodes);
}

static bool ts_aot_fail_at(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k) {
  if (!ctx->failed)
    ts_rt_fail(ctx, "%s failed", k < st->m->nnodes ? st->m->nodes[k].n->kind_name : "a node");
  if (st->fail_node < 0 && k < st->m->nnodes)
    st->fail_node = k;
  return false;
}

bool ts_rt_aot_call(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, ts_iv *const *ins, uint32_t nin,
                    ts_iv *const *outs, uint32_t nout, int64_t plan_off, uint64_t plan_nbytes) {
  if (!ts_aot_node_ok(st, ctx, k))
    return false;
  const ts_aot_node *an = &st->m->nodes[k];
  if (an->how != TS_AOT_KERNEL && an->how != TS_AOT_INTERP) {
    ts_diag d = {0};
    ts_rt_aot_node_supported(an->n, &d);
    ts_rt_fail(ctx, "%s", d.text.data && d.text.len ? d.text.data : "not callable");
    ts_diag_free(&d);
    return ts_aot_fail_at(st, ctx, k);
  }
  ts_iv sin[TS_AOT_STACK_OPS], sout[TS_AOT_STACK_OPS];
  ts_iv *in = sin, *out = sout;
  if (nin > TS_AOT_STACK_OPS && !(in = ts_rt_malloc((size_t)nin * sizeof *in)))
    return ts_rt_oom(ctx), ts_aot_fail_at(st, ctx, k);
  if (nout > TS_AOT_STACK_OPS && !(out = ts_rt_malloc((size_t)nout * sizeof *out))) {
    if (in != sin)
      ts_rt_free(in);
    return ts_rt_oom(ctx), ts_aot_fail_at(st, ctx, k);
  }
  for (uint32_t i = 0; i < nin; i++)
    in[i] = *ins[i];
  for (uint32_t i = 0; i < nout; i++)
    out[i] = ts_iv_none();
  if (plan_nbytes && st->head.arena) {
    ctx->plan_ptr = st->head.arena + plan_off;
    ctx->plan_nbytes = (size_t)plan_nbytes;
  }
  bool ok;
  ts_rt_profile *prof = ctx->profile;
  uint64_t t0 = prof ? ts_rt_now_ns() : 0;
  bool outer = prof && ts_rt_profile_begin(prof);
  ts_rt_gpu *gpu = st->m->gpu;
  int on_gpu = gpu ? ts_rt_gpu_node_begin(gpu, ctx, k, an->n, in, nin, out, nout) : 0;
  if (on_gpu) {
    ok = on_gpu > 0;
  } else if (an->how == TS_AOT_KERNEL) {
    ts_rt_call call = {.in = in, .nin = nin, .out = out, .nout = nout, .node = an->n};
    ok = (an->complex_ok || ts_rt_call_complex_check(ctx, &call)) && an->fn(ctx, &call);
  } else
    ok = ts_rt_interp_node(st->m->ip, ctx, an->n, in, nin, out, nout);
  /* a failed mark fails the node, but its outputs (right) are kept first */
  bool marked = !gpu || on_gpu || !ok || ts_rt_gpu_node_end(gpu, ctx, k, in, nin);
  if (prof) {
    ts_rt_profile_end(prof, outer, an->n, t0, false);
    for (uint32_t i = 0; ok && prof->trace && i < nout; i++)
      ts_rt_profile_trace_out(prof, &out[i]);
  }
  ctx->plan_ptr = NULL;
  ctx->plan_nbytes = 0;
  if (ok)
    for (uint32_t i = 0; i < nout; i++) {
      ts_iv old = *outs[i];
      *outs[i] = out[i];
      ts_iv_release(old);
    }
  if (in != sin)
    ts_rt_free(in);
  if (out != sout)
    ts_rt_free(out);
  return (ok && marked) || ts_aot_fail_at(st, ctx, k);
}

void ts_rt_aot_const(ts_rt_aot_state *st, uint32_t k, ts_iv *slot) {
  ts_iv v = k < st->m->nnodes && st->m->nodes[k].how == TS_AOT_CONST ? st->m->nodes[k].value : ts_iv_none();
  ts_iv_retain(v);
  ts_iv old = *slot;
  *slot = v;
  ts_iv_release(old);
}

typedef struct ts_aot_kjob {
  ts_rt_aot_kernel_fn kernel;
  const void *kargs;
} ts_aot_kjob;

static void ts_aot_kjob_run(void *arg, int64_t begin, int64_t end) {
  const ts_aot_kjob *j = arg;
  j->kernel(j->kargs, begin, end);
}

/* Mirrors codegen/codegen.h's ts_cg_kargs (same layout; the runtime does
 * not include the code generator's header). */
typedef struct ts_aot_kargs {
  void **ptrs;
  const int64_t *strides;
  int64_t contig;
} ts_aot_kargs;

static bool ts_aot_fusion_run(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, ts_rt_aot_kernel_fn kernel,
                              ts_iv *const *ops, uint32_t nin, uint32_t nout, int32_t ndim, const int64_t *sizes,
                              const int32_t *out_dtypes, const int64_t *out_offs);

bool ts_rt_aot_fusion(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_rt_aot_kernel_fn *kernels,
                      uint32_t nkernels, ts_iv *const *ops, uint32_t nin, uint32_t nout, int32_t ndim,
                      const int64_t *sizes, const int32_t *out_dtypes, const int64_t *out_offs) {
  if (!ts_aot_node_ok(st, ctx, k))
    return false;
  /* copies per x86-64 level: the best this CPU runs (the level is detected
   * once per process; this is a load of it) */
  uint32_t pick = 0;
  int native = 1;
  if (nkernels == TS_RT_AOT_KERNEL_LEVELS) {
    int level = ts_rt_cpu_level();
    pick = level >= 4 ? 2 : level == 3 ? 1 : 0;
    native = 2 + (int)pick;
  }
  ts_rt_profile *prof = ctx->profile;
  uint64_t t0 = prof ? ts_rt_now_ns() : 0;
  bool outer = prof && ts_rt_profile_begin(prof);
  bool ok = ts_aot_fusion_run(st, ctx, k, kernels[pick], ops, nin, nout, ndim, sizes, out_dtypes, out_offs);
  if (prof) {
    ts_rt_profile_end(prof, outer, k < st->m->nnodes ? st->m->nodes[k].n : NULL, t0, st->m->gpu ? 1 : native);
    for (uint32_t i = 0; ok && prof->trace && i < nout; i++)
      ts_rt_profile_trace_out(prof, ops[nin + i]);
  }
  return ok;
}

static bool ts_aot_fusion_run(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, ts_rt_aot_kernel_fn kernel,
                              ts_iv *const *ops, uint32_t nin, uint32_t nout, int32_t ndim, const int64_t *sizes,
                              const int32_t *out_dtypes, const int64_t *out_offs) {
  uint32_t nops = nin + nout;
  if (ndim < 0 || ndim > TS_RT_MAX_DIMS || (uint64_t)nops * (uint64_t)(ndim ? ndim : 1) > TS_AOT_FUSION_DIMS) {
    ts_rt_fail(ctx, "a fused kernel of %u operands and %d dimensions (at most %d operand dimensions)",
               (unsigned)nops, (int)ndim, TS_AOT_FUSION_DIMS);
    return ts_aot_fail_at(st, ctx, k);
  }
  void *ptrs[TS_AOT_FUSION_DIMS];
  int64_t strides[TS_AOT_FUSION_DIMS];
  bool contig = true;
  int64_t numel = 1;
  for (int32_t d = 0; d < ndim; d++)
    numel *= sizes[d];
  for (uint32_t i = 0; i < nin; i++) {
    ts_iv *v = ops[i];
    int64_t *s = strides + (size_t)i * (size_t)ndim;
    if (v->tag != TS_IV_TENSOR) {
      if (v->tag != TS_IV_INT && v->tag != TS_IV_DOUBLE && v->tag != TS_IV_BOOL) {
        ts_rt_fail(ctx, "input %u of a fused kernel is a %s", (unsigned)i, ts_iv_tag_name(*v));
        return ts_aot_fail_at(st, ctx, k);
      }
      ptrs[i] = &v->u;
      for (int32_t d = 0; d < ndim; d++)
        s[d] = 0;
      continue;
    }
    const ts_rt_tensor *t = v->u.t;
    if (t->ndim > ndim) {
      ts_rt_fail(ctx, "input %u of a fused kernel has %d dimensions, the output %d", (unsigned)i, (int)t->ndim,
                 (int)ndim);
      return ts_aot_fail_at(st, ctx, k);
    }
    bool same = t->ndim == ndim;
    for (int32_t d = 0; d < ndim; d++) {
      int32_t j = d - (ndim - t->ndim);
      if (j < 0) {
        s[d] = 0;
      } else if (t->sizes[j] == sizes[d]) {
        s[d] = t->strides[j];
      } else if (t->sizes[j] == 1) {
        s[d] = 0;
        same = false;
      } else {
        ts_rt_fail(ctx,
                   "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                   (long long)sizes[d], (long long)t->sizes[j], (int)d);
        return ts_aot_fail_at(st, ctx, k);
      }
    }
    contig = contig && same && ts_rt_tensor_is_contiguous(t);
    ptrs[i] = ts_rt_tensor_data(t);
  }
  int64_t cs[TS_RT_MAX_DIMS];
  ts_rt_strides_contiguous(ndim, sizes, cs);
  for (uint32_t j = 0; j < nout; j++) {
    ts_dtype dt = (ts_dtype)out_dtypes[j];
    ts_rt_tensor *t = NULL;
    if (out_offs && out_offs[j] >= 0 && st->head.arena) {
      size_t nbytes = (size_t)numel * ts_dtype_size(dt);
      ts_rt_storage *s = ts_rt_storage_wrap(ctx, st->head.arena + out_offs[j], nbytes, ts_aot_noop_free, NULL);
      if (s) {
        t = ts_rt_tensor_new_view(ctx, s, dt, 0, ndim, sizes, cs);
        ts_rt_storage_release(s);
      }
    } else
      t = ts_rt_tensor_new(ctx, dt, ndim, sizes, false);
    if (!t)
      return ts_aot_fail_at(st, ctx, k);
    ts_iv old = *ops[nin + j];
    *ops[nin + j] = ts_iv_tensor(t);
    ts_iv_release(old);
    ptrs[nin + j] = ts_rt_tensor_data(t);
    for (int32_t d = 0; d < ndim; d++)
      strides[(size_t)(nin + j) * (size_t)ndim + d] = cs[d];
  }
  ts_rt_gpu *gpu = st->m->gpu;
  if (gpu) {
    int r = ts_rt_gpu_fusion(gpu, ctx, k, ops, nin, nout);
    if (r)
      return r > 0 || ts_aot_fail_at(st, ctx, k);
    for (uint32_t i = 0; i < nin; i++)
      if (!ts_rt_gpu_iv_to_host(gpu, ctx, ops[i]))
        return ts_aot_fail_at(st, ctx, k);
  }
  ts_aot_kargs ka = {.ptrs = ptrs, .strides = strides, .contig = contig};
  ts_aot_kjob job = {.kernel = kernel, .kargs = &ka};
  int64_t n, grain = TS_AOT_GRAIN;
  if (contig) {
    n = numel;
  } else {
    int64_t last = ndim ? sizes[ndim - 1] : 1;
    n = ndim > 1 ? numel / (last ? last : 1) : 1;
    if (ndim > 1 && last == 0) /* rows of nothing */
      n = 0;
    grain = last > 0 ? (TS_AOT_GRAIN + last - 1) / last : 1;
  }
  if (numel > 0)
    ts_rt_parallel_for(ctx, n, grain, ts_aot_kjob_run, &job);
  return true;
}

void ts_rt_aot_release_slot(ts_iv *slot) { ts_iv_clear(slot); }

void ts_rt_aot_copy_slot(ts_iv *dst, const ts_iv *src) {
  ts_iv v = *src;
  ts_iv_retain(v);
  ts_iv old = *dst;
  *dst = v;
  ts_iv_release(old);
}

void ts_rt_aot_set_int(ts_iv *slot, int64_t i) {
  ts_iv old = *slot;
  *slot = ts_iv_int(i);
  ts_iv_release(old);
}

bool ts_rt_aot_get_bool(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_iv *slot, bool *out) {
  if (slot->tag == TS_IV_BOOL) {
    *out = slot->u.b;
    return true;
  }
  if (ts_aot_node_ok(st, ctx, k))
    ts_rt_fail(ctx, "%s condition is a %s, not a bool", st->m->nodes[k].n->kind_name, ts_iv_tag_name(*slot));
  return ts_aot_fail_at(st, ctx, k);
}

bool ts_rt_aot_get_int(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_iv *slot, int64_t *out) {
  if (slot->tag == TS_IV_INT) {
    *out = slot->u.i;
    return true;
  }
  if (ts_aot_node_ok(st, ctx, k))
    ts_rt_fail(ctx, "%s needs an int, got a %s", st->m->nodes[k].n->kind_name, ts_iv_tag_name(*slot));
  return ts_aot_fail_at(st, ctx, k);
}
