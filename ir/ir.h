/* ir/ir.h: the one place to learn tsaot's IR.
 *
 * The IR follows PyTorch's JIT (../shared/reference, "Core Program
 * Representation"): a Graph holds a top Block; a Block is a circular, doubly
 * linked list of Nodes whose sentinel is its prim::Return node; a Node has a
 * kind, input and output Values, attributes, nested Blocks and a source
 * location; a Value is defined by exactly one Node (block inputs by the
 * block's prim::Param node) and knows its uses.
 *
 * Memory: one arena per Graph owns its nodes, values, blocks, types, strings
 * and attributes. Passes unlink nodes and never free them one at a time; the
 * whole graph goes at once with ts_graph_free. Allocation failure is sticky:
 * functions return NULL/false and ts_graph_ok() turns false; the library
 * never aborts.
 *
 * Prototypes are grouped by the file that defines them.
 */
#ifndef TS_IR_H
#define TS_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ts_arena ts_arena;
typedef struct ts_buf ts_buf;
typedef struct ts_diag ts_diag;
typedef struct ts_type ts_type;
typedef struct ts_graph ts_graph;
typedef struct ts_block ts_block;
typedef struct ts_node ts_node;
typedef struct ts_value ts_value;
typedef struct ts_use ts_use;
typedef struct ts_attr ts_attr;
typedef struct ts_tconst ts_tconst;
typedef struct ts_schema ts_schema;
typedef struct ts_arg ts_arg;
typedef struct ts_opdef ts_opdef;

#if defined(__GNUC__)
#define TS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TS_PRINTF(f, a)
#endif

/* Thread-local variables (a few words each). Under ASan they sit in the
 * static TLS block: a library tsaot writes is dlopen'ed, and its dynamic TLS
 * is read back wrongly by LeakSanitizer's thread scan (it crashed at exit of
 * every ASan run that loaded one without touching its TLS first). Not in
 * other builds: a process that dlopens many libraries (Python with torch)
 * runs out of static TLS ("cannot allocate memory in static TLS block"). */
#if defined(__SANITIZE_ADDRESS__)
#define TS_TLS _Thread_local __attribute__((tls_model("initial-exec")))
#else
#define TS_TLS _Thread_local
#endif

/* ---------------------------------------------------------------- arena.c */

/* A bump allocator. Memory is zeroed and 16-byte aligned; it is released only
 * all at once. `limit` (0: none) bounds the bytes it may take, so a hostile
 * input cannot grow a graph without bound. */
struct ts_arena {
  struct ts_arena_chunk *head;
  size_t used;  /* bytes handed out */
  size_t limit; /* 0: unlimited */
  bool failed;  /* an allocation was refused */
};

void ts_arena_init(ts_arena *a, size_t limit);
void ts_arena_release(ts_arena *a);
void *ts_arena_alloc(ts_arena *a, size_t size);
/* Grows an array owned by the arena: returns a copy with room for `new_n`
 * elements, the first `old_n` copied; the old block is abandoned. */
void *ts_arena_grow(ts_arena *a, void *old, size_t old_n, size_t new_n, size_t elem);
char *ts_arena_strndup(ts_arena *a, const char *s, size_t n);
char *ts_arena_strdup(ts_arena *a, const char *s);
/* A process-wide bound on the bytes all arenas hold together (0, the
 * default: none), for a compiler's memory budget: past it, allocations fail
 * as when malloc does (`failed` set), and ts_arena_total_limit_hit() says
 * why afterwards. */
void ts_arena_set_total_limit(size_t bytes);
bool ts_arena_total_limit_hit(void);

/* ------------------------------------------------------------------ buf.c */

/* A growable byte buffer (malloc). `failed` is sticky after an allocation
 * failure; the contents stay NUL-terminated. */
struct ts_buf {
  char *data;
  size_t len, cap;
  bool failed;
  /* data is the caller's cap bytes, never reallocated nor freed: text past
   * them is cut off (and failed set) */
  bool fixed;
};

void ts_buf_free(ts_buf *b);
void ts_buf_putn(ts_buf *b, const char *s, size_t n);
void ts_buf_puts(ts_buf *b, const char *s);
void ts_buf_putc(ts_buf *b, char c);
void ts_buf_printf(ts_buf *b, const char *fmt, ...) TS_PRINTF(2, 3);
void ts_buf_vprintf(ts_buf *b, const char *fmt, va_list ap);
/* Appends `s` as PyTorch's printQuotedString writes it: "..." with C escapes
 * and three-digit octal for other bytes. */
void ts_buf_put_quoted(ts_buf *b, const char *s, size_t n);
/* Appends a double as PyTorch prints a float IValue: integral values below
 * 1e10 as "N." ("-0." for negative zero), others with 17 significant digits. */
void ts_buf_put_double(ts_buf *b, double v);

/* ----------------------------------------------------------------- diag.c */

/* Collects diagnostics as text, each in the form
 *   file:line:col: error: message
 *   <the source line>
 *   <spaces>^
 * Line and column are 1-based. Functions that take a ts_diag accept NULL:
 * the message is dropped. */
struct ts_diag {
  ts_buf text;
  int errors;
  int max_errors; /* 0: unlimited; further errors are counted, not kept */
};

void ts_diag_free(ts_diag *d);
/* `src`/`src_len` is the whole source buffer the position points into (may be
 * NULL: no source line is quoted). */
void ts_diag_error_at(ts_diag *d, const char *file, const char *src, size_t src_len, int line, int col,
                      const char *fmt, ...) TS_PRINTF(7, 8);
void ts_diag_error(ts_diag *d, const char *fmt, ...) TS_PRINTF(2, 3);

/* ----------------------------------------------------------------- type.c */

/* ScalarType, numbered as in c10 (prim::dtype yields these numbers). */
typedef enum ts_dtype {
  TS_DT_NONE = -1,
  TS_DT_UINT8 = 0,  /* Byte */
  TS_DT_INT8 = 1,   /* Char */
  TS_DT_INT16 = 2,  /* Short */
  TS_DT_INT32 = 3,  /* Int */
  TS_DT_INT64 = 4,  /* Long */
  TS_DT_FLOAT16 = 5,
  TS_DT_FLOAT32 = 6,
  TS_DT_FLOAT64 = 7,
  TS_DT_COMPLEX32 = 8,
  TS_DT_COMPLEX64 = 9,
  TS_DT_COMPLEX128 = 10,
  TS_DT_BOOL = 11,
  TS_DT_QINT8 = 12,
  TS_DT_QUINT8 = 13,
  TS_DT_QINT32 = 14,
  TS_DT_BFLOAT16 = 15,
  TS_DT_COUNT
} ts_dtype;

/* "Float", "Long", ... as type annotations spell them; NULL if out of range. */
const char *ts_dtype_name(ts_dtype dt);
ts_dtype ts_dtype_from_name(const char *s, size_t n);
size_t ts_dtype_size(ts_dtype dt);

/* -------------------------------------------------------------- promote.c */

/* PyTorch's dtype rules, for every layer (kernels, shape rules, fusion). */
bool ts_dtype_is_float(ts_dtype dt); /* float16/32/64, bfloat16 */
bool ts_dtype_is_complex(ts_dtype dt);
bool ts_dtype_is_integral(ts_dtype dt, bool include_bool);
/* c10::promoteTypes; TS_DT_NONE if either is (or a quantized type meets
 * another). */
ts_dtype ts_type_promote(ts_dtype a, ts_dtype b);
/* c10::canCast: what an in-place or out= result may be written into (no
 * complex to real, no floating to integral, nothing but bool to bool). */
bool ts_type_can_cast(ts_dtype from, ts_dtype to);

/* ATen's result_type over operands, fed one at a time: dimensioned tensors
 * rank above zero-dim tensors, which rank above wrapped numbers (Python
 * numbers and Scalars; a float counts as float32, a complex as complex64),
 * a lower category winning only with a higher kind (bool < integral <
 * floating < complex). */
typedef enum ts_result_kind { TS_RESULT_DIM, TS_RESULT_ZERO_DIM, TS_RESULT_WRAPPED } ts_result_kind;
typedef struct ts_result_state {
  int8_t dim, zero, wrapped; /* ts_dtype; TS_DT_NONE: none yet */
} ts_result_state;
#define TS_RESULT_STATE_INIT {TS_DT_NONE, TS_DT_NONE, TS_DT_NONE}
void ts_result_add(ts_result_state *s, ts_dtype dt, ts_result_kind kind);
/* The result type; TS_DT_NONE if no operand was added. */
ts_dtype ts_result_type(const ts_result_state *s);

typedef enum ts_device_type {
  TS_DEV_NONE = -1,
  TS_DEV_CPU = 0,
  TS_DEV_CUDA = 1,
  TS_DEV_META = 2,
} ts_device_type;

typedef struct ts_device {
  int8_t type;   /* ts_device_type */
  int16_t index; /* -1: none ("cuda"), else "cuda:N" */
} ts_device;

/* Parses "cpu", "cuda", "cuda:1", "meta". */
bool ts_device_parse(const char *s, size_t n, ts_device *out);
void ts_device_print(ts_buf *b, ts_device d);

typedef enum ts_type_kind {
  /* leaves */
  TS_TY_ANY,
  TS_TY_TENSOR,
  TS_TY_INT,
  TS_TY_FLOAT,
  TS_TY_COMPLEX,
  TS_TY_BOOL,
  TS_TY_STR,
  TS_TY_NONE,
  TS_TY_DEVICE,
  TS_TY_NUMBER, /* "Scalar": int, float or complex */
  TS_TY_LAYOUT,
  TS_TY_SCALARTYPE,
  TS_TY_MEMORYFORMAT,
  TS_TY_GENERATOR,
  TS_TY_STORAGE,
  TS_TY_STREAM,
  TS_TY_FUNCTION,
  TS_TY_CAPSULE,
  TS_TY_QSCHEME,
  TS_TY_ANYLIST,  /* "AnyList" */
  TS_TY_ANYTUPLE, /* "AnyTuple" */
  TS_TY_ANYCLASS, /* "AnyClassType" */
  TS_TY_ANYENUM,  /* "AnyEnumType" */
  TS_TY_SYMINT,   /* "SymInt" (schemas): an int that may be symbolic */
  TS_TY_LEAF_COUNT,
  /* containers and named types */
  TS_TY_OPTIONAL = TS_TY_LEAF_COUNT, /* T?            elems[0] */
  TS_TY_LIST,                        /* T[]           elems[0] */
  TS_TY_TUPLE,                       /* (A, B)        elems[0..n) */
  TS_TY_DICT,                        /* Dict(K, V)    elems[0], elems[1] */
  TS_TY_FUTURE,                      /* Future(T)     elems[0] */
  TS_TY_RREF,                        /* RRef(T)       elems[0] */
  TS_TY_UNION,                       /* Union(A, B)   elems[0..n) */
  TS_TY_CLASS,                       /* __torch__.M   name */
  TS_TY_VAR,                         /* t (schemas)   name */
} ts_type_kind;

/* What a refined Tensor type knows. Unknown parts: dtype TS_DT_NONE, rank -1,
 * sizes[i] -1 (printed "*"), strides NULL, requires_grad/undefined -1,
 * device.type TS_DEV_NONE. A size <= -2 is a symbol (printed "SS(-2)", as
 * PyTorch prints symbolic shapes): unknown, but the same wherever the same
 * symbol appears (passes/shape_prop.c). */
typedef struct ts_tensor_info {
  int8_t dtype;
  int8_t requires_grad;
  int8_t undefined;
  ts_device device;
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
} ts_tensor_info;

/* Types are immutable. Leaf types are static singletons (ts_type_leaf);
 * composite types live in an arena. Compare with ts_type_equal. */
struct ts_type {
  ts_type_kind kind;
  uint32_t n;                 /* number of elems */
  const ts_type *const *elems;
  const char *name;           /* CLASS qualified name, VAR name, named TUPLE name */
  const char *const *fields;  /* named TUPLE field names (n), else NULL */
  const ts_tensor_info *tensor; /* TENSOR refinement, NULL for plain Tensor */
};

const ts_type *ts_type_leaf(ts_type_kind k);
const ts_type *ts_type_optional(ts_arena *a, const ts_type *elem);
const ts_type *ts_type_list(ts_arena *a, const ts_type *elem);
const ts_type *ts_type_future(ts_arena *a, const ts_type *elem);
const ts_type *ts_type_rref(ts_arena *a, const ts_type *elem);
const ts_type *ts_type_dict(ts_arena *a, const ts_type *key, const ts_type *value);
const ts_type *ts_type_tuple(ts_arena *a, uint32_t n, const ts_type *const *elems);
const ts_type *ts_type_union(ts_arena *a, uint32_t n, const ts_type *const *elems);
const ts_type *ts_type_class(ts_arena *a, const char *qualname, size_t len);
const ts_type *ts_type_var(ts_arena *a, const char *name, size_t len);
/* The type of one particular function (`qualname` "__torch__.m.fn"), as a
 * prim::Constant[name="fn"] holds it; prints as "Function" like the leaf. */
const ts_type *ts_type_function(ts_arena *a, const char *qualname, size_t len);
const ts_type *ts_type_tensor(ts_arena *a, const ts_tensor_info *info);
/* A deep copy into `a` (leaf singletons are returned as they are). */
const ts_type *ts_type_clone(ts_arena *a, const ts_type *t);
bool ts_type_equal(const ts_type *a, const ts_type *b);
/* PyTorch's isSubtypeOf, for the types the IR uses: every refined Tensor is a
 * Tensor, T and None are T?, int and float are Scalar, int is a SymInt (and
 * int[] a SymInt[]), everything is Any. */
bool ts_type_is_subtype(const ts_type *sub, const ts_type *super);
/* isinstance(v, t) told from v's static type `vt`, as PyTorch folds it when
 * it can: 1 always, 0 never, -1 when only the run-time value can tell (vt is
 * Any, a Union some of whose members are t, or an Optional of t). */
int ts_type_isinstance_static(const ts_type *vt, const ts_type *t);
/* PyTorch's unshapedType: every refined Tensor inside `t` made plain
 * Tensor. NULL on allocation failure. */
const ts_type *ts_type_unshaped(ts_arena *a, const ts_type *t);
/* PyTorch's unifyTypes (default_to_union off): the type both x and y fit,
 * or NULL when there is none (*oom set when an allocation failed). */
const ts_type *ts_type_unify(ts_arena *a, const ts_type *x, const ts_type *y, bool *oom);
/* TensorType::merge: what two Tensor types' refinements agree on (sizes
 * and strides that differ become unknown); plain Tensor when nothing is
 * left. NULL on allocation failure. */
const ts_type *ts_type_merge_tensors(ts_arena *a, const ts_type *x, const ts_type *y);
/* Writes the type as PyTorch's operator<<(Type) does. */
void ts_type_print(ts_buf *b, const ts_type *t);
/* Leaf names as printed: "int", "NoneType", ...; NULL for composites. */
const char *ts_type_leaf_name(ts_type_kind k);

/* ------------------------------------------------------------------ kinds */

/* Node kinds. Every operator is declared once, in ir/ops.def; this enum is
 * generated from it. Kinds outside the table (the universe is open) are
 * TS_K_OTHER with the qualified name kept on the node. */
typedef enum ts_kind {
#define TS_OP(ns, name, ...) TS_K_##ns##_##name,
#include "ops.def"
#undef TS_OP
  TS_K_COUNT,
  TS_K_OTHER = TS_K_COUNT,
} ts_kind;

/* ---------------------------------------------------------------- graph.c */

typedef enum ts_attr_kind {
  TS_ATTR_INT,    /* i: int64 (also bool constants) */
  TS_ATTR_FLOAT,  /* f: double */
  TS_ATTR_STR,    /* s: bytes (may hold NUL) */
  TS_ATTR_TENSOR, /* t */
  TS_ATTR_GRAPH,  /* g: a subgraph (prim::FusionGroup's Subgraph) */
  TS_ATTR_TYPE,   /* tys: a list of types (prim::isinstance's types=[..]), several as one Union */
  TS_ATTR_INTS,   /* is */
  TS_ATTR_FLOATS, /* fs */
  TS_ATTR_STRS,   /* ss */
  TS_ATTR_TENSORS, /* ts: printed "[<Tensors>]" whatever it holds */
} ts_attr_kind;

/* A tensor held by the IR (a constant). `data` may be NULL when only its
 * type is known: a graph read from text, where PyTorch prints "<Tensor>".
 * The bytes are not owned by the graph unless they were copied into its
 * arena; the frontend keeps storages alive for the graphs it builds. */
struct ts_tconst {
  int8_t dtype;
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides;
  const void *data; /* first element, or NULL */
  /* PyTorch prints tensors of up to 10 elements with ATen's printer
   * ("[value= 0.1494 -0.1144 [ CPUFloatType{2} ]]"), rounded. A graph read
   * from text keeps that text here to print it back unchanged; the values
   * themselves are not recovered from it (data stays NULL). */
  const char *repr;
};

struct ts_attr {
  const char *name;
  ts_attr_kind kind;
  size_t len; /* STR: bytes; list kinds: elements */
  union {
    int64_t i;
    double f;
    const char *s;
    const ts_tconst *t;
    ts_graph *g;
    const ts_type *ty;
    const int64_t *is;
    const double *fs;
    const char *const *ss; /* each NUL-terminated */
    const ts_tconst *const *ts;
  } u;
  ts_attr *next; /* attributes keep insertion order */
};

/* Source location of a node: where the TorchScript text it came from is.
 * file NULL: none (no "# file:line:col" comment is printed). */
typedef struct ts_srcloc {
  const char *file;
  int32_t line, col;
} ts_srcloc;

struct ts_use {
  ts_node *user;
  uint32_t index; /* which input of `user` */
};

struct ts_value {
  ts_node *node;   /* defining node; a block's prim::Param for block inputs */
  uint32_t offset; /* index in node's outputs */
  uint32_t id;     /* unique within the graph, for maps and sets */
  const char *name; /* debug name; NULL prints as %<id> */
  const ts_type *type;
  ts_use *uses;
  uint32_t nuses, cap_uses;
};

struct ts_node {
  ts_kind kind;
  const char *kind_name; /* "aten::add": static for table kinds */
  const ts_opdef *op;    /* table entry, NULL for TS_K_OTHER */
  ts_node *prev, *next;  /* in owner's list; NULL while unlinked */
  ts_block *owner;       /* NULL while unlinked */
  ts_value **inputs;
  ts_value **outputs;
  ts_block **blocks;
  uint32_t ninputs, noutputs, nblocks;
  uint32_t cap_inputs, cap_outputs, cap_blocks;
  ts_attr *attrs;
  ts_srcloc loc;
  ts_graph *graph;
  uint32_t id;    /* unique within the graph */
  uint32_t flags; /* TS_NODE_*: facts a pass decided, for the runtime */
};

/* ts_node.flags. Facts the compiler decides so that the runtime need not
 * analyse the graph (it links no pass). Not printed and not copied by
 * ts_node_clone: a node without a flag is the safe case. */
enum {
  /* a prim::Constant whose tensor no node writes, through any alias
   * (ts_pass_mark_never_written): kernels may keep data derived from it */
  TS_NODE_NEVER_WRITTEN = 1u << 0,
};

struct ts_block {
  ts_graph *graph;
  ts_node *owner_node; /* the node holding it; NULL for the graph's top block */
  ts_node *param;      /* prim::Param: its outputs are the block's inputs */
  ts_node *ret;        /* prim::Return: its inputs are the block's outputs;
                          also the sentinel of the node list */
};

struct ts_graph {
  ts_arena arena;
  ts_block *block;
  uint32_t next_value_id, next_node_id;
  struct ts_name_table *names; /* debug name -> value */
  ts_graph *parent;            /* set for subgraphs (they are freed with it) */
  ts_graph *children;          /* subgraphs owned by this graph */
  ts_graph *next_sibling;
  bool oom;
};

/* A graph with an empty top block. `arena_limit` 0: none. NULL on OOM. */
ts_graph *ts_graph_new(size_t arena_limit);
/* A graph owned by `parent` and freed with it (for Subgraph attributes). */
ts_graph *ts_graph_new_subgraph(ts_graph *parent);
void ts_graph_free(ts_graph *g);
/* False once any allocation for `g` failed. */
bool ts_graph_ok(const ts_graph *g);
ts_arena *ts_graph_arena(ts_graph *g);
/* Nodes in the graph, nested blocks and subgraphs (graph attributes)
 * included, for logs and statistics; of one kind only. */
uint32_t ts_graph_count_nodes(const ts_graph *g);
uint32_t ts_graph_count_kind(const ts_graph *g, ts_kind k);

/* Looks `qualname` up in the op table ("aten::add"): TS_K_OTHER if absent. */
ts_kind ts_kind_lookup(const char *qualname, size_t len);
const char *ts_kind_name(ts_kind k);

/* A node that is not yet in any block. */
ts_node *ts_node_new(ts_graph *g, ts_kind kind, uint32_t noutputs);
ts_node *ts_node_new_named(ts_graph *g, const char *qualname, size_t len, uint32_t noutputs);
ts_graph *ts_node_graph(const ts_node *n);
bool ts_node_is(const ts_node *n, ts_kind k);
/* Same kind, including the names of TS_K_OTHER kinds. */
bool ts_node_same_kind(const ts_node *a, const ts_node *b);

void ts_node_insert_before(ts_node *n, ts_node *pos);
void ts_node_insert_after(ts_node *n, ts_node *pos);
void ts_block_append_node(ts_block *b, ts_node *n);
/* Takes `n` out of its block's list; its inputs' use entries are dropped and
 * its blocks' nodes stay as they are (unreachable). Its outputs must have no
 * uses left. The node's memory goes with the arena. */
void ts_node_destroy(ts_node *n);
/* Moves a linked node before `pos` (uses are unchanged). */
void ts_node_move_before(ts_node *n, ts_node *pos);

bool ts_node_add_input(ts_node *n, ts_value *v);
void ts_node_replace_input(ts_node *n, uint32_t i, ts_value *v);
void ts_node_remove_input(ts_node *n, uint32_t i);
void ts_node_remove_all_inputs(ts_node *n);
ts_value *ts_node_add_output(ts_node *n, const ts_type *type);
/* Drops output i, which must have no uses. */
void ts_node_remove_output(ts_node *n, uint32_t i);
ts_block *ts_node_add_block(ts_node *n);

/* Attributes: setting an existing name replaces its value in place. The
 * string/array arguments are copied into the graph's arena. */
bool ts_node_set_i(ts_node *n, const char *name, int64_t v);
bool ts_node_set_f(ts_node *n, const char *name, double v);
bool ts_node_set_s(ts_node *n, const char *name, const char *s, size_t len);
bool ts_node_set_t(ts_node *n, const char *name, const ts_tconst *t);
bool ts_node_set_g(ts_node *n, const char *name, ts_graph *sub);
bool ts_node_set_ty(ts_node *n, const char *name, const ts_type *t);
bool ts_node_set_is(ts_node *n, const char *name, const int64_t *v, size_t len);
bool ts_node_set_fs(ts_node *n, const char *name, const double *v, size_t len);
bool ts_node_set_ss(ts_node *n, const char *name, const char *const *v, size_t len);
/* A graph read from text knows neither the count nor the contents of a
 * "[<Tensors>]" list: it is set with len 0 and printed back the same. */
bool ts_node_set_ts(ts_node *n, const char *name, const ts_tconst *const *v, size_t len);
const ts_attr *ts_node_attr(const ts_node *n, const char *name);
uint32_t ts_node_attr_count(const ts_node *n);
/* Copies a tensor constant (not its data pointer's bytes) into g's arena. */
const ts_tconst *ts_tconst_clone(ts_graph *g, const ts_tconst *t);
int64_t ts_tconst_numel(const ts_tconst *t);

ts_value *ts_block_add_input(ts_block *b, const ts_type *type);
bool ts_block_add_output(ts_block *b, ts_value *v);
static inline uint32_t ts_block_ninputs(const ts_block *b) { return b->param->noutputs; }
static inline uint32_t ts_block_noutputs(const ts_block *b) { return b->ret->ninputs; }
static inline ts_value *ts_block_input(const ts_block *b, uint32_t i) { return b->param->outputs[i]; }
static inline ts_value *ts_block_output(const ts_block *b, uint32_t i) { return b->ret->inputs[i]; }
/* Iterate: for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next) */
static inline ts_node *ts_block_first(const ts_block *b) { return b->ret->next; }

/* Sets a debug name with PyTorch's rule: a name already held by another value
 * moves that value to "base.N". Numeric names are refused (they print as ids);
 * NULL or "" clears the name. */
bool ts_value_set_name(ts_value *v, const char *name);
/* Whether a name is all digits: such names are value ids, never debug names. */
bool ts_name_is_number(const char *s, size_t n);
/* Sets a name without the renaming rule: for readers that reproduce a printed
 * graph, where names are unique already. False if the name is taken. */
bool ts_value_set_name_exact(ts_value *v, const char *name, size_t len);
ts_value *ts_graph_find_value(const ts_graph *g, const char *name, size_t len);
void ts_value_replace_all_uses(ts_value *from, ts_value *to);
void ts_value_set_type(ts_value *v, const ts_type *t);

/* ---------------------------------------------------------------- clone.c */

/* Copies every node of `from` (it may belong to another graph), with nested
 * blocks, attributes, types (re-made in the destination arena when needed),
 * debug names (made unique by ts_value_set_name) and source locations, in
 * front of `pos`. `inputs` stand for from's inputs (ts_block_ninputs(from)
 * of them); the copies of from's outputs are written to `outputs`
 * (ts_block_noutputs(from) of them). False on allocation failure. */
bool ts_block_clone_before(const ts_block *from, ts_node *pos, ts_value *const *inputs, ts_value **outputs);

/* A deep copy of `g` as a new graph. NULL on allocation failure. */
ts_graph *ts_graph_copy(const ts_graph *g);

/* ---------------------------------------------------------------- print.c */

/* Writes a graph as PyTorch's Graph::print does, subgraphs as trailing
 * "with prim::FusionGroup_0 = graph(...)" sections. */
void ts_graph_print(ts_buf *b, const ts_graph *g);
void ts_node_print(ts_buf *b, const ts_node *n, int level);
/* "%name", or "%id" for a value without a debug name. */
void ts_value_print_name(ts_buf *b, const ts_value *v);
/* "%name": PyTorch prints debug names as they are, and so do we where every
 * byte is ts_name_byte_bare; any other name prints quoted, "%\"a b\"" (a
 * ModuleDict key may hold any character but '.'), so the text reads back. */
void ts_name_print(ts_buf *b, const char *name, size_t n);
/* Whether a byte may stand in a bare printed name: anything but white space,
 * control bytes and the text format's  , ( ) : " \  ('-' and UTF-8 bytes
 * included: PyTorch prints "%block1-0" and non-ASCII identifiers bare). */
static inline bool ts_name_byte_bare(unsigned char c) {
  return c > ' ' && c != 0x7f && c != ',' && c != '(' && c != ')' && c != ':' && c != '"' && c != '\\';
}
/* Writes an attribute value as it appears inside "[name=...]". */
void ts_attr_print_value(ts_buf *b, const ts_attr *a);

/* ---------------------------------------------------------------- parse.c */

/* Reads one graph in the text format. `file` names the text in diagnostics.
 * Returns NULL and fills `d` on error. */
ts_graph *ts_graph_parse(const char *file, const char *src, size_t len, ts_diag *d);
/* Reads a graph type annotation ("Float(2, 3)", "Dict(str, int[])") into `a`. */
const ts_type *ts_type_parse(ts_arena *a, const char *src, size_t len, ts_diag *d);

/* ---------------------------------------------------------------- verify.c */

/* Checks a graph's invariants: lists well formed, every value defined before
 * use and in scope, uses lists consistent with inputs, block signatures of
 * prim::If / prim::Loop, values owned by their graph, schema arity of table
 * ops. Appends one error per violation to `d`; returns true when clean. */
bool ts_graph_verify(const ts_graph *g, ts_diag *d);

/* --------------------------------------------------------------- schema.c */

/* A FunctionSchema: "aten::add.Tensor(Tensor self, Tensor other, *,
 * Scalar alpha=1) -> Tensor". */

/* Alias annotation: Tensor(a), Tensor(a!), Tensor(a -> *), Tensor(a|b). */
typedef struct ts_alias {
  const char *const *sets; /* before "->" */
  uint32_t nsets;
  const char *const *after_sets; /* after "->"; same as sets when absent */
  uint32_t nafter;
  bool is_write;
  const struct ts_alias *contained; /* for Tensor(a)[]: the elements' */
} ts_alias;

typedef enum ts_default_kind {
  TS_DEF_NONE_VALUE, /* "=None" */
  TS_DEF_BOOL,
  TS_DEF_INT,
  TS_DEF_FLOAT,
  TS_DEF_STR,
  TS_DEF_INTS,   /* "=[0, 1]", or "=1" for an int[N] argument, expanded */
  TS_DEF_FLOATS,
  TS_DEF_BOOLS,
  TS_DEF_ENUM,   /* a bare name: contiguous_format, Mean, long, strided */
} ts_default_kind;

typedef struct ts_default {
  ts_default_kind kind;
  size_t len; /* list elements or string bytes */
  union {
    bool b;
    int64_t i;
    double f;
    const char *s; /* STR, ENUM */
    const int64_t *is;
    const double *fs;
    const bool *bs;
  } u;
} ts_default;

struct ts_arg {
  const char *name; /* "" for unnamed returns */
  const ts_type *type;
  int32_t list_len; /* N of "int[N]", -1 otherwise */
  const ts_alias *alias; /* NULL: none */
  bool kwarg_only;
  bool has_default;
  ts_default def;
};

struct ts_schema {
  const char *name;     /* "aten::add" */
  const char *overload; /* "Tensor", "" if none */
  const ts_arg *args;
  const ts_arg *rets;
  uint32_t nargs, nrets;
  bool vararg; /* "..." among the arguments */
  bool varret; /* "-> ..." */
  const char *text; /* as registered */
};

/* Parses a schema string into `a`. NULL and a diagnostic on error. */
const ts_schema *ts_schema_parse(ts_arena *a, const char *text, ts_diag *d);
/* Writes the schema in canonical form (PyTorch's FunctionSchema printing). */
void ts_schema_print(ts_buf *b, const ts_schema *s);

/* ---------------------------------------------------------------- ops.c */

/* Per-kind properties, from ops.def. */
enum {
  TS_OPF_NONE = 0,
  TS_OPF_SPECIAL = 1 << 0, /* handled by the IR itself (Param, Return, If, Loop, Constant, ...) */
  /* Effects beyond what the schemas' alias annotations say (a "!" marks a
   * mutated argument): raising, printing, warning, calls. */
  TS_OPF_SIDE_EFFECT = 1 << 1,
  TS_OPF_VARIADIC = 1 << 2, /* input/output count set by the node (ListConstruct, TupleUnpack, ...) */
  /* Elementwise on its tensor arguments (with broadcasting), no aliasing
   * of its inputs, no side effects: what passes/fuse.c may put in a
   * prim::FusionGroup and codegen lowers to one loop. Set by the TS_PW rows
   * of ops.def (its formula and dtype rule there). */
  TS_OPF_POINTWISE = 1 << 3,
  /* Random (PyTorch's nondeterministic_seeded: dropout, rand, bernoulli,
   * ...): two runs differ. Also set for every kind with a Generator
   * argument. */
  TS_OPF_RANDOM = 1 << 4,
  /* Only autograd sees what it does: without gradients it returns its input
   * as it is (detach, requires_grad_) or makes what only a backward pass
   * reads (AutogradZero). */
  TS_OPF_GRAD_ONLY = 1 << 5,
  /* Returns its input itself when it can and a copy otherwise (reshape,
   * contiguous, to): "Tensor(a)" in its schema, but not a view. */
  TS_OPF_MAY_COPY = 1 << 6,
  /* Derived from the schemas' alias annotations by ts_ops_init, never
   * written in ops.def: */
  TS_OPF_VIEW = 1 << 8,       /* an overload returns a view of an input (ts_op_is_view) */
  TS_OPF_INPLACE = 1 << 9,    /* an overload writes self and returns it (ts_op_is_inplace) */
  TS_OPF_OUT = 1 << 10,       /* an overload writes an out= argument (ts_op_is_out) */
  TS_OPF_HAS_INPLACE = 1 << 11, /* the table has its in-place kind: add has add_ (ts_op_inplace_kind) */
};

/* One entry of the op table: a node kind with all its overloads. */
struct ts_opdef {
  ts_kind kind;
  const char *name; /* "aten::add" */
  unsigned flags;
  const char *const *schema_texts; /* NULL-terminated */
  uint32_t nschemas;
};

/* The pointwise rows of ops.def (TS_PW, TS_PWF; the format is described
 * there): one op id per row, and what every layer reads of it. */
typedef enum ts_pw_op {
#define TS_OP(...)
#define TS_PW(ns, name, ...) TS_PW_##name,
#define TS_PWF(name, ...) TS_PW_##name,
#include "ops.def"
#undef TS_OP
#undef TS_PW
#undef TS_PWF
  TS_PW_COUNT
} ts_pw_op;

typedef enum ts_pw_layout {
  TS_PWL_UNARY,
  TS_PWL_BINARY,
  TS_PWL_ALPHA,
  TS_PWL_DIV,
  TS_PWL_CLAMP,
  TS_PWL_WHERE,
  TS_PWL_MASKED_FILL,
  TS_PWL_LERP,
  TS_PWL_ADDC,
  TS_PWL_GELU,
  TS_PWL_ROUND,
  TS_PWL_TYPE_AS,
  TS_PWL_INT_SELF,
} ts_pw_layout;

/* A row's rule: its dtypes and forms (ops.def says what each means). */
enum {
  TS_PWR_PROMOTE = 1 << 0,
  TS_PWR_NOINT = 1 << 1,
  TS_PWR_NOBOOL = 1 << 2,
  TS_PWR_INTONLY = 1 << 3,
  TS_PWR_NOHALF = 1 << 4,
  TS_PWR_NOBF16 = 1 << 5,
  TS_PWR_BOOLOUT = 1 << 6,
  TS_PWR_SELF = 1 << 7,
  TS_PWR_BOOL_INT64 = 1 << 8,
  TS_PWR_NOFUSE_INT = 1 << 9,
  TS_PWR_NOFUSE = 1 << 10,
  TS_PWR_ALONE = 1 << 11,
  TS_PWR_AUTOGEN_OUT = 1 << 12,
  TS_PWR_AUTOGEN_SCALAR_OTHER = 1 << 13,
  TS_PWR_AUTOGEN_SCALAR_SELF = 1 << 14,
  TS_PWR_DOUBLE = 1 << 15,
  TS_PWR_SAMEOUT = 1 << 16,
};

/* The largest p of mvlgamma (a sum of p terms per element). */
#define TS_PW_MVLGAMMA_MAX_P 1000000

typedef struct ts_pw_def {
  ts_pw_op op;
  ts_kind kind;      /* TS_K_OTHER for a TS_PWF formula */
  const char *name;  /* "abs" */
  uint8_t layout;    /* ts_pw_layout */
  uint8_t nin;       /* operands a, b, w */
  unsigned rule;     /* TS_PWR_* */
  const char *kname; /* the ATen kernel's name in "not implemented for" messages */
} ts_pw_def;

/* The row of an op id (NULL if out of range). */
const ts_pw_def *ts_pw_get(ts_pw_op op);
/* The row declaring kind k, or the row whose in-place kind k is (aten::abs_
 * gives abs's); NULL for other kinds. */
const ts_pw_def *ts_pw_of_kind(ts_kind k);
/* Whether an out= overload of a row is one PyTorch generates from the
 * functional op (its TS_PWR_AUTOGEN_* rule). */
bool ts_pw_out_is_autogen(const ts_pw_def *d, const ts_schema *s);

/* Parses every schema in the table, once (thread-safe). False, with the
 * reasons in `d` (may be NULL), if any schema is malformed or names another
 * kind than its entry. */
bool ts_ops_init(ts_diag *d);
const ts_opdef *ts_op_get(ts_kind k);
/* The parsed schemas of a kind (after ts_ops_init); count in *n. */
const ts_schema *const *ts_op_schemas(ts_kind k, uint32_t *n);
/* The schema with this overload name ("" for the unnamed one), or NULL. */
const ts_schema *ts_op_find_overload(ts_kind k, const char *overload);
/* Schema properties read from the alias annotations. In place: self is
 * written ("Tensor(a!) self") and returned. Out=: a keyword-only argument is
 * written ("*, Tensor(a!) out"). View: a return aliases an input without
 * writing it ("Tensor(a) self -> Tensor(a)", "Tensor(a)[]"), and the kind
 * is not TS_OPF_MAY_COPY. */
bool ts_op_is_inplace(const ts_schema *s);
bool ts_op_is_out(const ts_schema *s);
bool ts_op_is_view(const ts_schema *s);
/* The in-place kind of an op (aten::add -> aten::add_) and back; TS_K_OTHER
 * if the table has none. */
ts_kind ts_op_inplace_kind(ts_kind k);
ts_kind ts_op_functional_kind(ts_kind inplace);
/* The overload whose argument types accept the node's inputs (one taking
 * exactly that many arguments first, then one whose missing ones default) and
 * whose returns match its outputs, or NULL. */
const ts_schema *ts_node_schema(const ts_node *n);

/* ------------------------------------------------------------- variant.c */

/* What an overload is a form of (ts_schema_variant). */
typedef enum ts_variant_kind {
  TS_VARIANT_NONE,
  /* aten::foo_(Tensor(a!) self, ...) -> Tensor(a!): foo's result written
   * into self */
  TS_VARIANT_INPLACE,
  /* the same where foo returns a view of self (foo(Tensor(a) self, ...) ->
   * Tensor(a): unsqueeze_, transpose_, t_, ...): self takes the view's
   * sizes, strides and offset */
  TS_VARIANT_INPLACE_VIEW,
  /* aten::foo.out(..., *, Tensor(a!) out) -> Tensor(a!): foo's results
   * written into the trailing out arguments */
  TS_VARIANT_OUT,
} ts_variant_kind;

#define TS_VARIANT_MAX_OUTS 8

typedef struct ts_variant {
  ts_variant_kind kind;
  const ts_schema *base; /* the out-of-place overload taking the same arguments */
  uint32_t nouts;        /* tensors written: 1 in place, the out arguments for out= */
} ts_variant;

/* The out-of-place overload that in-place or out= overload s is a form of,
 * by its alias annotations and argument types (kind NONE: s is no such
 * form, or no overload fits). */
ts_variant ts_schema_variant(const ts_schema *s);
/* --------------------------------------------------------- ops_pytorch.c */

/* The ops PyTorch 1.13 registers that ops.def does not declare
 * (ops_pytorch.def, generated by tools/gen_ops_pytorch.py), each with its
 * schemas. They have no kind, kernel, shape rule or lowering: the frontend
 * types a call of one by its schemas and emits a TS_K_OTHER node of its
 * name, which the passes remove with a branch that never runs, or which
 * fails when it runs. */
/* The parsed schemas of registered op `qualname` ("aten::bernoulli_", len
 * bytes), count in *n; NULL when PyTorch has no such op or ops.def
 * declares it. Thread-safe. */
const ts_schema *const *ts_op_pytorch_schemas(const char *qualname, size_t len, uint32_t *n);
uint32_t ts_op_pytorch_count(void);
/* Row i's op name, NULL past the end. */
const char *ts_op_pytorch_name(uint32_t i);
/* Checks the table: rows sorted and unique, none in ops.def, every schema
 * parses and names its row. False with the reasons in d (may be NULL). */
bool ts_op_pytorch_check(ts_diag *d);
/* For a TS_K_OTHER node of such an op, the overload that fits it as
 * ts_node_schema picks (ops.c); NULL for other nodes. What a pass may read
 * of a node nothing runs: which arguments it writes and aliases. */
const ts_schema *ts_node_schema_pytorch(const ts_node *n);

#endif
