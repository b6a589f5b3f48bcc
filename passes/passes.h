/* passes/passes.h: graph-to-graph passes, one per file.
 *
 * Each pass changes the graph in place and returns false only on allocation
 * failure or a malformed graph (reason in `d`, which may be NULL). Passes
 * follow PyTorch's passes of the same name (torch/csrc/jit/passes/); where
 * they do less, the file says what and why. */
#ifndef TSAOT_PASSES_H
#define TSAOT_PASSES_H

#include "ir.h"
#include "runtime.h"

/* Finds the graph a prim::CallFunction or prim::CallMethod node calls:
 *   CallFunction: inputs[0] is a Function value whose type has the callee's
 *                 qualified name (ts_type_function);
 *   CallMethod:   attribute s "name" is the method, inputs[0]->type the class.
 * Returns the graph to inline (owned by the resolver, not changed by the
 * pass), ts_pass_callee_keep to leave the call as it is (a call through a
 * module interface: the callee is known only at run time), or NULL with a
 * reason in `d`. */
typedef ts_graph *(*ts_pass_callee_fn)(void *ctx, const ts_node *call, ts_diag *d);
extern ts_graph *const ts_pass_callee_keep;

/* inline.c: replaces every CallFunction/CallMethod (in nested blocks too)
 * with a copy of the callee's nodes, as torch::jit::Inline does. The copy is
 * not inlined again: callees handed out by the resolver are expected to be
 * inlined already (PyTorch inlines a callee's optimized graph). */
bool ts_pass_inline(ts_graph *g, ts_pass_callee_fn callee, void *ctx, ts_diag *d);
/* Graph size: the most nodes (nested blocks and subgraphs counted) inlining
 * may grow a graph to, by default. Large real models inline to
 * tens of thousands; a chain of functions calling the one before twice
 * would double at each level without it. */
enum { TS_PASS_MAX_NODES = 1 << 17 };
/* ts_pass_inline with a node budget of its own (0: none): a call whose
 * callee would take the graph past `max_nodes` is an error naming it. */
bool ts_pass_inline_limited(ts_graph *g, ts_pass_callee_fn callee, void *ctx, uint64_t max_nodes, ts_diag *d);

/* constant_pooling.c: one prim::Constant per distinct value (and type),
 * hoisted to the start of the graph, as torch::jit::ConstantPooling. */
bool ts_pass_constant_pooling(ts_graph *g, ts_diag *d);

/* lower_tuples.c: torch::jit::LowerSimpleTuples: TupleUnpack / TupleIndex /
 * TupleSlice of a TupleConstruct read the element directly; then, as in
 * PyTorch, ts_pass_dce runs on the whole graph (dead TupleConstructs go,
 * and any other dead code). */
bool ts_pass_lower_simple_tuples(ts_graph *g, ts_diag *d);

/* constant_propagation.c: torch::jit::ConstantPropagationImmutableTypes:
 * nodes whose inputs are all constants and whose inputs and outputs are of
 * immutable scalar types (int, float, bool, str, None, Device, dtype) are
 * evaluated and replaced by constants; prim::If on a constant condition is
 * replaced by the taken block; loops that cannot run go; If and loop
 * outputs that do not change are dropped. Ops without a scalar evaluator
 * here (the file lists those it has) are left as they are. If anything
 * changed, ts_pass_dce runs afterwards. */
bool ts_pass_constant_prop_immutable(ts_graph *g, ts_diag *d);

/* dead_code_elimination.c: removes nodes whose outputs are unused and that
 * have no side effects (TS_OPF_SIDE_EFFECT, unknown kinds), unused
 * loop-carried values and If outputs, as torch::jit::EliminateDeadCode on a
 * whole graph: with alias analysis, a node that writes memory (a "!"
 * argument) stays only if the memory is read later or the caller sees it
 * (a graph input or output). */
bool ts_pass_dce(ts_graph *g, ts_diag *d);

/* peephole.c: the parts of torch::jit::PeepholeOptimize that hold without
 * shape information (x.__is__(None) on non-optional x, unchecked_cast to the
 * value's own type, ...); the file lists which. Followed by ts_pass_dce when
 * anything changed. */
bool ts_pass_peephole(ts_graph *g, ts_diag *d);

/* constants.c: reading and making the scalar prim::Constants the passes
 * work with (PyTorch's toIValue / insertConstant for immutable scalars). */
typedef enum ts_cval_kind {
  TS_CV_NONE,   /* None: no "value" attribute */
  TS_CV_BOOL,   /* i, type bool */
  TS_CV_INT,    /* i */
  TS_CV_FLOAT,  /* f */
  TS_CV_STR,    /* s, type str */
  TS_CV_DEVICE, /* s, type Device */
} ts_cval_kind;

typedef struct ts_cval {
  ts_cval_kind kind;
  int64_t i; /* INT, BOOL (0 or 1) */
  double f;
  const char *s; /* STR: `len` bytes, not NUL-terminated */
  size_t len;
  ts_device dev;
} ts_cval;

/* The value of `v` if a prim::Constant defines it and holds None, a bool,
 * an int, a float, a str or a Device; false otherwise (tensors, lists,
 * functions, ...). */
bool ts_pass_const_get(const ts_value *v, ts_cval *out);
/* constant_as<int64_t> / constant_as<bool>: only an int (a bool) constant. */
bool ts_pass_const_int(const ts_value *v, int64_t *out);
bool ts_pass_const_bool(const ts_value *v, bool *out);
/* Inserts a prim::Constant holding `c` before `pos` (Graph::insertConstant):
 * its type is the value's own (int, float, bool, str, NoneType, Device) and
 * it has no source location. NULL on allocation failure. */
ts_value *ts_pass_const_insert(ts_node *pos, const ts_cval *c);
/* Appends to `n` (linked in a block) an input for each argument of `s`
 * after its current inputs, made from the argument's default (None, bool,
 * int, float constants inserted before n): the interpreter and codegen
 * take every argument, as PyTorch's graphs give them. False when an
 * argument has no such default, or on OOM. */
bool ts_pass_node_add_defaults(ts_node *n, const ts_schema *s);
/* EqualNode, as constant pooling and constant propagation use it: same
 * kind, same output types, the same inputs, the same attributes (floats
 * with ==, so 0. and -0. match and nan never; tensor and graph attributes
 * never match). */
bool ts_pass_const_nodes_equal(const ts_node *a, const ts_node *b);
/* IR constants and runtime values, both ways (constant propagation and
 * freezing). The value of `v` if a prim::Constant defines it, as a new
 * IValue: None, bool, int, float, str, Device, tensors (a runtime tensor
 * copied from the constant's data), int[]/float[]/bool[]/str[]/Tensor[]
 * lists. False if v is not such a constant (or the tensor has no data: a
 * graph read from text); ctx records allocation failures. */
bool ts_pass_const_to_iv(ts_rt_ctx *ctx, const ts_value *v, ts_iv *out);
/* Inserts a prim::Constant holding `iv` before `pos`, typed `type` (NULL:
 * the value's own type; tensors get their refined type: dtype, sizes,
 * strides, device cpu, requires_grad 0). A tensor's bytes are copied into
 * the graph's arena, unless `borrow_tensors`, when the constant points at
 * the tensor's storage (which must then outlive the graph: frozen
 * parameters). NULL if the value cannot be a prim::Constant (objects,
 * dicts, tuples: callers build those from constants) or on OOM. */
ts_value *ts_pass_const_insert_iv(ts_node *pos, const ts_iv *iv, const ts_type *type, bool borrow_tensors);
/* AliasDb::isMutableType: whether a value of type t could be written
 * through (tensors, lists, dicts, objects; not scalars or tuples of them). */
bool ts_pass_type_mutable(const ts_type *t);

/* ============================================================ pipeline.c
 *
 * Every pass by name, with what it needs beyond the graph. The pipeline,
 * tsaot-opt's -p, tsaot-run's --passes and TSAOT_LOG all use these names. */

/* A tensor input spec for specialization: the refined Tensor type of one
 * argument (dtype, rank, sizes; a size < 0 is unknown or symbolic). */
typedef struct ts_pass_env {
  ts_diag *d; /* may be NULL */
  /* freeze: the module object bound to the graph's first input (borrowed;
   * it and its tensors must outlive the graph, whose constants point into
   * them). TS_IV_NONE-tagged or NULL: no module (freeze fails). */
  const ts_iv *module;
  /* inline: finds callees; NULL: the graph must have no calls left */
  ts_pass_callee_fn callee;
  void *callee_ctx;
  /* specialize: one type per graph input (self included, NULL entries left
   * as they are); NULL: the graph's own input types are the spec */
  const ts_type *const *input_types;
  uint32_t ninput_types;
  /* logging: after each pass whose name is in this comma-separated list
   * ("all": every pass), the graph is printed to `log` with a header line
   * "# after <pass> (<N> nodes)"; NULL: getenv("TSAOT_LOG") */
  const char *log_passes;
  ts_buf *log; /* NULL: stderr */
  bool no_verify; /* skip the verifier after each pass (looking at bugs) */
  /* compile-time budget: ts_pass_now() past `deadline` (0: none) after a
   * pass ends the list with an error naming the pass and `time_limit` */
  double deadline, time_limit;
} ts_pass_env;

/* CLOCK_MONOTONIC in seconds, the clock of ts_pass_env.deadline. */
double ts_pass_now(void);
/* Whether `deadline` (0: none) has passed; if so, says so in `d`: "compilation
 * passed its time limit of <time_limit> s in <where> (raise it with
 * --time-limit)". For the pipeline and code generation alike. */
bool ts_pass_past_deadline(double deadline, double time_limit, const char *where, ts_diag *d);

typedef bool (*ts_pass_run_fn)(ts_graph *g, const ts_pass_env *env);

typedef struct ts_pass_info {
  const char *name;    /* "constprop" */
  ts_pass_run_fn run;
  const char *summary; /* one line for --help */
} ts_pass_info;

/* The registry (pipeline.c), in the order --help lists it. */
const ts_pass_info *ts_pass_find(const char *name, size_t len);
const ts_pass_info *const *ts_pass_all(uint32_t *n);
/* The default optimization pipeline, as a comma-separated list of names
 * (DESIGN.md: inline, freeze, constprop, dce/cse, peephole, remove-mutation,
 * shape propagation on the input spec, fusion). */
extern const char ts_pass_default_pipeline[];
/* Runs the named passes in order ("a,b,c"), verifying the graph after each
 * (a failure there is a bug in the pass and is reported as such), logging
 * as env asks. "default" stands for ts_pass_default_pipeline, "none" for
 * nothing. Unknown names are errors. */
bool ts_pass_run_list(ts_graph *g, const char *names, const ts_pass_env *env);
/* Whether every name of a comma-separated run list is a pass, "default" or
 * "none" (log_list: "all" too, as TSAOT_LOG takes); otherwise the
 * first bad name is at *bad, *badlen bytes long. For usage errors before
 * anything runs. */
bool ts_pass_list_check(const char *names, bool log_list, const char **bad, size_t *badlen);

/* What the passes leave of the operators tsaot has no kernel for: the
 * nodes nothing runs (ts_rt_interp_no_kernel: PyTorch's ops the op table
 * lacks, overloads without a kernel) that the graph still reaches after
 * freezing, constant propagation and shape specialisation removed the
 * branches that never run. One entry per op and source place (unrolled
 * copies of a call are one place); `graphs` has bit i set when graph i of
 * those collected reaches it. tsaot warns with the list (refuses it under
 * --strict), tsaot-run --strict refuses it. */
typedef struct ts_pass_missing {
  const char *op; /* "aten::bernoulli_": the node's kind name */
  ts_srcloc loc;  /* file NULL: none */
  unsigned graphs;
} ts_pass_missing;
typedef struct ts_pass_missing_set {
  ts_pass_missing *v; /* malloc'd */
  uint32_t n, cap;
  bool oom;
} ts_pass_missing_set;
/* Adds g's such nodes (nested blocks included) to s with bit `bit` (0..31). */
void ts_pass_missing_collect(ts_pass_missing_set *s, const ts_graph *g, unsigned bit);
void ts_pass_missing_free(ts_pass_missing_set *s);
/* Writes s grouped by op, most places first ("  aten::bernoulli_: 2
 * places"), then each place indented with its source line where
 * `source` (may be NULL) has the file's text; a place reached only by the
 * graphs of bit i (and no graph of bit 0) gets " (notes[i])" (notes may be
 * NULL). Returns the number of ops. */
uint32_t ts_pass_missing_print(ts_buf *b, const ts_pass_missing_set *s,
                               const char *(*source)(void *ctx, const char *file, size_t *len), void *ctx,
                               const char *const *notes, uint32_t nnotes);

/* ====================================================== alias_analysis.c
 *
 * torch::jit::AliasDb: which values may share memory, built from the
 * schemas' alias annotations (Tensor(a), Tensor(a!), Tensor(a -> *)); ops
 * without a schema (prim::ListConstruct, ...) and unknown ops follow
 * PyTorch's special cases, and anything it cannot see through points to
 * the wildcard set. Graph inputs and outputs "escape": a write to them is
 * observable by the caller. A db describes the graph as it was built;
 * rebuild it after changing the graph. */
typedef struct ts_alias_db ts_alias_db;

ts_alias_db *ts_alias_db_new(ts_graph *g, ts_diag *d);
void ts_alias_db_free(ts_alias_db *db);
/* Whether a and b may point to the same memory (or contain elements that
 * do). Values of immutable types never alias. */
bool ts_alias_may_alias(const ts_alias_db *db, const ts_value *a, const ts_value *b);
/* Whether n writes to memory that v may point to. */
bool ts_alias_node_writes_to(const ts_alias_db *db, const ts_node *n, const ts_value *v);
/* Whether any node of the graph writes to memory that v may point to. */
bool ts_alias_has_writers(const ts_alias_db *db, const ts_value *v);
/* Whether n writes to anything, or may (wildcard). */
bool ts_alias_node_has_writes(const ts_alias_db *db, const ts_node *n);
/* Sets TS_NODE_NEVER_WRITTEN on g's tensor constants that no node writes
 * (through any alias; those of fusion subgraphs always) and clears it on the
 * others: what the runtime reads instead of analysing the graph (writable
 * copies of compiled models' weights, kernels' packed weights). Run it on
 * the graph as it will run; false (reason in d) when the analysis fails. */
bool ts_pass_mark_never_written(ts_graph *g, ts_diag *d);
/* Whether v may point to memory the caller sees (graph inputs and outputs,
 * the wildcard set). */
bool ts_alias_escapes(const ts_alias_db *db, const ts_value *v);
/* Whether `n` can be moved to just before `pos` (same block) without
 * reordering it with a node that writes what it reads or reads what it
 * writes, nor putting it before its inputs' definitions (PyTorch's
 * moveBeforeTopologicallyValid, without dragging other nodes along). */
bool ts_alias_can_move_before(const ts_alias_db *db, const ts_node *n, const ts_node *pos);

/* ======================================================= the other passes
 * Each is one file, named as the pass; all follow the rules at the top. */

/* freeze.c: torch.jit.freeze: every prim::GetAttr chain from the graph's
 * first input (self) is replaced by a constant of the attribute's value
 * (tensors become tensor constants pointing at the module's storages,
 * submodule attributes are followed, scalars/lists/tuples/strings become
 * constants), unless some prim::SetAttr writes that attribute or an op may
 * write it in place (or a storage it shares); the self input is left
 * unused. */
bool ts_pass_freeze(ts_graph *g, const ts_iv *module, ts_diag *d);

/* fold_conv_bn.c: FoldFrozenConvBatchnorm, FoldFrozenLinearBatchnorm:
 * conv{1,2,3}d/_convolution or linear followed by batch_norm in eval mode
 * (training a constant False), whose weights, biases, running stats and
 * eps are constants, becomes one conv/linear with new weight and bias
 * constants. */
bool ts_pass_fold_conv_bn(ts_graph *g, ts_diag *d);

/* remove_dropout.c: dropout/feature_dropout/alpha_dropout (and their
 * in-place forms) with train=False, or in a frozen eval graph, are replaced
 * by their input. */
bool ts_pass_remove_dropout(ts_graph *g, ts_diag *d);

/* constant_propagation.c: torch::jit::ConstantPropagation: besides what
 * ts_pass_constant_prop_immutable does, nodes whose inputs are all
 * constants are evaluated with the runtime's kernels and replaced by
 * constants (tensor results are kept when small, or when every input
 * tensor was a constant already such as a frozen parameter); nodes whose
 * outputs or inputs may be written (alias analysis) are not folded. */
bool ts_pass_constant_prop(ts_graph *g, ts_diag *d);

/* cse.c: EliminateCommonSubexpression: a node equal to an earlier one that
 * dominates it (same kind, inputs, attributes) is replaced by it, unless it
 * has side effects or reads memory written in between. */
bool ts_pass_cse(ts_graph *g, ts_diag *d);

/* unroll.c: loops with a constant trip count of at most 8 iterations and
 * no nested loops are unrolled (UnrollLoops does more; the limit keeps
 * graphs small). The copies it makes in one run are budgeted (16,384
 * nodes): loops whose copies would pass what is left
 * stay loops. */
bool ts_pass_unroll(ts_graph *g, ts_diag *d);
/* The same with a budget of `max_new_nodes` nodes. */
bool ts_pass_unroll_limited(ts_graph *g, uint64_t max_new_nodes, ts_diag *d);

/* remove_mutation.c: RemoveListMutation + RemoveTensorMutation: an in-place
 * op (add_, relu_, masked_fill_, ...) on a fresh value (not a graph input,
 * not a view or element of another value) that nothing touches between its
 * creation and the op becomes the functional op, and later uses read its
 * result; ListConstruct + append/insert becomes one ListConstruct. */
bool ts_pass_remove_mutation(ts_graph *g, ts_diag *d);

/* shape_prop.c: the graph's input types refined to `types` (one per input;
 * NULL entries and a NULL array keep the graph's own), then dtype and sizes
 * propagated through every node by the shape rules (shape_rules.c, one per
 * op-table schema), symbolic where a size is unknown. */
bool ts_pass_shape_prop(ts_graph *g, const ts_type *const *types, uint32_t ntypes, ts_diag *d);

/* spec.c: an input spec "f32[1,3,224,224]" (dtype f16 bf16 f32 f64 i8 i16
 * i32 i64 u8 bool; sizes ints, or names/"?" for symbolic sizes) as a
 * refined Tensor type in `a`; NULL with the reason in d. */
const ts_type *ts_pass_spec_parse(ts_arena *a, const char *text, size_t len, ts_diag *d);
/* The spec of an example tensor (dtype and sizes; contiguous strides). */
const ts_type *ts_pass_spec_of_tensor(ts_arena *a, const ts_rt_tensor *t);
/* The form an example gives an argument whose slots (include/tsaot.h) are
 * not one array: None, a tuple's or a list's elements (a list's length is
 * n), or a leaf (a tensor, a number, a str: one array). */
typedef enum ts_pass_form_kind {
  TS_PASS_FORM_LEAF,
  TS_PASS_FORM_NONE,
  TS_PASS_FORM_TUPLE,
  TS_PASS_FORM_LIST,
} ts_pass_form_kind;
typedef struct ts_pass_form {
  ts_pass_form_kind kind;
  uint32_t n; /* TUPLE, LIST: elements */
  const struct ts_pass_form *elems;
} ts_pass_form;
/* Specialises g's inputs first.. to their forms (forms[k]: input first +
 * k; every input from first on has one): each input is replaced by the
 * leaves of its form, new inputs at the end in slot order (runtime/hosted/io.c's
 * ts_rt_io_leaves), typed as their declared types without Optional; a None
 * becomes a None constant, a tuple or list is built from its elements at
 * the top of the graph (prim::TupleConstruct, prim::ListConstruct). An
 * argument that is one leaf keeps its name. The graph then takes what a
 * run of the specialisation gives it (runtime/hosted/aot.h, desc->leaves). False
 * with the reason in d: a form that does not fit its input's type (None
 * for a type that is not Optional, ...), out of memory. */
bool ts_pass_spec_leaves(ts_graph *g, uint32_t first, const ts_pass_form *const *forms, uint32_t nforms, ts_diag *d);

/* fuse.c: FuseGraph: adjacent pointwise ops (TS_OPF_POINTWISE) on tensors,
 * with prim::ConstantChunk at the group's inputs and aten::cat at its
 * outputs, become prim::FusionGroup nodes whose "Subgraph" attribute holds
 * them; nodes move only where alias analysis allows. */
bool ts_pass_fuse(ts_graph *g, ts_diag *d);

/* fuse_conv_act.c: a 2-d convolution (frozen weight, float32/float64 output
 * of known sizes) followed by add(residual) and/or relu / hardtanh / clamp,
 * each intermediate used once, becomes one tsaot::conv2d_act that applies
 * the residual and the clamp while each output plane is in cache. */
bool ts_pass_fuse_conv_act(ts_graph *g, ts_diag *d);

#endif
