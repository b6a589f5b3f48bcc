/* frontend/model.h: the loaded model as the emitter sees it (internal to
 * frontend/): source files, classes, functions, and the compile entry
 * points shared by module.c and emit.c. */
#ifndef TSAOT_FRONTEND_MODEL_H
#define TSAOT_FRONTEND_MODEL_H

#include "ast.h"
#include "frontend.h"

typedef struct ts_fe_class ts_fe_class;
typedef struct ts_fe_fn ts_fe_fn;

/* One code/ file, parsed on first use. */
typedef struct ts_fe_file {
  const char *qualifier; /* "__torch__.a.b" for code/__torch__/a/b.py */
  ts_fe_source src;
  ts_ast *ast; /* TS_AST_MODULE */
} ts_fe_file;

typedef enum ts_fe_class_kind {
  TS_FE_CLASS_MODULE,     /* class X(Module) */
  TS_FE_CLASS_PLAIN,      /* a TorchScript class */
  TS_FE_CLASS_NAMEDTUPLE, /* class X(NamedTuple): a named tuple type */
  TS_FE_CLASS_INTERFACE,  /* class X(Interface) / ModuleInterface */
  TS_FE_CLASS_ENUM,       /* class X(Enum) */
} ts_fe_class_kind;

typedef struct ts_fe_attr {
  const char *name;
  const ts_type *type;
  bool is_param, is_buffer;
} ts_fe_attr;

typedef struct ts_fe_const {
  const char *name;
  const ts_type *type; /* of the Final[...] annotation, or NULL */
  const ts_ast *value;
} ts_fe_const;

/* Where a function's compilation stands (for the graph and the optimized
 * graph separately); COMPILING catches recursion. */
typedef enum ts_fe_state {
  TS_FE_NOT_COMPILED,
  TS_FE_COMPILING,
  TS_FE_DONE,
  TS_FE_FAILED,
} ts_fe_state;

struct ts_fe_fn {
  const char *name;     /* "forward" */
  const char *qualname; /* "__torch__.m.Net.forward", "__torch__.m.fn" */
  ts_fe_class *owner;   /* NULL for a free function */
  ts_fe_file *file;
  const ts_ast *def;
  /* signature, read by ts_fe_fn_signature */
  bool sig_ok;
  uint32_t nparams; /* with self for methods */
  const char **param_names;
  const ts_type **param_types;
  const ts_ast **param_defaults; /* NULL: none */
  const ts_type *ret_type;
  /* compiled graphs */
  ts_fe_state state;
  ts_graph *graph;     /* as compiled (cleanup passes run); partial after a failure */
  ts_fe_state opt_state;
  ts_graph *optimized; /* calls inlined, then peephole, constant propagation, pooling */
  ts_fe_fn *next;
};

struct ts_fe_class {
  const char *qualname;
  ts_fe_class_kind kind;
  ts_fe_file *file;
  const ts_ast *def;
  const ts_type *type; /* class type, or the named tuple type */
  ts_fe_attr *attrs;
  uint32_t nattrs;
  ts_fe_const *consts;
  uint32_t nconsts;
  ts_fe_fn *methods; /* list */
  ts_fe_class *next;
};

struct ts_fe_model {
  ts_arena arena; /* types, names, values of the model */
  ts_fe_archive *ar;
  const char *path;
  ts_pv *root;
  ts_pv *constants; /* TUPLE, or NULL when the archive has none */
  ts_fe_file **files;
  uint32_t nfiles, cap_files;
  ts_fe_class *classes;
  ts_fe_fn *functions;
  ts_graph **graphs; /* every graph made, freed with the model */
  uint32_t ngraphs, cap_graphs;
  /* each call of an operator neither the op table nor PyTorch's registry
   * knows, as reported (names in the arena), for the grouped summary */
  const char **unknown;
  uint32_t nunknown, cap_unknown;
};

/* The class or free function `qualname` ("__torch__.a.b.C"), reading and
 * parsing its file on first use. NULL (and an error at `where` in `d`, if
 * `where` has a source) when there is none or its file does not parse. */
ts_fe_class *ts_fe_model_class(ts_fe_model *m, const char *qualname, ts_srange where, ts_diag *d);
ts_fe_fn *ts_fe_model_function(ts_fe_model *m, const char *qualname, ts_srange where, ts_diag *d);
ts_fe_fn *ts_fe_class_method(const ts_fe_class *c, const char *name);
const ts_fe_attr *ts_fe_class_attr(const ts_fe_class *c, const char *name);
const ts_fe_const *ts_fe_class_const(const ts_fe_class *c, const char *name);
/* Whether `qualname` names a file's qualifier ("__torch__.a" for code/__torch__/a.py
 * or a folder code/__torch__/a/). */
bool ts_fe_model_is_package(ts_fe_model *m, const char *qualname, size_t len);

/* Turns a type expression (an AST) into a type in the model's arena. NULL
 * and an error at the expression on failure. */
const ts_type *ts_fe_type_from_ast(ts_fe_model *m, const ts_ast *e, ts_diag *d);

/* Reads a function's signature (parameter names, types, defaults, return type). */
bool ts_fe_fn_signature(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d);

/* emit.c: compiles a function into fn->graph (once). */
ts_graph *ts_fe_fn_graph(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d);
/* The optimized graph of fn (inlined, cleaned), for inlining into callers. */
ts_graph *ts_fe_fn_optimized(ts_fe_model *m, ts_fe_fn *fn, ts_diag *d);
/* Records a call of an unknown operator (reported by emit.c) for the
 * summary that ts_fe_model_method adds to its errors. False on OOM. */
bool ts_fe_model_note_unknown(ts_fe_model *m, const char *name);
/* Registers a graph for freeing with the model. False on OOM (the graph is
 * freed). */
bool ts_fe_model_own_graph(ts_fe_model *m, ts_graph *g);

#endif
