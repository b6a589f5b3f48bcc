/* runtime/hosted/aot.h: what generated code (codegen/) links against.
 *
 * A compiled model is a descriptor (ts_rt_aot_desc) that the generated
 * object defines, an entry function, its fused kernels, and thin exported
 * wrappers NAME_run... that call the ts_rt_aot_* functions below with the
 * descriptor (include/tsaot.h is the public side).
 *
 * Init (ts_rt_aot_init) parses the embedded graph texts, attaches the
 * embedded weights to their tensor constants (no copy: tensors wrap the
 * read-only bytes), and binds every node the entry function calls to its
 * kernel. A run checks the inputs against the specialisation (the guard):
 * on a match the entry function runs, else the fallback graph runs in the
 * interpreter (or, without one, the run fails with TSAOT_E_INPUT and the
 * reason).
 *
 * Nodes are numbered by ts_rt_aot_number_nodes, the same way at compile
 * time and at init: the entry function refers to them by number.
 *
 * Runs are reentrant: init happens once (under a lock), after which the
 * model (graphs, bound nodes, constants, the interpreter's code, the worker
 * pool) is only read; everything a run changes is in its own
 * ts_rt_aot_state (the arena pointer, ctx, arguments, results, error
 * text), from a free list (run) or the caller's arena (run_static).
 * Constants are TS_RT_RC_SHARED, so runs on several threads retain and
 * release them without writing them. Runs that change shared state (a module's
 * attributes, constants the graph writes) take turns on a mutex.
 */
#ifndef TS_RT_AOT_H
#define TS_RT_AOT_H

#include "runtime.h"

#include <dlpack/dlpack.h>

/* 2: ts_rt_aot_fusion takes a kernel's copies per x86-64 level; 3: the
 * descriptor's signature, leaves and nslots (include/tsaot.h's argument
 * slots); 4: tconst flags (never written), the descriptor's module_ops */
#define TS_RT_AOT_ABI 4

struct tsaot_profile_row; /* include/tsaot.h */

/* A tensor constant's bytes in the embedded weights. */
typedef struct ts_rt_aot_tconst {
  uint64_t offset; /* in desc->weights, 64-byte aligned */
  uint64_t nbytes;
  int32_t dtype;   /* ts_dtype */
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
  uint32_t flags;  /* TS_RT_AOT_TCONST_* */
} ts_rt_aot_tconst;

/* ts_rt_aot_tconst.flags, decided by the compiler (the runtime analyses no
 * graph). Without NEVER_WRITTEN the constant gets a writable copy of its
 * bytes at init. */
enum {
  TS_RT_AOT_TCONST_NEVER_WRITTEN = 1u << 0, /* no node writes it (ts_pass_mark_never_written) */
};

/* One input slot or output of the specialisation: include/tsaot.h's
 * tsaot_spec kinds (TSAOT_SPEC_TENSOR ..., | TSAOT_SPEC_OPTIONAL), and for
 * an input TS_RT_AOT_SPEC_OPEN where the compiled code takes None too (an
 * Optional compiled without an example: None skips the value's template
 * specs, ts_rt_io_template_slots). A TSAOT_SPEC_LENGTH's sizes[0] is the
 * list length compiled for, or -1 (then one element's specs follow, which
 * every element matches). */
typedef struct ts_rt_aot_spec {
  int32_t kind;
  int32_t dtype;  /* ts_dtype: a tensor's (TS_DT_NONE: any), a slot's for the other kinds */
  int32_t ndim;   /* -1: any */
  const int64_t *sizes; /* ndim (a length: 1); -1: any size */
} ts_rt_aot_spec;

#define TS_RT_AOT_SPEC_OPEN 0x200

/* One run's state (what the entry function gets) and what init makes,
 * shared by the runs (aot.c). */
typedef struct ts_rt_aot_state ts_rt_aot_state;
typedef struct ts_rt_aot_model ts_rt_aot_model;

/* The fields the entry function reads, first and in this order; the rest
 * of the state is the runtime's. */
typedef struct ts_rt_aot_state_head {
  uint8_t *arena; /* the planned region of the current run (64-byte aligned) */
} ts_rt_aot_state_head;

/* The entry function: args[0] is self (None: frozen graphs do not read
 * it), then the user's inputs; writes the graph's outputs (new references)
 * to rets. False after an error (recorded through ts_rt_aot_fail_node or
 * the helpers below). */
typedef bool (*ts_rt_aot_entry_fn)(ts_rt_aot_state *st, ts_rt_ctx *ctx, ts_iv *args, ts_iv *rets);

/* The archive loader (loader/loader.h: ts_rt_model_aot_ops) as init and
 * runs call it for a model that embeds its archive: a table the object
 * names, so that the runtime links no frontend and only such models link
 * the loader. `model` is the loader's ts_rt_model. */
typedef struct ts_rt_aot_module_ops {
  void *(*load)(const void *data, size_t len, const char *name, ts_diag *d);
  bool (*run_graph)(void *model, ts_rt_ctx *ctx, const char *method, ts_graph *g, const ts_iv *args, uint32_t nargs,
                    ts_iv *ret, ts_buf *where);
  void (*free)(void *model);
} ts_rt_aot_module_ops;

/* What the generated object defines (writable: init fills `state`). */
typedef struct ts_rt_aot_desc {
  uint32_t abi;             /* TS_RT_AOT_ABI */
  const char *name;
  const char *graph;        /* the specialised graph, in ts_graph_print's text */
  uint64_t graph_len;
  const char *fallback;     /* the unspecialised graph; NULL with --no-fallback */
  uint64_t fallback_len;
  const uint8_t *weights;   /* 64-byte aligned */
  uint64_t weights_len;
  /* tensor constants in ts_rt_aot_tensor_consts order: the graph's first,
   * then the fallback's */
  const ts_rt_aot_tconst *tconsts;
  uint32_t ntconsts_graph, ntconsts_fallback;
  uint32_t nnodes;          /* ts_rt_aot_number_nodes(graph) */
  ts_rt_aot_entry_fn entry; /* NULL: the graph runs in the interpreter */
  uint32_t ninputs;         /* input specs: one per slot of the specialisation
                               (with open lists and optionals: of one form) */
  const ts_rt_aot_spec *inputs;
  int32_t noutputs;         /* flattened; -1: not static */
  const ts_rt_aot_spec *outputs;
  uint64_t arena_plan;      /* bytes of planned tensors */
  uint64_t arena_heap;      /* bytes for everything else in run_static,
                               a run's state (ts_rt_aot_call_bytes) included */
  ts_rt_aot_model *state;   /* NULL until init (published once loaded) */
  /* The model's archive (the .pt bytes), for graphs that still read or
   * write the module's state (prim::GetAttr/SetAttr on self, calls through
   * module interfaces): they run in the interpreter with the module object
   * as self. NULL otherwise. run_static is not available then. */
  const uint8_t *archive;
  uint64_t archive_len;
  /* forward's arguments after self, the ABI's (include/tsaot.h): a line
   * "name: type\n" each, the type as ts_type_print writes it. NULL: the
   * graph's own inputs after self (then nslots is ninputs). */
  const char *signature;
  uint64_t signature_len;
  /* 1: the graph's inputs after self are the arguments' leaves in slot
   * order (ts_rt_io_leaves: a specialisation to examples fixes None values
   * and list lengths, so they are no inputs), and the fallback graph takes
   * the arguments; 0: both take the arguments */
  uint32_t leaves;
  int32_t nslots;           /* NAME_num_inputs: the specialisation's slots, -1 when they vary */
  const ts_rt_aot_module_ops *module_ops; /* with archive: &ts_rt_model_aot_ops; else NULL */
} ts_rt_aot_desc;

/* ------------------------------------------------------- numbering (aot.c) */

/* The nodes the entry function runs, numbered in pre-order: a node, then
 * the nodes of its blocks in order; prim::Param/Return are not numbered and
 * fusion subgraphs are not entered. Writes them to out (if not NULL);
 * returns the count. */
uint32_t ts_rt_aot_number_nodes(ts_graph *g, ts_node **out);
/* prim::Constant nodes holding a tensor, in pre-order entering blocks and
 * then Subgraph attributes. Writes them to out (if not NULL); returns the
 * count. */
uint32_t ts_rt_aot_tensor_consts(ts_graph *g, ts_node **out);
/* Whether the entry function can run node n through ts_rt_aot_call: it has
 * a kernel, or is one of the structural ops (lists, tuples, dicts,
 * ConstantChunk, an interpreted FusionGroup, ...), or nothing runs it
 * (ts_rt_interp_no_kernel: the call fails as the interpreter's does). False
 * with the reason in d (prim::GetAttr on a module, CallMethod, ...). */
bool ts_rt_aot_node_supported(const ts_node *n, ts_diag *d);

/* ------------------------------------- the ABI (aot.c), called by wrappers */

int ts_rt_aot_init(ts_rt_aot_desc *desc);
void ts_rt_aot_release(ts_rt_aot_desc *desc);
int ts_rt_aot_num_inputs(ts_rt_aot_desc *desc);
int ts_rt_aot_num_outputs(ts_rt_aot_desc *desc);
/* tsaot_spec is include/tsaot.h's; declared here as void to keep the two
 * headers apart */
int ts_rt_aot_input_spec(ts_rt_aot_desc *desc, int i, void *tsaot_spec_out);
int ts_rt_aot_output_spec(ts_rt_aot_desc *desc, int i, void *tsaot_spec_out);
size_t ts_rt_aot_arena_size(ts_rt_aot_desc *desc);
/* Bytes of one run's state for nparams argument values (the graph's
 * inputs, self included, plus forward's arguments and self when the graph
 * takes leaves) and nrets outputs: run_static lays it out in the arena
 * after the plan, so the compiler adds it to arena_heap. */
uint64_t ts_rt_aot_call_bytes(uint32_t nparams, uint32_t nrets);
void ts_rt_aot_set_threads(ts_rt_aot_desc *desc, int n);
/* image: the library's ts_rt_cuda_image (NULL: compiled for the CPU only);
 * device "cpu", "cuda", "cuda:N" (runtime/hosted/gpu.h) */
int ts_rt_aot_set_device(ts_rt_aot_desc *desc, const void *image, const char *device);
/* out: include/tsaot.h's tsaot_device_stats */
int ts_rt_aot_device_stats(ts_rt_aot_desc *desc, void *tsaot_device_stats_out);
int ts_rt_aot_run(ts_rt_aot_desc *desc, const DLTensor *inputs, int ninputs, DLManagedTensor **outputs,
                  int max_outputs, int *noutputs);
int ts_rt_aot_run_static(ts_rt_aot_desc *desc, const DLTensor *inputs, int ninputs, DLTensor *outputs,
                         int noutputs, void *arena, size_t arena_size);
const char *ts_rt_aot_last_error(ts_rt_aot_desc *desc);
int ts_rt_aot_last_bailout(ts_rt_aot_desc *desc);
int ts_rt_aot_profile(ts_rt_aot_desc *desc, int enable);
/* rows: include/tsaot.h's tsaot_profile_row */
int ts_rt_aot_profile_rows(ts_rt_aot_desc *desc, struct tsaot_profile_row *rows, int max);

/* ------------------------------------------------ DLPack tensors (aot.c) */

/* A new runtime tensor viewing dl's memory (no copy: the memory must
 * outlive the tensor). CPU only; the ten dtypes, bool as DLPack 0.8's
 * kDLBool (code 6, 8 bits); strides NULL means row-major; no negative
 * strides. NULL with the reason in c. */
ts_rt_tensor *ts_rt_tensor_from_dl(ts_rt_ctx *c, const DLTensor *dl);
/* Fills dl to view t: its data, sizes and strides (valid while t lives).
 * False for a dtype outside the ten. */
bool ts_rt_tensor_to_dl(const ts_rt_tensor *t, DLTensor *dl);

/* -------------------------------------- helpers the entry function calls
 * Slots are the entry function's frame: one ts_iv per value, owned
 * references, None when empty. */

/* Runs node k (not a prim::Constant, If or Loop, nor a compiled fusion
 * group): gathers ins[] (borrowed), calls its kernel, stores the results
 * into outs[] (releasing what was there). With plan_nbytes > 0 the node's
 * first output may be created at st->arena + plan_off (the memory plan;
 * the kernel's ts_rt_tensor_new takes it through ctx->plan). */
bool ts_rt_aot_call(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, ts_iv *const *ins, uint32_t nin,
                    ts_iv *const *outs, uint32_t nout, int64_t plan_off, uint64_t plan_nbytes);
/* slot = the value of prim::Constant node k (retained). */
void ts_rt_aot_const(ts_rt_aot_state *st, uint32_t k, ts_iv *slot);
/* A compiled fusion group (node k): makes its outputs (ndim, sizes; dtype
 * out_dtypes[j]; at st->arena + out_offs[j] when that is >= 0, else
 * allocated), checks that every tensor input broadcasts to sizes, fills
 * ts_cg_kargs and runs kernel(args, begin, end) over the range through
 * ts_rt_parallel_for. ops[] are the slots of the group's inputs then its
 * outputs. The kernel is kernels[0] when nkernels is 1 (one copy, for the
 * CPU the library was built for); with TS_RT_AOT_KERNEL_LEVELS copies
 * (x86-64-v2, v3, v4: tsaot's default) the best one ts_rt_cpu_level
 * allows. */
typedef void (*ts_rt_aot_kernel_fn)(const void *kargs, int64_t begin, int64_t end);
#define TS_RT_AOT_KERNEL_LEVELS 3
bool ts_rt_aot_fusion(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_rt_aot_kernel_fn *kernels,
                      uint32_t nkernels, ts_iv *const *ops, uint32_t nin, uint32_t nout, int32_t ndim,
                      const int64_t *sizes, const int32_t *out_dtypes, const int64_t *out_offs);
/* *slot: release and set None. */
void ts_rt_aot_release_slot(ts_iv *slot);
/* *dst = *src (retained); the old *dst released. */
void ts_rt_aot_copy_slot(ts_iv *dst, const ts_iv *src);
/* *slot = int i (the old value released). */
void ts_rt_aot_set_int(ts_iv *slot, int64_t i);
/* Reads a bool (prim::If's condition, prim::Loop's) or an int (a loop's
 * trip count) of node k; false with an error naming the node otherwise. */
bool ts_rt_aot_get_bool(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_iv *slot, bool *out);
bool ts_rt_aot_get_int(ts_rt_aot_state *st, ts_rt_ctx *ctx, uint32_t k, const ts_iv *slot, int64_t *out);

#endif
