/* codegen/codegen.h: the one header of tsaot's code generator (LLVM 16,
 * through its C API only).
 *
 * An optimized, specialised graph (passes/) becomes one LLVM module:
 *   - each prim::FusionGroup whose values all have complete types becomes a
 *     native kernel (fusion.c), vectorised by LLVM's loop vectorizer for the
 *     target (by default once per x86-64 level, v2, v3 and v4, the runtime
 *     choosing the copy), transcendentals from our own polynomials (math.c);
 *   - the entry function (entry.c) runs the graph: control flow compiled,
 *     fused kernels called directly, every other node a call into the
 *     runtime's kernel for it;
 *   - tensors of static shape get offsets in one activation arena
 *     (memplan.c);
 *   - a descriptor (ts_rt_aot_desc, runtime/hosted/aot.h) ties it to the runtime:
 *     graph texts, embedded weights, input specs, the arena's size;
 *   - emit.c writes the object, links the shared library, writes the
 *     header of `-c`.
 *   - with --device cuda, nvptx.c lowers the fusion groups once more, to
 *     one PTX module embedded as NAME_cuda (runtime/hosted/cuda.h).
 *
 * Errors: every function that can fail takes a ts_diag and returns
 * NULL/false with the reason there; nothing aborts or prints. Exported
 * names use the ts_cg_ prefix.
 */
#ifndef TS_CG_CODEGEN_H
#define TS_CG_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "cuda.h" /* the GPU kernel table the runtime reads (nvptx.c) */
#include "ir.h"
#include "passes.h" /* ts_pass_form: the argument forms of a specialisation */

/* ---------------------------------------------------------------- module.c */

/* The target. cpu NULL on x86-64: the portable default, x86-64-v2 for the
 * whole module and each fused kernel once per level (x86-64-v2, v3, v4;
 * ts_cg_fusion_kernels), the runtime choosing the copy by the CPU it runs
 * on (runtime/cpu.c); with features the module's CPU is x86-64-v2 with
 * them and there is one copy. cpu "native": the host's CPU and features
 * (LLVMGetHostCPUName/Features), one copy: code for this machine only. A
 * named cpu: that CPU and its own features (plus `features`), one copy.
 * On another architecture cpu NULL is its generic CPU. */
typedef struct ts_cg_target_opts {
  const char *triple;   /* NULL: the host's */
  const char *cpu;      /* NULL: the portable default (above); "native": the host's */
  const char *features; /* NULL: the CPU's own ("native": the host's); else "+a,-b" */
  int opt_level;        /* 0..3 */
} ts_cg_target_opts;

/* Copies of each fused kernel in the portable default: x86-64-v2, v3, v4
 * (runtime/hosted/aot.h's TS_RT_AOT_KERNEL_LEVELS). */
#define TS_CG_LEVELS 3

/* One module being generated, with the types everyone needs. */
typedef struct ts_cg_module {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMTargetMachineRef tm;
  LLVMTargetDataRef td;
  int opt_level;
  /* copies of each fused kernel: TS_CG_LEVELS in the portable default
   * (the module's own CPU is the first level's), else 1 */
  uint32_t nlevels;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f16, t_f32, t_f64, t_ptr;
} ts_cg_module;

/* Initialises LLVM's targets (once), makes a context, module `name` and the
 * target machine (PIC, for shared libraries and static linking alike). */
bool ts_cg_module_init(ts_cg_module *m, const char *name, const ts_cg_target_opts *o, ts_diag *d);
void ts_cg_module_dispose(ts_cg_module *m);
/* Runs LLVM's `default<On>` pipeline (the module's opt level) over the
 * module, after verifying it. */
bool ts_cg_module_optimize(ts_cg_module *m, ts_diag *d);
/* Runs the pass pipeline text (LLVMRunPasses) over the module; takes po
 * (NULL: default options). */
bool ts_cg_module_run_passes(ts_cg_module *m, const char *pipeline, LLVMPassBuilderOptionsRef po, ts_diag *d);
/* The CPU of kernel copy `level` (0 .. nlevels-1): "x86-64-v3" for 1 in
 * the portable default; NULL with one copy (the module's own CPU). */
const char *ts_cg_module_level_cpu(const ts_cg_module *m, uint32_t level);
/* Has fn built for copy `level`'s CPU: its "target-cpu" (the loop
 * vectoriser and the backend read it per function), for x86-64-v4 also
 * "prefer-vector-width"="512" (LLVM's v4 prefers 256-bit vectors; 512 runs
 * elementwise_chain twice as fast on Zen 4, as --cpu native does); nothing
 * with one copy. */
void ts_cg_module_set_level(ts_cg_module *m, LLVMValueRef fn, uint32_t level);
/* Declares (once) an external function of the runtime. */
LLVMValueRef ts_cg_module_extern(ts_cg_module *m, const char *name, LLVMTypeRef fnty);
/* A private constant global `name` with initializer `init`, aligned `align`
 * (0: the type's own alignment). */
LLVMValueRef ts_cg_module_const(ts_cg_module *m, const char *name, LLVMValueRef init, unsigned align);

/* ------------------------------------------------------------------ math.c
 *
 * Transcendentals as our own branch-free polynomial approximations, so that
 * the loop vectorizer turns them into vector code (a libm call would stop
 * it). float32: a few ulp from the correctly rounded result over the whole
 * range, with IEEE behaviour at inf, nan, denormals and overflow (tested
 * against float64 in tests/unit/test_cg_math.c). float64 calls the C
 * library (exact, not vectorised). Each is a private, always-inline
 * function of the module ("tsaot.expf"), made on first use. */
typedef enum ts_cg_math_fn {
  TS_CG_EXP,
  TS_CG_EXPM1,
  TS_CG_LOG,
  TS_CG_LOG1P,
  TS_CG_LOG2,
  TS_CG_LOG10,
  TS_CG_TANH,
  TS_CG_SIGMOID,
  TS_CG_ERF,
  TS_CG_ERFC,
  TS_CG_GELU_ERF,  /* x * 0.5 * (1 + erf(x / sqrt(2))), gelu(approximate='none') */
  TS_CG_GELU_TANH, /* gelu(approximate='tanh') */
  TS_CG_POW,       /* two arguments; C's powf semantics */
  TS_CG_SIN,
  TS_CG_COS,
  TS_CG_MATH_COUNT
} ts_cg_math_fn;

/* Calls the function for x (and y for TS_CG_POW) of type float or double.
 * NULL (with the reason in d, if d) for another type. */
LLVMValueRef ts_cg_math_call(ts_cg_module *m, LLVMBuilderRef b, ts_cg_math_fn fn, LLVMValueRef x, LLVMValueRef y,
                             ts_diag *d);
/* The function itself (for tests: its name, type and linkage can be changed). */
LLVMValueRef ts_cg_math_get(ts_cg_module *m, ts_cg_math_fn fn, LLVMTypeRef fty, ts_diag *d);
const char *ts_cg_math_name(ts_cg_math_fn fn); /* "exp" */

/* ---------------------------------------------------------------- fusion.c
 *
 * A fused kernel: `void NAME(const ts_cg_kargs *a, int64_t begin, int64_t end)`
 * so that ts_rt_parallel_for can split it. The group's inputs and outputs
 * are numbered together (inputs first, then outputs): ptrs[k] is a tensor's
 * first element (ts_rt_tensor_data), or for a scalar input (int, float,
 * bool) the address of its value (int64_t, double, or bool as one byte).
 * All outputs have the group's output shape (`sizes`, ndim of them, baked
 * into the kernel from the complete types) and are contiguous; inputs are
 * broadcast to it: strides[k * ndim + d] is input k's stride along output
 * dimension d in elements (0 where broadcast). With `contig` nonzero every
 * tensor input is contiguous with the output's shape and [begin, end)
 * counts elements; otherwise [begin, end) counts rows (every dimension but
 * the last; one row for a 0-d or 1-d output) and the kernel walks the last
 * dimension with the strides. ts_rt_aot_fusion_prepare (runtime/hosted/aot.h)
 * fills the struct. */
typedef struct ts_cg_kargs {
  void **ptrs;
  const int64_t *strides;
  int64_t contig;
} ts_cg_kargs;

/* Lowers a prim::FusionGroup node to a kernel named `name` (external
 * linkage is not needed: private). NULL with the reason in d when the group
 * cannot be compiled (a value without a complete type, an op or dtype the
 * lowering table lacks); the caller then runs the group through the
 * interpreter. Every output of the group must have the same sizes. */
LLVMValueRef ts_cg_fusion_kernel(ts_cg_module *m, const ts_node *group, const char *name, ts_diag *d);
/* The kernel once per copy of m (m->nlevels: TS_CG_LEVELS in the portable
 * default), each for its level's CPU (ts_cg_module_set_level), named
 * NAME.v2, NAME.v3, NAME.v4 (NAME alone with one copy), into out[]. 0 with
 * the reason in d as ts_cg_fusion_kernel, else m->nlevels. */
uint32_t ts_cg_fusion_kernels(ts_cg_module *m, const ts_node *group, const char *name, LLVMValueRef *out, ts_diag *d);
/* The GPU form of the same lowering (nvptx.c; m an NVPTX module):
 * `void NAME(...)` with one parameter per group input then output (kinds
 * in param_kinds, TS_RT_CUDA_PARAM_*, when not NULL: ninputs + noutputs of
 * them): a tensor's device pointer (global address space), every tensor
 * contiguous in its own sizes and inputs broadcast to the output by the
 * types; an int as i64, a float as double, a bool as i8 by value. A
 * grid-stride loop over k->nelems output elements in i32 or i64
 * (k->index64). External linkage; the caller marks it a kernel. NULL as
 * ts_cg_fusion_kernel. */
typedef struct ts_cg_gpu_kernel ts_cg_gpu_kernel;
LLVMValueRef ts_cg_fusion_kernel_gpu(ts_cg_module *m, const ts_node *group, const char *name,
                                     const ts_cg_gpu_kernel *k, uint8_t *param_kinds, ts_diag *d);
/* Whether fusion.c can lower this node of a fusion subgraph (its kind,
 * overload and dtypes); for statistics and tests. */
bool ts_cg_fusion_supports(const ts_node *n, ts_diag *d);

/* --------------------------------------------------------------- memplan.c
 *
 * The activation arena: tensors the entry function creates at a known
 * place. A value is planned when the caller marks it (a FusionGroup output
 * or an op's output of complete, contiguous type, outside loops), it does
 * not escape (no graph output, no container or wildcard may hold it), and
 * it has a static byte size. Its buffer lives from its node to the last use
 * of every value that may alias it (alias analysis); buffers are reused
 * after that, best fit, 64-byte aligned. `inplace_ok(n, in, out)` says
 * whether output `out` of node n may take the buffer of input `in` when
 * this node is that input's last use (the fused kernels: same shape,
 * elementwise). */
typedef struct ts_cg_memplan {
  uint64_t arena_size;   /* bytes; 0 when nothing is planned */
  int64_t *offset;       /* by value id: byte offset in the arena, -1 if not planned */
  uint64_t *nbytes;      /* by value id: the planned size (0 if not planned) */
  uint32_t nvalues;      /* entries in offset/nbytes (the graph's next_value_id) */
  uint32_t nplanned;     /* values planned */
  uint64_t total_bytes;  /* sum of planned sizes (what no reuse would take) */
  uint32_t ninplace;     /* outputs that took an input's buffer */
} ts_cg_memplan;

typedef bool (*ts_cg_plan_want_fn)(void *arg, const ts_value *v);
typedef bool (*ts_cg_plan_inplace_fn)(void *arg, const ts_node *n, const ts_value *in, const ts_value *out);

bool ts_cg_memplan_build(ts_graph *g, ts_cg_plan_want_fn want, ts_cg_plan_inplace_fn inplace_ok, void *arg,
                         ts_cg_memplan *out, ts_diag *d);
void ts_cg_memplan_free(ts_cg_memplan *p);
/* Bytes of a complete, contiguous tensor type (0 if not static). */
uint64_t ts_cg_type_nbytes(const ts_type *t);

/* ----------------------------------------------------------------- nvptx.c
 *
 * `tsaot --device cuda`: every fusion group also becomes an NVPTX kernel
 * (fusion.c's element lowering, math.c's polynomials; the C library's
 * functions, float64 math, from CUDA's libdevice), all of them in one PTX
 * module for `arch`, embedded in the object as the exported global
 * NAME_cuda (a ts_rt_cuda_image, runtime/hosted/cuda.h) with a kernel table.
 * The CPU code is generated as for --device cpu: the runtime's GPU run
 * path (runtime/hosted/gpu.c) launches a kernel where one exists and runs the
 * rest on the CPU. */

/* The emulated kernels' special registers (tid, ntid, ctaid, nctaid): a
 * thread-local [4 x i32] of the host module (fusion.c reads it). */
#define TS_CG_GPU_EMU_SREG "tsaot.gpu.sreg"

/* The most blocks a launch asks for: every GPU since sm_30 takes 2^31-1,
 * but a grid-stride loop needs no more to fill any of them. */
#define TS_CG_GPU_MAX_GRID 65535u

/* A kernel's launch geometry, from its element count. */
struct ts_cg_gpu_kernel {
  int64_t nelems;
  uint32_t block; /* threads per block */
  uint32_t grid;  /* blocks */
  bool index64;   /* element indices in 64 bits */
};

/* The rule: 256 threads a block (128 under 32768 elements, so that small
 * kernels still spread over the SMs), ceil(n / block) blocks capped at
 * TS_CG_GPU_MAX_GRID (at least 1); 32-bit indices while n plus one grid's
 * stride fits in int32 (the loop's last increment must not wrap). */
ts_cg_gpu_kernel ts_cg_gpu_geometry(int64_t nelems);
/* Whether `arch` is a GPU we emit for (sm_70 ... sm_90a) and its PTX ISA
 * version as LLVM 16's feature ("+ptx70"); NULL when not. */
const char *ts_cg_gpu_arch_ptx(const char *arch);

typedef struct ts_cg_cuda_options {
  const char *arch;      /* NULL: sm_80 */
  const char *libdevice; /* NULL: $TSAOT_LIBDEVICE, else CUDA's under /usr/local/cuda */
  int opt_level;         /* 0..3 */
} ts_cg_cuda_options;

/* One kernel of the PTX. */
typedef struct ts_cg_cuda_kfn {
  char name[32];     /* tsaot_fgN */
  uint32_t group;    /* the fusion group's node number (ts_rt_aot_number_nodes: entry.c's) */
  ts_cg_gpu_kernel geom;
  uint32_t nparams;
  uint8_t *kinds;    /* nparams TS_RT_CUDA_PARAM_* */
} ts_cg_cuda_kfn;

/* What ts_cg_cuda_compile made. */
typedef struct ts_cg_cuda_ptx {
  ts_buf ptx;          /* NUL-terminated PTX text */
  ts_cg_cuda_kfn *k;
  uint32_t nk;
  uint32_t ngroups;    /* fusion groups seen */
  bool libdevice;      /* libdevice was linked */
  ts_buf notes;        /* groups left to the CPU and why, a line each */
} ts_cg_cuda_ptx;

/* Lowers every fusion group of g that can be lowered to a kernel of one
 * NVPTX module, optimizes it and writes the PTX. A group that cannot be
 * lowered is a note (it runs on the CPU); false only for an unusable
 * architecture, LLVM failing, or libdevice missing where it is needed. */
bool ts_cg_cuda_compile(const ts_graph *g, const ts_cg_cuda_options *o, ts_cg_cuda_ptx *out, ts_diag *d);
void ts_cg_cuda_ptx_free(ts_cg_cuda_ptx *p);
/* For tests without a GPU (tsaot --cuda-emulate): each kernel of p built
 * once more into the host module m, from the same lowering, with a wrapper
 * `void NAME.emu.K(void **args, const uint32_t sreg[4])` that runs one
 * GPU thread (args as cuLaunchKernel's kernelParams); ts_cg_cuda_embed then
 * records the wrappers in the kernel table, for a stand-in driver
 * (tests/cuda/fake_libcuda.c) to run launches on the CPU. */
bool ts_cg_cuda_emulate(ts_cg_module *m, ts_graph *g, const char *name, const ts_cg_cuda_ptx *p, ts_diag *d);
/* Adds the exported constant NAME_cuda (ts_rt_cuda_image) to m. */
bool ts_cg_cuda_embed(ts_cg_module *m, const char *name, const char *arch, const ts_cg_cuda_ptx *p, ts_diag *d);

/* ----------------------------------------------------------------- entry.c
 * and emit.c: the whole model (what tools/tsaot.c calls). */

typedef struct ts_cg_options {
  const char *name;    /* prefix of the exported symbols: NAME_run ... */
  ts_cg_target_opts target;
  bool no_fallback;    /* no interpreter, no fallback graph */
  bool shared;         /* link a shared library (else: an object + header) */
  const char *emit_llvm; /* write the optimized module's IR here (NULL: no) */
  bool verbose;          /* progress and timings to stderr */
  /* the model's .pt bytes: embedded when the graph must run in the
   * interpreter with its module (state it reads or writes, method calls) */
  const void *archive;
  size_t archive_len;
  /* compile-time budget (ts_pass_env's): checked before each fusion group */
  double deadline, time_limit;
  /* forward's arguments after self as callers pass them (include/tsaot.h's
   * slots): nargs names and declared types; arg_types NULL: the graph's
   * inputs after self are the arguments */
  uint32_t nargs;
  const char *const *arg_names;
  const ts_type *const *arg_types;
  /* the example forms of a specialisation (ts_pass_spec_leaves made the
   * graph take their leaves; the fallback graph takes the arguments);
   * NULL: the graph takes the arguments */
  const ts_pass_form *const *arg_forms;
} ts_cg_options;

/* What a compile produced, for the tool's summary. */
typedef struct ts_cg_stats {
  uint32_t nnodes;        /* nodes the entry function runs (top level and nested) */
  uint32_t nkernels;      /* fusion groups compiled to native kernels */
  uint32_t ninterp_groups;/* fusion groups left to the interpreter */
  uint32_t ncalls;        /* runtime calls */
  uint64_t weight_bytes;
  uint64_t archive_bytes; /* the embedded .pt, when the module is needed */
  uint64_t arena_plan_bytes, arena_heap_bytes;
  uint32_t nplanned, ninplace;
  bool interp_only;       /* the graph runs in the embedded interpreter only */
  double t_codegen, t_llvm_opt, t_emit, t_link; /* seconds */
  ts_buf specs;           /* "input 0: f32[1, 3, 8, 8]\n..." for the header */
  int32_t num_inputs;     /* NAME_num_inputs: the input slots, -1 when they vary */
  ts_buf notes;           /* what was not compiled and why, a line each */
} ts_cg_stats;

/* Generates the model into m: the descriptor NAME.desc, the entry
 * function, fused kernels, and the exported wrappers NAME_run ...
 * (include/tsaot.h; plus `tsaot_model_name` when o->shared). `g` is the
 * specialised, optimized graph of forward; `fallback` the unspecialised
 * one (NULL: none: o->no_fallback, or g is not specialised). Both are
 * printed into the object and read back here first, so what is compiled is
 * exactly what the runtime will parse. `arena_heap`: the bytes run_static
 * reserves for run-time allocations (tools/tsaot.c measures them). */
bool ts_cg_model_build(ts_cg_module *m, ts_graph *g, ts_graph *fallback, const ts_cg_options *o,
                       uint64_t arena_heap, ts_cg_stats *st, ts_diag *d);
void ts_cg_stats_free(ts_cg_stats *st);

/* ------------------------------------------------------------------ emit.c */

/* The module's native object / textual IR. */
bool ts_cg_emit_object(ts_cg_module *m, const char *path, ts_diag *d);
bool ts_cg_emit_llvm(ts_cg_module *m, const char *path, ts_diag *d);
/* Links `obj` with the runtime's static libraries `rt_libs` (in a group:
 * they depend on each other) and the system libraries `sys_libs` into the
 * shared library `out` with the C compiler (TSAOT_CC, else cc); only the
 * model's own symbols are exported. `flags`: extra flags (sanitizers),
 * space-separated; may be empty. */
bool ts_cg_link_shared(const char *obj, const char *out, const char *const *rt_libs, uint32_t nrt,
                       const char *const *sys_libs, uint32_t nsys, const char *flags, ts_diag *d);
/* The header of `-c`: includes tsaot.h and declares NAME's functions, with
 * NAME_ARENA_SIZE and the specs as comments. */
bool ts_cg_write_header(const char *path, const char *name, uint64_t arena_size, const ts_cg_stats *st, ts_diag *d);

#endif
