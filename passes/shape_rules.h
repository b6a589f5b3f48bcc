/* passes/shape_rules.h: what shape_prop.c and the shape rules
 * (shape_rules*.c) share. Internal to passes/.
 *
 * A rule is registered for one schema of ir/ops.def, by name
 * ("aten::add.Tensor"), as kernels are (runtime/kernel.c). It reads the
 * node's input types (already propagated) and the values of constant
 * arguments, and refines the node's outputs, whose types the pass has reset
 * to their unshaped form before calling it. A rule that cannot tell (an
 * input's rank unknown, sizes that do not fit together) leaves an output as
 * it is: a missing refinement is never wrong, a wrong one is.
 *
 * Sizes: >= 0 known; -1 unknown; <= -2 a symbol, one particular unknown
 * that the same value carries wherever it flows (TS_SR_UNKNOWN below is only
 * for elements of int lists). */
#ifndef TSAOT_SHAPE_RULES_H
#define TSAOT_SHAPE_RULES_H

#include "passes.h"

#define TS_SR_MAX_RANK 64
/* An int argument whose value is not known (in ts_sr_size_list). */
#define TS_SR_UNKNOWN INT64_MIN

/* A tensor type being worked on: ts_tensor_info with room for the sizes. */
typedef struct ts_sr_shape {
  int8_t dtype;         /* TS_DT_NONE: unknown */
  int8_t requires_grad; /* -1: unknown */
  ts_device device;     /* type TS_DEV_NONE: unknown */
  int32_t rank;         /* -1: unknown (sizes then unused) */
  bool has_strides;
  int64_t sizes[TS_SR_MAX_RANK];
  int64_t strides[TS_SR_MAX_RANK];
} ts_sr_shape;

typedef struct ts_sp ts_sp; /* shape_prop.c's state */

/* One rule application. */
typedef struct ts_sr_call {
  ts_node *node;
  const ts_schema *schema;
  ts_sp *sp;
  bool oom; /* set by the helpers on allocation failure */
} ts_sr_call;

typedef void (*ts_sr_fn)(ts_sr_call *c);

typedef struct ts_sr_def {
  const char *schema; /* "aten::add.Tensor", "aten::relu" */
  ts_sr_fn fn;
} ts_sr_def;

/* ------------------------------------------------------ shape_rules.c */

/* Binds every table entry to its schema (once, thread-safe). False with the
 * reasons in d if an entry names no schema of the op table or a schema has
 * two rules. */
bool ts_sr_init(ts_diag *d);
/* The rule of a schema, or NULL: its table entry's; for an in-place or
 * out= overload without one (ts_schema_variant), one made from the rule of
 * the out-of-place overload (self's type in place, the view's type for
 * unsqueeze_ and the other in-place views, the result's sizes in the out's
 * dtype for out=). */
ts_sr_fn ts_sr_rule_for(const ts_schema *s);
/* Every table entry, for tests; count in *n. */
const ts_sr_def *const *ts_sr_all(uint32_t *n);

/* The tables, one per file; the pointwise one is made from ir/ops.def's
 * rows at first use (NULL: out of memory). */
const ts_sr_def *ts_sr_rules_pointwise(void);
extern const ts_sr_def ts_sr_rules_shape[];
extern const ts_sr_def ts_sr_rules_nn[];
extern const ts_sr_def ts_sr_rules_tensor[];
extern const ts_sr_def ts_sr_rules_vision[];
extern const ts_sr_def ts_sr_rules_fft[];
extern const ts_sr_def ts_sr_rules_random[];
extern const ts_sr_def ts_sr_rules_loss[];
extern const ts_sr_def ts_sr_rules_stats[];
extern const ts_sr_def ts_sr_rules_special[];
extern const ts_sr_def ts_sr_rules_linalg[];
extern const ts_sr_def ts_sr_rules_histogram[];
extern const ts_sr_def ts_sr_rules_views[];
extern const ts_sr_def ts_sr_rules_packed[];

/* Helpers for rules (shape_rules.c). Input i is argument i of the schema. */

/* An unknown shape (nothing known). */
void ts_sr_unknown(ts_sr_shape *s);
/* Input i as a tensor: false if the node has no input i or its type is not
 * a Tensor (a plain Tensor gives an unknown shape and true). */
bool ts_sr_tensor(const ts_sr_call *c, uint32_t i, ts_sr_shape *out);
/* Input i is None (a None constant, or of type NoneType). */
bool ts_sr_is_none(const ts_sr_call *c, uint32_t i);
/* Input i as an int known exactly (a constant, or derived from known
 * sizes and dtypes: x.dim(), x.size(1), prim::dtype(x)); as a constant
 * bool / float (an int too). */
bool ts_sr_int(const ts_sr_call *c, uint32_t i, int64_t *out);
bool ts_sr_bool(const ts_sr_call *c, uint32_t i, bool *out);
bool ts_sr_double(const ts_sr_call *c, uint32_t i, double *out);
/* The kind of number input i is: its type's (int, float, bool, ...), or
 * for a Scalar made from a tensor (ScalarImplicit, item) the kind its dtype
 * gives; TS_TY_NUMBER when not known. */
ts_type_kind ts_sr_number_kind(const ts_sr_call *c, uint32_t i);
/* Input i as a size: a constant, or a value derived from a tensor's size
 * (x.size(0)), so possibly a symbol. False if unknown. */
bool ts_sr_size(const ts_sr_call *c, uint32_t i, int64_t *out);
/* Input i as an int list of constants (dims, strides, paddings): false if
 * its length or any element is unknown. At most `max` elements. */
bool ts_sr_int_list(const ts_sr_call *c, uint32_t i, int64_t *out, int32_t *n, int32_t max);
/* Input i as a list of sizes: each element a constant, a symbol or
 * TS_SR_UNKNOWN; false if the length is unknown. */
bool ts_sr_size_list(const ts_sr_call *c, uint32_t i, int64_t *out, int32_t *n, int32_t max);
/* Input i as an optional ScalarType (a constant int or None): *dt is
 * TS_DT_NONE for None. False if not a constant. */
bool ts_sr_dtype_arg(const ts_sr_call *c, uint32_t i, int8_t *dt);
/* The tensors of a Tensor[] input i, when the list is a prim::ListConstruct
 * nothing writes to: up to max types written to out (shapes). False if not
 * known. */
bool ts_sr_tensor_list(const ts_sr_call *c, uint32_t i, ts_sr_shape *out, uint32_t *n, uint32_t max);
/* n shapes of scratch from the C library for a rule (free them); NULL with
 * c->oom set when out of memory. */
ts_sr_shape *ts_sr_shapes_new(ts_sr_call *c, uint32_t n);

/* Normalises a dim against a rank (wrap-around as PyTorch's maybe_wrap_dim,
 * rank 0 taken as 1 where `scalar_ok`); false if out of range. */
bool ts_sr_wrap_dim(int64_t dim, int32_t rank, int64_t *out);

/* Sets output i from a shape (device and requires_grad as the shape says).
 * Ignored if output i is not a Tensor. */
void ts_sr_set(ts_sr_call *c, uint32_t i, const ts_sr_shape *s);
/* Sets output i to the type t, if t's kind is the output's (tuple, list,
 * optional elements refined). */
void ts_sr_set_type(ts_sr_call *c, uint32_t i, const ts_type *t);
/* Sets output i, a Tensor[] list, to a list of the merged element shapes,
 * and records each element for prim::ListUnpack (when the list is read
 * only). */
void ts_sr_set_list(ts_sr_call *c, uint32_t i, const ts_sr_shape *elems, uint32_t n);

/* Contiguous strides for s if every size is known (else none). */
void ts_sr_contiguous(ts_sr_shape *s);
/* Whether s has known strides that are the contiguous ones. */
bool ts_sr_is_contiguous(const ts_sr_shape *s);
/* Device and requires_grad of a result computed from inputs in[0..n):
 * cpu/0 when all of them say so, else unknown. */
void ts_sr_meta_from(ts_sr_shape *out, const ts_sr_shape *const *in, uint32_t n);
/* Broadcasts two sizes: false if they cannot match (both known, differ,
 * neither 1). */
bool ts_sr_broadcast_size(int64_t a, int64_t b, int64_t *out);
/* Broadcasts b into a (a's rank grows): false if the sizes cannot match;
 * an unknown rank makes a's rank unknown. */
bool ts_sr_broadcast(ts_sr_shape *a, const ts_sr_shape *b);

/* The sizes of aten::chunk's pieces of a dimension of `size` (prim::
 * ConstantChunk's too): their count, 0 when invalid or more than max
 * (shape_rules_shape.c). */
uint32_t ts_sr_chunk_sizes(int64_t size, int64_t chunks, int64_t *out, uint32_t max);

/* Size arithmetic that refuses to overflow (hostile graphs carry any
 * sizes): false instead of a result. */
bool ts_sr_add(int64_t a, int64_t b, int64_t *out);
bool ts_sr_mul(int64_t a, int64_t b, int64_t *out);

/* dtype rules: ir/promote.c (ts_type_promote, ts_result_type, ...). */

/* ------------------------------------------------------- shape_prop.c */

/* The value of an int as a size: a constant, or derived from tensor sizes
 * (aten::size, prim::NumToTensor/aten::Int round trips, ListUnpack or
 * __getitem__ of aten::size, int arithmetic on known values). */
bool ts_sp_int_value(ts_sp *sp, const ts_value *v, int64_t *out);
/* The same, when the value is a number (a constant, a known size), not a
 * symbol. */
bool ts_sp_int_exact(ts_sp *sp, const ts_value *v, int64_t *out);
/* The elements of a list that a prim::ListConstruct made and nothing writes
 * to (every use reads it only), or NULL. */
ts_value *const *ts_sp_list_items(const ts_value *list, uint32_t *n);
/* Whether every use of a list value only reads it. */
bool ts_sp_list_read_only(const ts_value *list);
/* Records the element types of a list value (ListUnpack reads them). */
bool ts_sp_record_list(ts_sp *sp, const ts_value *list, const ts_type *const *elems, uint32_t n);

#endif
