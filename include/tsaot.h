/* tsaot.h: the C ABI of code that tsaot generates (stable; ../shared/DESIGN.md,
 * "Generated code").
 *
 * `tsaot model.pt -o model.so --name NAME` exports the functions below with
 * NAME_ in front (NAME defaults to "model"); `tsaot model.pt -c -o model.o`
 * writes model.o and model.h, which includes this header and declares them
 * with TSAOT_DECLARE_MODEL(NAME).
 *
 * Tensors are DLPack DLTensors on the CPU (kDLCPU), of dtypes float32/64,
 * float16, bfloat16, int64/32/16/8, uint8, bool and complex64/128; strides NULL means
 * compact row-major. Outputs are the forward's results flattened
 * depth-first (tuples and lists element by element, a List[int]/List[float]
 * as one int64/float64 tensor, numbers as 0-d tensors, None as nothing), as
 * `tsaot-run` writes them.
 *
 * Inputs are the forward's arguments after self, in order, flattened
 * depth-first into one array of DLTensors ("slots"), each argument by its
 * declared type:
 *   Tensor                   one tensor
 *   int, float, bool         a 0-d int64, float64 or bool tensor (any
 *                            integral dtype for an int, integral or floating
 *                            for a float)
 *   List[int], List[float],  one 1-d int64, float64 or bool tensor of the
 *   List[bool]               items
 *   str                      a 1-d uint8 tensor of its UTF-8 bytes (no NUL;
 *                            invalid UTF-8 is refused)
 *   Optional[T]              None: one TSAOT_NONE (data NULL, ndim -1);
 *                            otherwise T's slots
 *   Tuple[A, B, ...]         A's slots, then B's, ...
 *   List[T], other T         a 0-d integral tensor holding the length n,
 *                            then n times T's slots
 * so `forward(q, k, v, key_padding_mask: Optional[Tensor])` takes 4 slots
 * (the last a TSAOT_NONE or a tensor), `forward(xs: List[Tensor])` given 3
 * tensors takes 4 (a 0-d int64 holding 3, then the tensors), and
 * `forward(p: Tuple[Tensor, Optional[Tensor]])` 2. Tensor, int, float and bool
 * arguments take one slot each, as in ABI version 1. Dict, Device and object
 * arguments do not cross the ABI (tsaot refuses such a forward, naming the
 * argument).
 *
 * A model compiled for example inputs is specialised to their form: each
 * tensor's dtype and sizes, None or a value for an Optional, each list's
 * length. Inputs of another form run in the embedded interpreter (unless
 * built with --no-fallback), with the same results. NAME_input_spec
 * describes the slots of the specialisation.
 *
 * Threads: NAME_run and NAME_run_static may be called by several threads
 * at once on the same model (run_static with one arena per concurrent
 * call); each call has its own state, and NAME_last_error/last_bailout
 * report the calling thread's last call. Runs of a model that writes its
 * module's attributes or its own constants take turns. NAME_init is
 * optional: the first call runs it, once, whichever thread gets there first.
 * NAME_set_threads, NAME_profile and NAME_release must not be called while
 * runs of the model go on; profiling times one run at a time. Kernel
 * threads (set_threads > 1) are shared by the model's runs: a run that finds
 * them busy runs its kernels on its own thread. OpenBLAS's thread count is
 * process-wide.
 *
 * Init may allocate (it reads the embedded graphs and binds the kernels);
 * NAME_run_static does not allocate with malloc: every tensor of the run and
 * the run's own state live in the caller's arena.
 *
 * Caller tensors are checked, never trusted: a NULL array or pointer, a
 * tensor off the CPU (kDLCPU), of another dtype or lanes != 1, of a rank
 * outside 0..64, a NULL shape, negative sizes or strides, an extent or
 * byte_offset that overflows, NULL data for a non-empty tensor, or data not
 * aligned to its elements is refused with TSAOT_E_INPUT (inputs) or
 * TSAOT_E_OUTPUT (outputs) and the reason in NAME_last_error; so are a
 * TSAOT_NONE for an argument that is not Optional, a list length below 0 or
 * past the slots given, a str that is not a 1-d uint8 tensor of UTF-8, and
 * slots left over or missing at the end. The reason names the slot
 * ("input 3 (xs[1]): ..."). No entry point aborts or exits.
 */
#ifndef TSAOT_H
#define TSAOT_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: Optional, List, Tuple and str arguments (the slots above), the spec
 * kinds TSAOT_SPEC_NONE .. TSAOT_SPEC_LIST and the TSAOT_SPEC_OPTIONAL flag,
 * NAME_num_inputs -1; version 1's tensor, int, float and bool arguments
 * keep their layout. */
#define TSAOT_ABI_VERSION 2

/* Return codes. */
enum {
  TSAOT_OK = 0,
  TSAOT_E_INPUT = 1,  /* inputs off the compiled specialisation (built with
                         --no-fallback), or not tensors the ABI takes */
  TSAOT_E_RUN = 2,    /* the model raised, or an op failed (bad shapes, ...) */
  TSAOT_E_ARENA = 3,  /* run_static: arena too small or not 64-byte aligned */
  TSAOT_E_OUTPUT = 4, /* run_static: outputs other than the caller's tensors
                         (count, dtype, shape) or tensors the ABI does not
                         take; run: more than max_outputs, or NULL outputs
                         or noutputs */
  TSAOT_E_INIT = 5,   /* the embedded program could not be loaded (out of memory) */
  TSAOT_E_DEVICE = 6, /* set_device: no such device, no driver, or a library
                         without GPU code; a GPU run: the device failed */
};

/* What NAME_device_stats reports: where runs go and, on a GPU, what they
 * did since NAME_set_device. */
typedef struct tsaot_device_stats {
  int32_t device_type;       /* kDLCPU or kDLCUDA */
  int32_t device_id;
  uint64_t kernel_launches;  /* fused kernels run on the GPU */
  uint64_t gemms;            /* cuBLAS calls */
  uint64_t host_ops;         /* ops that ran on the CPU with data from the GPU */
  uint64_t bytes_to_device, bytes_to_host;
  const char *description;   /* "cpu", or "cuda:0, 12 kernels (sm_80), cuBLAS: yes"; valid
                                until the next set_device or release */
} tsaot_device_stats;

/* What an input slot or output must be: a kind, with TSAOT_SPEC_OPTIONAL
 * or'ed in for a slot of an Optional argument (or element), where a
 * TSAOT_NONE may stand instead of the value's slots (if the
 * specialisation has a value there, a None runs in the interpreter, and
 * the other way round). Outputs only have kinds 0 to 3. */
enum {
  TSAOT_SPEC_TENSOR = 0,
  TSAOT_SPEC_INT = 1,    /* a 0-d int64 tensor */
  TSAOT_SPEC_FLOAT = 2,  /* a 0-d float64 tensor */
  TSAOT_SPEC_BOOL = 3,   /* a 0-d bool tensor */
  TSAOT_SPEC_NONE = 4,   /* the specialisation's None: a TSAOT_NONE */
  TSAOT_SPEC_LENGTH = 5, /* a list's length: a 0-d int64 tensor; shape[0] is
                            the length compiled for (the element slots follow),
                            or -1 when any length runs compiled code (one
                            element's specs follow, standing for each) */
  TSAOT_SPEC_STR = 6,    /* a str: a 1-d uint8 tensor of UTF-8 bytes */
  TSAOT_SPEC_LIST = 7,   /* a List[int]/List[float]/List[bool]: a 1-d int64,
                            float64 or bool tensor */
  TSAOT_SPEC_OPTIONAL = 0x100, /* flag */
  TSAOT_SPEC_KIND_MASK = 0xff,
};

typedef struct tsaot_spec {
  int32_t kind;        /* TSAOT_SPEC_*, maybe | TSAOT_SPEC_OPTIONAL */
  DLDataType dtype;    /* the slot's dtype (numbers: their 0-d tensor's;
                          TSAOT_SPEC_NONE: 0 bits) */
  int32_t ndim;        /* -1: any rank */
  const int64_t *shape;/* ndim sizes; -1 for a size the code does not fix
                          (TSAOT_SPEC_LENGTH: one entry, the length) */
} tsaot_spec;

/* A None argument's slot: a DLTensor whose data is NULL and ndim -1 (the
 * other fields are not read). TSAOT_NONE_INIT initialises one; tsaot_none()
 * returns one. */
#define TSAOT_NONE_INIT {NULL, {kDLCPU, 0}, -1, {0, 0, 0}, NULL, NULL, 0}

static inline DLTensor tsaot_none(void) {
  DLTensor t = TSAOT_NONE_INIT;
  return t;
}

static inline int tsaot_is_none(const DLTensor *t) { return t->data == NULL && t->ndim == -1; }

/* A 0-d int64 tensor viewing *v: an int argument, or a list's length. */
static inline DLTensor tsaot_int64(int64_t *v) {
  DLTensor t = {v, {kDLCPU, 0}, 0, {kDLInt, 64, 1}, NULL, NULL, 0};
  return t;
}

/* A str argument: a 1-d uint8 tensor viewing the n bytes at s; *n is its
 * shape, which must live as long as the tensor. */
static inline DLTensor tsaot_str(const char *s, int64_t *n) {
  DLTensor t = {(void *)s, {kDLCPU, 0}, 1, {kDLUInt, 8, 1}, n, NULL, 0};
  return t;
}

/* The arena alignment run_static needs. */
#define TSAOT_ARENA_ALIGN 64

/* One row of a profile (NAME_profile_rows): a node of the compiled graph,
 * how often it ran and for how long in all. */
typedef struct tsaot_profile_row {
  const char *op;     /* its kind: "aten::conv2d", "prim::FusionGroup", ... */
  const char *detail; /* a fusion group's ops ("mul+add+relu"); else "" */
  int native;         /* nonzero: a kernel compiled into this library ran it; 2, 3, 4:
                         its copy for x86-64-v2, v3, v4 (kernels built per level) */
  uint64_t calls;     /* tracing (NAME_profile(2)): the run's start, ns */
  uint64_t ns;        /* wall-clock nanoseconds, in all */
} tsaot_profile_row;

#define TSAOT_DECLARE_MODEL(NAME)                                                                          \
  /* Loads the embedded program (0 or TSAOT_E_INIT). */                                                    \
  int NAME##_init(void);                                                                                   \
  /* Frees what init and runs allocated. */                                                                \
  void NAME##_release(void);                                                                               \
  /* Input slots of the specialisation (see above); -1 when that depends on                                \
   * the values (a List[Tensor] or Optional[Tuple] compiled without an                                     \
   * example): then input_spec(0), (1), ... until it fails give one form. */                               \
  int NAME##_num_inputs(void);                                                                             \
  /* Flattened outputs of the specialisation; -1 when only a run knows. */                                 \
  int NAME##_num_outputs(void);                                                                            \
  int NAME##_input_spec(int i, tsaot_spec *out);                                                           \
  int NAME##_output_spec(int i, tsaot_spec *out);                                                          \
  /* Bytes NAME##_run_static needs. */                                                                     \
  size_t NAME##_arena_size(void);                                                                          \
  /* Threads for the kernels (<= 0: every processor; default 1). */                                       \
  void NAME##_set_threads(int n);                                                                          \
  /* Where runs go: "cpu" (the default), "cuda" or "cuda:N" (a library built                               \
   * with tsaot --device cuda): fused kernels and GEMMs run on the GPU, the                                \
   * other ops on the CPU, data moved between them only where needed; inputs                               \
   * may be kDLCPU or kDLCUDA tensors, outputs are kDLCPU. run_static is CPU                               \
   * only. Not while runs are in flight. 0 or TSAOT_E_DEVICE (last_error                                   \
   * says why: no driver, no such GPU, no GPU code; the model stays where                                  \
   * it was). */                                                                                           \
  int NAME##_set_device(const char *device);                                                               \
  int NAME##_device_stats(tsaot_device_stats *out);                                                        \
  /* Runs forward; outputs are new DLManagedTensors the caller frees with                                 \
   * their deleter; *noutputs says how many. Inputs off the specialisation                                 \
   * run in the embedded interpreter (unless built with --no-fallback). */                                 \
  int NAME##_run(const DLTensor *inputs, int ninputs, DLManagedTensor **outputs, int max_outputs,          \
                 int *noutputs);                                                                           \
  /* Runs forward with every tensor in `arena` (arena_size bytes, 64-byte                                  \
   * aligned) and copies the results into the caller's `outputs` (their                                    \
   * dtypes and shapes must be the output specs'). No malloc. */                                           \
  int NAME##_run_static(const DLTensor *inputs, int ninputs, DLTensor *outputs, int noutputs, void *arena, \
                        size_t arena_size);                                                                \
  /* Why the calling thread's last call failed, or why its last run left                                   \
   * the compiled code ("" if it did not); valid until its next call (a                                    \
   * thread remembers its last 4 models). */                                                               \
  const char *NAME##_last_error(void);                                                                     \
  /* 1 if the calling thread's last run ran in the interpreter because its                                 \
   * inputs were off the specialisation. */                                                                \
  int NAME##_last_bailout(void);                                                                           \
  /* Profiling, for tsaot-bench --profile: 1 starts timing every node from                                 \
   * zero (a clock read around each), 0 stops. One run at a time while on.                                 \
   * 2 (tsaot-bench --trace) also keeps each node run as an event: then                                    \
   * profile_rows gives one row per node run, in the order they ran, calls                                 \
   * its start (ns after NAME##_profile(2)), ns its length, detail three                                   \
   * fields joined by tabs: the fused ops, the source file:line, the output                                \
   * types ("Float(4, 32); int"), each possibly empty. (A library from a                                   \
   * tsaot before --trace takes 2 as 1: no tab in its details.) */                                         \
  int NAME##_profile(int enable);                                                                          \
  /* The nodes timed since profiling started, in order of first run: writes                                \
   * at most max rows and returns how many there are. The strings live until                               \
   * the next call of NAME##_profile_rows, NAME##_profile or release. */                                   \
  int NAME##_profile_rows(tsaot_profile_row *rows, int max);                                               \
  /* forward's arguments after self, one line each, "name: type\n" (the                                    \
   * parameter's name, "" if unknown; TorchScript's type text: Tensor, int,                                \
   * float, bool, str, T? for Optional, T[] for List, (A, B) for Tuple), for                               \
   * callers that build the slots from a language's values. Newer than ABI                                 \
   * version 2 and optional: libraries from older compilers lack it. */                                    \
  const char *NAME##_signature(void);

#ifdef __cplusplus
}
#endif

#endif
