/* passes/passes.h: graph-to-graph passes, one per file.
 *
 * Each pass changes the graph in place and returns false only on allocation
 * failure or a malformed graph (reason in `d`, which may be NULL). Passes
 * follow PyTorch's passes of the same name (torch/csrc/jit/passes/); where
 * they do less, the file says what and why. */
#ifndef TSAOT_PASSES_H
#define TSAOT_PASSES_H

#include "ir.h"

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
 * have no side effects (TS_OPF_SIDE_EFFECT, or a "!" argument in their
 * schema), unused loop-carried values and If outputs, as
 * torch::jit::EliminateDeadCode. */
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
/* EqualNode, as constant pooling and constant propagation use it: same
 * kind, same output types, the same inputs, the same attributes (floats
 * with ==, so 0. and -0. match and nan never; tensor and graph attributes
 * never match). */
bool ts_pass_const_nodes_equal(const ts_node *a, const ts_node *b);
/* AliasDb::isMutableType: whether a value of type t could be written
 * through (tensors, lists, dicts, objects; not scalars or tuples of them). */
bool ts_pass_type_mutable(const ts_type *t);

#endif
