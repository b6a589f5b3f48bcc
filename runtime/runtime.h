/* runtime/runtime.h: the one place to learn tsaot's runtime.
 *
 * What models run on (../shared/reference, "Executing Programs"): tensors
 * with refcounted storages shared by views; IValues, the 16-byte tagged union
 * every value of a running program is; op kernels found from the op table
 * (ir/ops.def) by schema; and the reference interpreter, which runs any graph
 * the frontend produces.
 *
 * Ownership: every refcounted thing (tensor, storage, str, list, tuple, dict,
 * object) starts with refcount 1 for its creator. `*_retain` adds one,
 * `*_release` drops one and frees at zero. Functions documented "new" return
 * a reference the caller owns; "borrowed" ones do not.
 *
 * Errors: a runtime function never aborts, exits or prints. It returns
 * NULL/false and records the reason in its ts_rt_ctx (ts_rt_fail). Only the
 * first error of a run is kept.
 *
 * Prototypes are grouped by the file that defines them.
 */
#ifndef TS_RT_RUNTIME_H
#define TS_RT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir.h"

typedef struct ts_rt_ctx ts_rt_ctx;
typedef struct ts_rt_obj ts_rt_obj;
typedef struct ts_rt_storage ts_rt_storage;
typedef struct ts_rt_tensor ts_rt_tensor;
typedef struct ts_rt_str ts_rt_str;
typedef struct ts_rt_list ts_rt_list;
typedef struct ts_rt_tuple ts_rt_tuple;
typedef struct ts_rt_dict ts_rt_dict;
typedef struct ts_rt_class ts_rt_class;
typedef struct ts_rt_object ts_rt_object;
typedef struct ts_rt_pool ts_rt_pool;

/* The most dimensions a tensor may have (as PyTorch's limit). */
#define TS_RT_MAX_DIMS 64

/* -------------------------------------------------------------- context.c */

/* A run's random generator: PyTorch's CPU generator (CPUGeneratorImpl),
 * an mt19937 engine and the cached second sample of Box-Muller
 * (kernels/random.c draws from it). */
typedef struct ts_rt_gen {
  uint32_t mt[624];
  uint32_t pos;     /* the next word of mt to temper; 624: regenerate first */
  bool seeded;      /* false: seeded with TS_RT_DEFAULT_SEED at first use */
  bool have_normal; /* `normal` holds the cached standard normal sample */
  double normal;
  uint64_t seed;
} ts_rt_gen;

/* One run's state: the first error, the thread budget, where prim::Print
 * writes. A ctx is used by one thread at a time (kernels fan out through
 * ts_rt_parallel_for, which handles its own workers). */
struct ts_rt_ctx {
  ts_buf err;      /* the first error's message (no trailing newline) */
  bool failed;
  /* The error came from prim::RaiseException: err holds the exception's
   * message, exc_class its Python class name ("builtins.ValueError"), or
   * NULL for a kernel error (bad shapes, bad index, out of memory). */
  const char *exc_class;
  int nthreads;    /* >= 1: our workers and OpenBLAS's threads together */
  ts_rt_pool *pool;
  ts_buf out;      /* prim::Print output and aten::warn messages, in order */
  /* The memory plan of compiled code (runtime/hosted/aot.h): when plan_nbytes is
   * not 0, the next ts_rt_tensor_new of exactly plan_nbytes bytes uses
   * plan_ptr (a storage that does not free it) and clears both. */
  void *plan_ptr;
  size_t plan_nbytes;
  /* Not NULL: the interpreter and compiled code time every node they run
   * into it (profile.c); tsaot-bench --profile. */
  struct ts_rt_profile *profile;
  /* The pool is another ctx's (a compiled model's, shared by its runs):
   * ts_rt_parallel_for neither makes nor frees one, and runs serially when
   * it is NULL or busy with another caller's job. */
  bool pool_borrowed;
  /* The run's random generator. Every run starts as a fresh PyTorch
   * process does, from PyTorch's default seed (TS_RT_DEFAULT_SEED), until
   * the program calls torch.manual_seed (aten::manual_seed): runs of one
   * model give the same values whatever thread or order they run in, and
   * concurrent runs share no generator (ts_rt_clear_error resets it). */
  ts_rt_gen gen;
};

/* nthreads <= 0: the number of online processors. Sets OpenBLAS's thread
 * count to the same number. */
void ts_rt_ctx_init(ts_rt_ctx *c, int nthreads);
void ts_rt_ctx_free(ts_rt_ctx *c);
/* Records an error (the first one wins); returns false so kernels can
 * `return ts_rt_fail(ctx, "...")`. Messages follow PyTorch's where a user
 * would compare them ("The size of tensor a (3) must match the size of
 * tensor b (4) at non-singleton dimension 1"). */
bool ts_rt_fail(ts_rt_ctx *c, const char *fmt, ...) TS_PRINTF(2, 3);
/* Forgets the error and starts the run's generator afresh (the interpreter
 * and compiled code do this before each run). */
void ts_rt_clear_error(ts_rt_ctx *c);
/* Out of memory, as an error. Returns false. */
bool ts_rt_oom(ts_rt_ctx *c);
/* A warning PyTorch's kernels give (TORCH_WARN): one line "UserWarning:
 * message" in c->out, where aten::warn writes; dropped, never an error,
 * when a fixed buffer is full. */
void ts_rt_warn(ts_rt_ctx *c, const char *fmt, ...) TS_PRINTF(2, 3);

/* Runs fn(arg, begin, end) over [0, n) in chunks of at least `grain`
 * iterations, on up to ctx->nthreads threads (the calling one included).
 * Serial when n < 2 * grain or nthreads == 1. Chunks never overlap. */
typedef void (*ts_rt_range_fn)(void *arg, int64_t begin, int64_t end);
void ts_rt_parallel_for(ts_rt_ctx *c, int64_t n, int64_t grain, ts_rt_range_fn fn, void *arg);

/* ---------------------------------------------------------------- alloc.c
 *
 * Every allocation of the runtime's run path (tensors, storages, lists,
 * tuples, dicts, strings, kernels' scratch buffers, the interpreter's
 * frames) goes through these, never malloc/calloc/realloc/free directly,
 * so that compiled code can run with no malloc (include/tsaot.h,
 * run_static): while a heap is current on a thread, allocations come from
 * it. A heap is a first-fit allocator with coalescing over memory the
 * caller gives (the arena), safe to use from the thread pool's workers
 * (ts_rt_parallel_for makes the caller's heap current in its workers for
 * the job). ts_rt_free and ts_rt_realloc of a block that is not the current
 * heap's go to the C library. */
void *ts_rt_malloc(size_t n);
void *ts_rt_calloc(size_t n, size_t size);
void *ts_rt_realloc(void *p, size_t n);
void ts_rt_free(void *p);

typedef struct ts_rt_heap ts_rt_heap;
/* A heap over [mem, mem + size). With mem NULL, a counting heap: blocks come
 * from the C library and the heap keeps the peak of bytes in use (headers
 * included, as a heap over memory would need them), to size an arena.
 * NULL if the memory is too small to hold the heap's own header. */
ts_rt_heap *ts_rt_heap_init(void *mem, size_t size);
/* Makes h the calling thread's heap (NULL: the C library); returns the one
 * it replaces. */
ts_rt_heap *ts_rt_heap_use(ts_rt_heap *h);
ts_rt_heap *ts_rt_heap_current(void);
/* Bytes in use now / at most so far, headers included. */
size_t ts_rt_heap_used(const ts_rt_heap *h);
size_t ts_rt_heap_peak(const ts_rt_heap *h);
/* Frees a counting heap (a heap over memory needs nothing freed). */
void ts_rt_heap_dispose(ts_rt_heap *h);

/* --------------------------------------------------------------- tensor.c */

/* The header every refcounted runtime thing starts with. */
typedef enum ts_rt_obj_kind {
  TS_RT_OBJ_STORAGE,
  TS_RT_OBJ_TENSOR,
  TS_RT_OBJ_STR,
  TS_RT_OBJ_LIST,
  TS_RT_OBJ_TUPLE,
  TS_RT_OBJ_DICT,
  TS_RT_OBJ_OBJECT,
} ts_rt_obj_kind;

struct ts_rt_obj {
  int64_t refcount; /* TS_RT_RC_SHARED set: not counted while shared */
  int32_t kind;     /* ts_rt_obj_kind */
};

/* The refcount bit of an object that several threads retain and release
 * at once (a compiled model's constants, ts_iv_share): while it is set,
 * retain and release leave the object alone, so that nothing writes it and
 * threads share it without atomics (a run's own objects pay one test). Its
 * owner clears the bit (ts_iv_unshare) once no run can see the object, and
 * releases it as usual. */
#define TS_RT_RC_SHARED (INT64_C(1) << 62)

static inline void ts_rt_obj_ref(ts_rt_obj *o) {
  if (!(o->refcount & TS_RT_RC_SHARED))
    o->refcount++;
}

/* Drops one reference; true when it was the last (the caller frees o). */
static inline bool ts_rt_obj_unref(ts_rt_obj *o) { return !(o->refcount & TS_RT_RC_SHARED) && --o->refcount <= 0; }

/* Bytes that tensors view. `free_fn` NULL: `data` came from ts_rt_malloc (or
 * is NULL for zero bytes) and is freed with ts_rt_free(). Otherwise the bytes are
 * borrowed and free_fn(free_ctx, data) is called at refcount zero (it may be
 * a no-op for memory that outlives the storage). */
struct ts_rt_storage {
  ts_rt_obj h;
  void *data;
  size_t nbytes;
  void (*free_fn)(void *free_ctx, void *data);
  void *free_ctx;
  /* Read-only data kernels derived from the bytes (packed weights of a
   * constant), freed with the storage: see ts_rt_storage_derived. */
  struct ts_rt_derived *derived;
  /* The device copy of the GPU run path (hosted/gpu.h), NULL on the CPU
   * path; given back with dev_free (set with it) when the storage is freed:
   * a pointer, so that the core does not link the GPU path. */
  struct ts_rt_devbuf *dev;
  void (*dev_free)(struct ts_rt_devbuf *b);
};

/* Something a kernel made from a storage's bytes once and keeps with it
 * (kernels/gemm_small.c: a constant weight packed for the small GEMM). The
 * entries form a list that only grows, pushed with an atomic exchange, so
 * that runs on several threads read it without a lock; an entry is never
 * changed once published. `tag` says which kernel made it (the address of
 * one of its statics); free_fn frees the entry (the C library's memory:
 * entries outlive the run whose heap is current when they are made). */
typedef struct ts_rt_derived {
  struct ts_rt_derived *next;
  const void *tag;
  void (*free_fn)(struct ts_rt_derived *d);
} ts_rt_derived;

/* A strided view of a storage, as an ATen TensorImpl: element (i0, i1, ...)
 * is at data + (offset + sum(ik * strides[k])) * element size. Sizes and
 * strides live in the same allocation as the tensor. Strides may be zero
 * (expand) or anything a view op makes; never negative. */
struct ts_rt_tensor {
  ts_rt_obj h;
  ts_rt_storage *storage; /* owned reference; never NULL */
  int64_t offset;         /* in elements */
  int8_t dtype;           /* ts_dtype */
  bool requires_grad;     /* carried from the model's parameters; inference never sets it */
  ts_device device;       /* CPU; kept for prim::device and .to(device) */
  int32_t ndim;
  int64_t *sizes;
  int64_t *strides;
};

/* float16 and bfloat16 are stored as their bits and computed in float, as
 * PyTorch's CPU kernels do. Round to nearest even. */
float ts_rt_half_to_float(uint16_t h);
uint16_t ts_rt_float_to_half(float f);
float ts_rt_bf16_to_float(uint16_t h);
uint16_t ts_rt_float_to_bf16(float f);
/* Reads/writes one element of any dtype through double or int64 (bool is
 * 0/1; writing a float to an integer dtype truncates toward zero, as a C
 * cast and PyTorch do; to bool, nonzero is true). */
double ts_rt_load_f64(const void *p, ts_dtype dt);
int64_t ts_rt_load_i64(const void *p, ts_dtype dt);
void ts_rt_store_f64(void *p, ts_dtype dt, double v);
void ts_rt_store_i64(void *p, ts_dtype dt, int64_t v);
/* ScalarType names as PyTorch's messages print them ("Float", "Long",
 * "BFloat16"); "Undefined" outside the table. */
const char *ts_rt_dtype_name(ts_dtype dt);
bool ts_rt_dtype_is_float(ts_dtype dt);   /* float16/32/64, bfloat16 */
bool ts_rt_dtype_is_integral(ts_dtype dt, bool include_bool);
/* Whether the runtime can hold tensors of this dtype: float32/64/16,
 * bfloat16, int64/32/16/8, uint8, bool, complex64/128 (not complex32).
 * ts_rt_load_f64 reads a complex element's real part, the stores write
 * a zero imaginary part. */
bool ts_rt_dtype_supported(ts_dtype dt);

/* New storage of `nbytes` (ts_rt_malloc'd, uninitialised; zeroed if `zero`). */
ts_rt_storage *ts_rt_storage_new(ts_rt_ctx *c, size_t nbytes, bool zero);
/* New storage over borrowed bytes (see ts_rt_storage.free_fn). */
ts_rt_storage *ts_rt_storage_wrap(ts_rt_ctx *c, void *data, size_t nbytes, void (*free_fn)(void *, void *),
                                  void *free_ctx);
void ts_rt_storage_retain(ts_rt_storage *s);
void ts_rt_storage_release(ts_rt_storage *s);
/* The first derived entry of s (then ->next), NULL if none. */
const ts_rt_derived *ts_rt_storage_derived(const ts_rt_storage *s);
/* Publishes d (made by the caller, d->tag and d->free_fn set) at the head
 * of s's list; thread-safe. Two runs that make the same entry at once both
 * publish it: the list holds both, both are freed with s. */
void ts_rt_storage_add_derived(ts_rt_storage *s, ts_rt_derived *d);

/* New contiguous tensor, uninitialised (zeroed if `zero`). Checks the size
 * arithmetic for overflow; ndim <= TS_RT_MAX_DIMS; sizes >= 0. */
ts_rt_tensor *ts_rt_tensor_new(ts_rt_ctx *c, ts_dtype dt, int32_t ndim, const int64_t *sizes, bool zero);
/* New tensor viewing `storage` (retained) with the given geometry. The
 * caller has checked that every element lies inside the storage. */
ts_rt_tensor *ts_rt_tensor_new_view(ts_rt_ctx *c, ts_rt_storage *storage, ts_dtype dt, int64_t offset, int32_t ndim,
                                    const int64_t *sizes, const int64_t *strides);
/* New view of `base`'s storage with other sizes/strides/offset: what every
 * view op (view, select, slice, transpose, expand, ...) returns. Keeps
 * base's dtype, device and requires_grad. */
ts_rt_tensor *ts_rt_tensor_view(ts_rt_ctx *c, const ts_rt_tensor *base, int64_t offset, int32_t ndim,
                                const int64_t *sizes, const int64_t *strides);
void ts_rt_tensor_retain(ts_rt_tensor *t);
void ts_rt_tensor_release(ts_rt_tensor *t);
/* Gives t, as every holder of it sees it, new geometry: rank, sizes,
 * strides, offset, and `storage` (retained) when not NULL: what in-place
 * view ops (unsqueeze_, t_, as_strided_) and out= resizes do. The caller
 * has checked that every element lies inside the storage. The arrays move
 * out of the tensor's allocation when the rank grows. */
bool ts_rt_tensor_set_geometry(ts_rt_ctx *c, ts_rt_tensor *t, ts_rt_storage *storage, int64_t offset, int32_t ndim,
                               const int64_t *sizes, const int64_t *strides);
/* aten::resize_: t takes the shape ndim/sizes with `strides` (dense; NULL:
 * contiguous ones), keeping its storage when that holds the elements from
 * t's offset, else on a new zeroed one (PyTorch grows the old storage
 * instead: other views of it do not see the change here). */
bool ts_rt_tensor_resize(ts_rt_ctx *c, ts_rt_tensor *t, int32_t ndim, const int64_t *sizes, const int64_t *strides);
/* at::native::resize_output, for out= arguments: ts_rt_tensor_resize when
 * out's shape is not ndim/sizes, and then, if out had elements, PyTorch's
 * deprecation warning as a "UserWarning: An output with one or more
 * elements was resized ..." line in c->out. */
bool ts_rt_tensor_resize_out(ts_rt_ctx *c, ts_rt_tensor *out, int32_t ndim, const int64_t *sizes,
                             const int64_t *strides);
int64_t ts_rt_tensor_numel(const ts_rt_tensor *t);
/* The address of the element at offset 0 of the view (storage data +
 * offset * element size). */
void *ts_rt_tensor_data(const ts_rt_tensor *t);
/* Row-major contiguous (size-1 dimensions' strides are ignored, as
 * PyTorch's is_contiguous). */
bool ts_rt_tensor_is_contiguous(const ts_rt_tensor *t);
/* Contiguous strides for `sizes` into `strides`. */
void ts_rt_strides_contiguous(int32_t ndim, const int64_t *sizes, int64_t *strides);
/* New: `t` itself (retained) if contiguous, else a contiguous copy. */
ts_rt_tensor *ts_rt_tensor_contiguous(ts_rt_ctx *c, ts_rt_tensor *t);
/* Copies src into dst elementwise: src broadcast to dst's shape, converted
 * to dst's dtype; dst may be any view (aten::copy_). Handles overlap of src
 * and dst by copying src first when they share a storage. */
bool ts_rt_tensor_copy_(ts_rt_ctx *c, ts_rt_tensor *dst, const ts_rt_tensor *src);
/* New contiguous tensor with src's values converted to `dt`. */
ts_rt_tensor *ts_rt_tensor_to_dtype(ts_rt_ctx *c, const ts_rt_tensor *src, ts_dtype dt);
/* New 0-d tensor holding one number (dtype int64, float64 or bool as given). */
ts_rt_tensor *ts_rt_tensor_scalar(ts_rt_ctx *c, ts_dtype dt, double f, int64_t i);
/* Visits every element of `t` in row-major order: fn(arg, element pointer,
 * linear index). For kernels that need no speed (printing, tolist). */
void ts_rt_tensor_foreach(const ts_rt_tensor *t, void (*fn)(void *arg, void *elem, int64_t index), void *arg);

/* --------------------------------------------------------------- ivalue.c */

/* IValue tags. Numbers and None are held inline; everything else is a
 * reference to a refcounted ts_rt_obj. */
typedef enum ts_iv_tag {
  TS_IV_NONE = 0,
  TS_IV_INT,
  TS_IV_DOUBLE,
  TS_IV_BOOL,
  TS_IV_DEVICE,
  TS_IV_TENSOR,
  TS_IV_STR,
  TS_IV_LIST,
  TS_IV_TUPLE,
  TS_IV_DICT,
  TS_IV_OBJECT,
  /* A first-class function (prim::Constant of a Function type); u.s points
   * at its qualified name, owned by the graph. Not refcounted. */
  TS_IV_FUNCTION,
  /* prim::Uninitialized: never read by a correct program. */
  TS_IV_UNINIT,
} ts_iv_tag;

/* The 16-byte tagged union of PyTorch's IValue. Copying the struct copies a
 * reference without retaining it: use ts_iv_retain/ts_iv_release. */
typedef struct ts_iv {
  union {
    int64_t i;
    double d;
    bool b;
    ts_device dev;
    ts_rt_obj *o; /* any refcounted kind */
    ts_rt_tensor *t;
    ts_rt_str *s;
    ts_rt_list *l;
    ts_rt_tuple *tup;
    ts_rt_dict *dict;
    ts_rt_object *obj;
    const char *fn; /* TS_IV_FUNCTION */
  } u;
  int32_t tag; /* ts_iv_tag */
} ts_iv;

struct ts_rt_str {
  ts_rt_obj h;
  size_t len;
  char data[]; /* len bytes, then a NUL */
};

/* A list; `elem` is its element type as the graph declared it (NULL: not
 * known), used where the type matters and the values do not say it
 * (torch.tensor([]) is float, str() of an empty list). */
struct ts_rt_list {
  ts_rt_obj h;
  uint32_t n, cap;
  ts_iv *items;
  const ts_type *elem;
};

struct ts_rt_tuple {
  ts_rt_obj h;
  uint32_t n;
  const ts_type *type; /* NULL, or a named tuple's type (field names) */
  ts_iv items[];
};

/* A dict keeps insertion order, as Python's and PyTorch's do. Keys are
 * str, int, float, bool or Tensor (by identity). */
struct ts_rt_dict {
  ts_rt_obj h;
  uint32_t n, cap;
  ts_iv *keys;
  ts_iv *values;
  uint32_t *index; /* open-addressing hash of positions (implementation's) */
  uint32_t index_cap;
  const ts_type *key_type, *value_type; /* NULL: not known */
};

/* A TorchScript class (modules included), as objects of it are laid out:
 * one slot per attribute, in the class's declared order. `user` is for the
 * loader (the frontend class it came from). Classes are owned by whoever
 * made them and outlive their objects. */
struct ts_rt_class {
  const char *qualname; /* "__torch__.m.Net" */
  uint32_t nattrs;
  const char *const *attr_names;
  const void *user;
};

struct ts_rt_object {
  ts_rt_obj h;
  const ts_rt_class *cls;
  uint32_t n;
  ts_iv attrs[]; /* cls->nattrs of them */
};

static inline ts_iv ts_iv_none(void) { ts_iv v = {.u.i = 0, .tag = TS_IV_NONE}; return v; }
static inline ts_iv ts_iv_int(int64_t i) { ts_iv v = {.u.i = i, .tag = TS_IV_INT}; return v; }
static inline ts_iv ts_iv_double(double d) { ts_iv v = {.u.d = d, .tag = TS_IV_DOUBLE}; return v; }
static inline ts_iv ts_iv_bool(bool b) { ts_iv v = {.u.i = 0, .tag = TS_IV_BOOL}; v.u.b = b; return v; }
static inline ts_iv ts_iv_device(ts_device d) { ts_iv v = {.u.i = 0, .tag = TS_IV_DEVICE}; v.u.dev = d; return v; }
/* Takes over the caller's reference to t. */
static inline ts_iv ts_iv_tensor(ts_rt_tensor *t) { ts_iv v = {.u.t = t, .tag = TS_IV_TENSOR}; return v; }
static inline bool ts_iv_is(ts_iv v, ts_iv_tag tag) { return v.tag == (int32_t)tag; }
static inline bool ts_iv_is_ref(ts_iv v) { return v.tag >= TS_IV_TENSOR && v.tag <= TS_IV_OBJECT; }

void ts_iv_retain(ts_iv v);
void ts_iv_release(ts_iv v);
/* Marks v and what it holds (a tensor's storage, a list's or tuple's
 * items) TS_RT_RC_SHARED, before other threads can see it. False when v
 * holds a dict or an object (those are not marked: the caller must not
 * share v). */
bool ts_iv_share(ts_iv v);
/* Clears the marks ts_iv_share set (when no other thread can see v). */
void ts_iv_unshare(ts_iv v);
/* Releases *v and sets it to None. */
void ts_iv_clear(ts_iv *v);

/* New objects (refcount 1); NULL and an error in c on failure. */
ts_rt_str *ts_rt_str_new(ts_rt_ctx *c, const char *s, size_t len);
ts_rt_list *ts_rt_list_new(ts_rt_ctx *c, const ts_type *elem, uint32_t cap);
/* Appends v, taking over the caller's reference (released on failure). */
bool ts_rt_list_append(ts_rt_ctx *c, ts_rt_list *l, ts_iv v);
/* A tuple of n items, each None; fill items[] (the tuple owns them). */
ts_rt_tuple *ts_rt_tuple_new(ts_rt_ctx *c, uint32_t n);
ts_rt_dict *ts_rt_dict_new(ts_rt_ctx *c, const ts_type *key_type, const ts_type *value_type);
/* Borrowed value for key, or NULL. */
ts_iv *ts_rt_dict_find(ts_rt_dict *d, ts_iv key);
/* Inserts or replaces; retains key and value. */
bool ts_rt_dict_set(ts_rt_ctx *c, ts_rt_dict *d, ts_iv key, ts_iv value);
/* Removes key; its value is moved to *out (owned by the caller) if out is
 * not NULL, else released. False if absent. */
bool ts_rt_dict_remove(ts_rt_dict *d, ts_iv key, ts_iv *out);
/* An object with every attribute None. */
ts_rt_object *ts_rt_object_new(ts_rt_ctx *c, const ts_rt_class *cls);
/* Attribute slot by name, or -1. */
int32_t ts_rt_class_attr_index(const ts_rt_class *cls, const char *name);

/* Python's == for the values TorchScript compares (numbers across int,
 * float and bool; strings; devices; None; lists, tuples and dicts element
 * by element; tensors and objects by identity). */
bool ts_iv_equal(ts_iv a, ts_iv b);
/* TorchScript's str()/print() of a value, as PyTorch 1.13's IValue printer
 * writes it (not Python's): floats integral and within int64 as "1.", else
 * "%.17g" ("0.10000000000000001", "1e+22", "inf", "nan"); "True"; None;
 * lists "[1, 2]", tuples "(1,)", dicts "{a: 1}" (strings are not quoted,
 * even inside containers); devices "cpu", "cuda:0"; tensors as ATen's
 * operator<< (" 1\n 2\n[ CPUFloatType{2} ]"). */
void ts_iv_str(ts_buf *b, ts_iv v);
/* As ts_iv_str, except strings are quoted the Python way. */
void ts_iv_repr(ts_buf *b, ts_iv v);
/* Words for messages: "Tensor", "int", "List", ... */
const char *ts_iv_tag_name(ts_iv v);
/* isinstance(v, t) on the run-time value (prim::isinstance): a list's,
 * dict's element types as it was made with; a tuple item by item. */
bool ts_iv_isinstance(ts_iv v, const ts_type *t);

/* --------------------------------------------------------------- kernel.c */

/* One kernel invocation. `in` holds the node's inputs in schema order (the
 * frontend puts every argument, defaults included, on the node); the
 * kernel borrows them. It writes `nout` new references to `out` (an
 * in-place op retains and returns its self). `node` is the graph node being
 * run (attributes, output types) or NULL when called outside a graph. */
typedef struct ts_rt_call {
  const ts_iv *in;
  uint32_t nin;
  ts_iv *out;
  uint32_t nout;
  const ts_node *node;
} ts_rt_call;

/* False after ts_rt_fail(ctx, ...); then out[] holds nothing to release. */
typedef bool (*ts_rt_kernel_fn)(ts_rt_ctx *ctx, ts_rt_call *call);

/* A kernel table entry: the overload it implements, spelled as
 * "aten::add.Tensor" ("aten::relu" for the unnamed overload), exactly one
 * schema of ir/ops.def. Each kernels file exports one table ending in
 * {NULL, NULL} (pointwise.c makes its own from ir/ops.def's pointwise rows
 * at first use); kernel.c lists the tables. */
typedef struct ts_rt_kernel_def {
  const char *schema;
  ts_rt_kernel_fn fn;
} ts_rt_kernel_def;

/* Binds every table entry to its schema (once, thread-safe; calls
 * ts_ops_init). False with the reasons in d (may be NULL) if an entry names
 * no schema of the op table or a schema has two kernels. */
bool ts_rt_kernels_init(ts_diag *d);
/* The kernel for a schema of the op table, or NULL. */
ts_rt_kernel_fn ts_rt_kernel_for(const ts_schema *s);
/* Whether the kernel of s takes complex tensors: complex.c's and fft.c's,
 * the pointwise table's (its kernels hand complex operands to complex.c),
 * the kernels complex.c lists (ts_rt_complex_generic: element-moving ones,
 * linalg.c's eig/eigvals/eigh/eigvalsh), those
 * complex.c wraps (ts_rt_cx_alts), and their in-place and out= adapters. The interpreter and compiled models
 * call ts_rt_call_complex_check before any other kernel, so that a kernel
 * written for real dtypes refuses a complex tensor rather than read its
 * real part. */
bool ts_rt_kernel_complex_ok(const ts_schema *s);
/* kernels/complex.c: the schema names of ts_rt_complex_generic (NULL-ended);
 * false, with the error in c, if call has a complex tensor among its
 * inputs (directly or in a list). */
extern const char *const ts_rt_complex_generic[];
bool ts_rt_call_complex_check(ts_rt_ctx *c, const ts_rt_call *call);
/* kernels/complex.c: kernels of other files taken to complex tensors (sum,
 * mean, matmul, einsum, norms, ...; PyTorch's refusals for max, sort, ...).
 * kernels_init binds `wrap` in place of the schema's kernel, after storing
 * that kernel in *real: wrap runs it on real inputs and complex.c's form of
 * it on complex ones. Ends with a NULL schema. */
typedef struct ts_rt_cx_alt {
  const char *schema;
  ts_rt_kernel_fn wrap;
  ts_rt_kernel_fn *real;
} ts_rt_cx_alt;
extern const ts_rt_cx_alt ts_rt_cx_alts[];
/* The same by name ("aten::add.Tensor"), for tests and tools. */
ts_rt_kernel_fn ts_rt_kernel_by_name(const char *schema_name);
/* Every bound entry, for tests and listings; count in *n. Adapters are not
 * among them. */
const ts_rt_kernel_def *const *ts_rt_kernels_all(uint32_t *n);
/* For a schema whose kernel is an adapter (adapt.c): the out-of-place
 * overload it runs; NULL for an explicit kernel or none. */
const ts_schema *ts_rt_kernel_adapted_from(const ts_schema *s);
/* How many schemas are bound to adapters. */
uint32_t ts_rt_kernels_adapted(void);

/* ---------------------------------------------------------------- adapt.c */

/* Adapter functions there are; more in-place/out= forms to adapt make
 * ts_rt_kernels_init fail. */
#define TS_RT_ADAPT_SLOTS 1024

/* The generic kernel of in-place or out= overload s, a form of v.base
 * (ts_schema_variant), whose kernel is `base`: it runs base and writes the
 * result into self or the out arguments by ATen's rules. NULL when every
 * slot is taken. For kernel.c's init only (not thread-safe). */
ts_rt_kernel_fn ts_rt_adapt_make(const ts_schema *s, ts_variant v, ts_rt_kernel_fn base);

/* -------------------------------------------------------------- constant.c */

/* The value of prim::Constant node `n` as a new IValue (toIValue): None,
 * bool, int, float, str, Device, Function (its qualified name), a tensor
 * (a new runtime tensor holding a copy of the constant's bytes, same
 * geometry), or an int/bool/float/str/Tensor list. False with the reason in
 * ctx (a tensor without data, as a graph read from text has; malformed
 * attributes; out of memory); the caller adds the node's location. */
bool ts_rt_iv_from_constant(ts_rt_ctx *ctx, const ts_node *n, ts_iv *out);
/* New tensor with a copy of a tensor constant's bytes and its geometry;
 * sizes and strides are checked (hostile files). NULL and ctx's error. */
ts_rt_tensor *ts_rt_tensor_from_tconst(ts_rt_ctx *ctx, const ts_tconst *tc);

/* -------------------------------------------------------------------- io.c
 *
 * A program's arguments and results as arrays: one set of rules for
 * tsaot-run's .npy files and compiled models' DLTensors (include/tsaot.h). */

/* The argument for a parameter of type `ty` from the array t (borrowed): a
 * Tensor/Any parameter takes t itself (retained); an int / float / bool
 * parameter a 0-d integral / integral-or-floating / bool array; a number
 * any 0-d array; a List[int] / List[float] / List[bool] a 1-d array of the
 * same kinds; a str a 1-d uint8 array of valid UTF-8. False with the reason
 * in c ("expected an int (a 0-d int64 array), got a 2-d float32 array of
 * shape (2, 3)"). */
bool ts_rt_io_arg(ts_rt_ctx *c, ts_rt_tensor *t, const ts_type *ty, ts_iv *out);
/* Calls fn for each array of a result flattened depth-first: tensors as
 * they are; tuples, lists and dicts' values element by element; a list of
 * ints / floats / bools as one int64 / float64 / bool array (empty: int64);
 * an int / float / bool as a 0-d int64 / float64 / bool array; None gives
 * nothing. t is borrowed (arrays made for numbers are dropped after the
 * call); t is NULL for a value with no array form (a str, an object), v is
 * the value either way. False when fn returns false, or with an error in c. */
typedef bool (*ts_rt_io_out_fn)(void *arg, ts_rt_tensor *t, ts_iv v);
bool ts_rt_io_flatten(ts_rt_ctx *c, ts_iv v, ts_rt_io_out_fn fn, void *arg);
/* "a 2-d float32 array of shape (2, 3)" */
void ts_rt_io_describe(ts_buf *b, const ts_rt_tensor *t);

/* Arguments flattened into slots (include/tsaot.h; tsaot-run's command
 * line): a parameter of a leaf type (ts_rt_io_leaf: Tensor, a number, str,
 * a list of numbers; Optional or not) takes one array, read by
 * ts_rt_io_arg's rules; Optional[T] a None marker or T's slots; a tuple its
 * elements' slots in order; any other list a 0-d integral length n, then n
 * elements' slots. */
enum { TS_RT_IO_MAX_DEPTH = 32 }; /* types nested deeper are refused */
bool ts_rt_io_leaf(const ts_type *ty);
/* Whether arguments of type ty have slots; false with the reason in why. */
bool ts_rt_io_passable(const ts_type *ty, ts_buf *why);
/* Slots of one value of type ty in which every list has one element and
 * no Optional is None (include/tsaot.h's template of input specs). */
uint32_t ts_rt_io_template_slots(const ts_type *ty);
/* Where ts_rt_io_args reads slot i: a new tensor for the slot read as
 * `as` (a leaf type, or int for a list's length); NULL with *none set for
 * a None marker; NULL with an error in c otherwise. With `as` NULL only
 * *none is set (a look ahead: nothing is made, nothing fails). */
typedef ts_rt_tensor *(*ts_rt_io_slot_fn)(void *arg, ts_rt_ctx *c, uint32_t i, const ts_type *as, bool *none);
/* Where reading arguments failed: argument `arg` (0: the first after
 * self; n: slots left over at the end), slot `slot`, and inside the
 * argument the element idx[0..depth) ("xs[1][0]"). */
typedef struct ts_rt_io_where {
  uint32_t arg, slot, depth;
  uint32_t idx[TS_RT_IO_MAX_DEPTH + 1];
} ts_rt_io_where;
/* The n arguments of types types[] from nslots slots, into out[] (new
 * references): every slot must be read. False with the reason in c and the
 * place in *w (may be NULL); out[] is then all None. */
bool ts_rt_io_args(ts_rt_ctx *c, const ts_type *const *types, uint32_t n, uint32_t nslots, ts_rt_io_slot_fn fn,
                   void *arg, ts_iv *out, ts_rt_io_where *w);
/* The leaves of argument v of type ty in slot order, None values left out
 * (borrowed), appended to out[*n..cap); false when they do not fit or v
 * does not have the type's shape. */
bool ts_rt_io_leaves(ts_iv v, const ts_type *ty, ts_iv *out, uint32_t cap, uint32_t *n);
/* "xs[1][0]": the argument's name (a graph's "x.1" written "x"; NULL:
 * "argument K", K = arg + 1) and the element's indices, into buf. */
void ts_rt_io_path(char *buf, size_t cap, const char *name, uint32_t arg, const uint32_t *idx, uint32_t depth);

/* ---------------------------------------------------------------- interp.c */

/* What the interpreter needs from whoever loaded the program: the graph of a
 * method of a class (for prim::CallMethod left by the inliner: interface
 * calls) or of a function (prim::CallFunction), and source text for error
 * messages. The graphs stay owned by the resolver. */
typedef struct ts_rt_resolver {
  void *ctx;
  /* `cls` is the run-time class of the receiver. NULL: no such method (the
   * reason in d). */
  ts_graph *(*method)(void *ctx, const ts_rt_class *cls, const char *method, ts_diag *d);
  ts_graph *(*function)(void *ctx, const char *qualname, ts_diag *d);
  /* The text of a source file named by a node's location (NULL: unknown). */
  const char *(*source)(void *ctx, const char *file, size_t *len);
  /* The class of objects prim::CreateObject makes for a class type (its
   * declared attributes, in order), owned by the resolver. NULL: unknown
   * (the reason in d). */
  const ts_rt_class *(*cls)(void *ctx, const ts_type *type, ts_diag *d);
} ts_rt_resolver;

typedef struct ts_rt_interp ts_rt_interp;

/* An interpreter for graphs resolved through `r` (copied). Code for each
 * graph is made on first run and kept. NULL on OOM. */
ts_rt_interp *ts_rt_interp_new(const ts_rt_resolver *r);
void ts_rt_interp_free(ts_rt_interp *ip);
/* Runs `g` on `args` (borrowed; one per graph input, self first for
 * methods) and writes the graph's outputs (new references) to `ret`
 * (ts_block_noutputs of them). On an error, ctx->err holds the message and
 * `where` (if not NULL) the location of the failing node as a compiler
 * diagnostic: "file:line:col: error: message", the source line and a caret. */
bool ts_rt_interp_run(ts_rt_interp *ip, ts_rt_ctx *ctx, ts_graph *g, const ts_iv *args, uint32_t nargs, ts_iv *ret,
                      ts_buf *where);
/* Builds g's code now rather than at its first run (compiled models build
 * everything at init: a run_static must not build into its arena). False
 * with the error as ts_rt_interp_run reports it. */
bool ts_rt_interp_prepare(ts_rt_interp *ip, ts_rt_ctx *ctx, ts_graph *g, ts_buf *where);
/* Where prim::Constant values come from when code is built (default, fn
 * NULL: ts_rt_iv_from_constant, which copies tensor constants); compiled
 * models wrap their embedded weights instead. Set before any code is built. */
typedef bool (*ts_rt_const_fn)(void *arg, ts_rt_ctx *ctx, const ts_node *n, ts_iv *out);
void ts_rt_interp_set_constants(ts_rt_interp *ip, ts_rt_const_fn fn, void *arg);
/* Runs one node n (of any graph) on `in` (borrowed), writing its outputs
 * (new references) to `out`, as the interpreter runs it inside a graph: its
 * kernel, a structural op (lists, tuples, dicts, ConstantChunk, tolist,
 * ...) or a prim::FusionGroup's Subgraph. Not prim::Constant, If, Loop.
 * What the node needs (its kernel, its instruction, the group's code) is
 * made on its first call, or ahead by ts_rt_interp_prepare_node, and kept
 * (keyed by the node's address: the graph must outlive the interpreter).
 * False with the error in ctx. */
bool ts_rt_interp_node(ts_rt_interp *ip, ts_rt_ctx *ctx, const ts_node *n, const ts_iv *in, uint32_t nin, ts_iv *out,
                       uint32_t nout);
bool ts_rt_interp_prepare_node(ts_rt_interp *ip, ts_rt_ctx *ctx, const ts_node *n);
/* Whether nothing runs node n: an operator the op table lacks (TS_K_OTHER,
 * such as PyTorch's ops in ir/ops_pytorch.def) or an overload without a
 * kernel. The interpreter builds such a node into an instruction that fails
 * when it runs ("Could not run 'aten::bernoulli_' with arguments from the
 * 'CPU' backend: ..."), so a branch never taken costs nothing; tsaot lists
 * what the passes leave of them (passes/pipeline.c). */
bool ts_rt_interp_no_kernel(const ts_node *n);

/* -------------------------------------------------------------- profile.c */

/* Time per node, for tsaot-bench --profile: the interpreter (ts_ip_exec)
 * and compiled code (ts_rt_aot_call, ts_rt_aot_fusion) add one entry per
 * node they run when ctx->profile is set. Only the outermost node is
 * timed (depth): a call or an interpreted fusion group counts as itself,
 * not as the nodes inside it. Keyed by node: graphs must outlive it. */
typedef struct ts_rt_prof_entry {
  const ts_node *node;
  uint64_t calls;
  uint64_t ns;
  /* 0: interpreted; 1: a compiled kernel ran it (a fusion group in native
   * code); 2, 3, 4: its copy for x86-64-v2/v3/v4 (kernels built per level) */
  int native;
} ts_rt_prof_entry;

/* One run of an outermost node, kept while tracing (tsaot-bench --trace):
 * when it started (ns after ts_rt_profile_clear) and for how long, and its
 * outputs' types ("Float(4, 32)", "int") at text[out_at, out_at+out_len). */
typedef struct ts_rt_prof_event {
  const ts_node *node;
  uint64_t start, ns;
  int native;
  uint32_t out_at, out_len;
} ts_rt_prof_event;

/* The most events one trace keeps; later ones are counted in dropped. */
#define TS_RT_PROF_MAX_EVENTS (1u << 20)

typedef struct ts_rt_profile {
  ts_rt_prof_entry *entries; /* nentries, in order of first run */
  uint32_t nentries, cap;
  uint32_t *index;           /* open addressing over entries, 2*cap slots */
  int depth;
  bool failed;               /* out of memory: entries are incomplete */
  /* Tracing (set trace before a run): every outermost node run is also an
   * event, in the order they ran; ts_rt_profile_trace_out adds the outputs
   * of the event just ended. Off, none of this costs anything. */
  bool trace;
  bool ev_open;              /* the last node ended was an event: outputs go to it */
  uint64_t t_start;          /* ts_rt_profile_clear's clock: events' start is after it */
  ts_rt_prof_event *events;
  uint32_t nevents, evcap;
  uint64_t dropped;          /* events past TS_RT_PROF_MAX_EVENTS or out of memory */
  ts_buf ev_text;            /* the events' output types */
} ts_rt_profile;

/* Monotonic nanoseconds (context.c). */
uint64_t ts_rt_now_ns(void);
/* Starts timing a node: true when this is the outermost one (then call
 * ts_rt_profile_end with the start time), false inside another node. */
static inline bool ts_rt_profile_begin(ts_rt_profile *p) { return p->depth++ == 0; }
void ts_rt_profile_end(ts_rt_profile *p, bool outer, const ts_node *n, uint64_t t0, int native);
void ts_rt_profile_clear(ts_rt_profile *p);
void ts_rt_profile_free(ts_rt_profile *p);
/* A node as a profile row names it: its kind ("aten::conv2d"), and for a
 * fusion group the kinds inside it in order ("mul+add+sigmoid"). */
void ts_rt_profile_describe(const ts_node *n, ts_buf *detail);
/* Tracing: adds the type of one output (v) of the event just ended; does
 * nothing when not tracing or when that node was not an event. */
void ts_rt_profile_trace_out(ts_rt_profile *p, const ts_iv *v);
/* An event as a trace row's detail (include/tsaot.h, NAME_profile(2)): three
 * fields joined by tabs: the fused ops ("mul+add", "" for another node), the
 * source "file:line" ("" if unknown), the outputs' types joined by "; ". */
void ts_rt_profile_event_detail(const ts_rt_profile *p, uint32_t i, ts_buf *out);

/* ------------------------------------------------------------------ cpu.c */

/* The x86-64 microarchitecture level the running CPU and OS support: 4
 * (x86-64-v4: AVX-512 F/BW/CD/DQ/VL with the OS saving ZMM state), 3
 * (x86-64-v3: AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE, the OS saving YMM
 * state), 2 (x86-64-v2: SSE4.2, POPCNT, CMPXCHG16B, LAHF/SAHF), 1 (less);
 * 0 when not built for x86-64. Detected once per process (thread-safe);
 * TSAOT_CPU_LEVEL=N in the environment lowers it to N. */
int ts_rt_cpu_level(void);
/* "x86-64-v3" for 3, ... */
const char *ts_rt_cpu_level_name(int level);

#endif
