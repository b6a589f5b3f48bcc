/* loader/loader.h: a TorchScript archive ready to run in the reference
 * interpreter (the library tsaot_loader, above frontend/ and runtime/: the
 * runtime itself never reads an archive). It turns the pickled module tree
 * (ts_pv values) into IValue objects and resolves methods and functions to
 * the frontend's graphs. Compiled models that embed their archive reach it
 * only through ts_rt_model_aot_ops, which their descriptor names.
 */
#ifndef TS_LOADER_H
#define TS_LOADER_H

#include "aot.h"
#include "frontend.h"
#include "runtime.h"

typedef struct ts_rt_model ts_rt_model;

/* Loads `path` (ts_fe_model_load), builds the root module object (tensors
 * copied out of the archive into runtime storages, one storage per archive
 * storage so that tied weights stay shared), and compiles nothing yet.
 * NULL and the reason in d on error. */
ts_rt_model *ts_rt_model_load(const char *path, ts_diag *d);
/* The same from an archive in memory (borrowed: it must outlive the
 * model); `name` stands for the file in messages. */
ts_rt_model *ts_rt_model_load_buffer(const void *data, size_t len, const char *name, ts_diag *d);
void ts_rt_model_free(ts_rt_model *m);
/* The inlined graph of a method of the root module (compiled on first use;
 * NULL and the frontend's errors in d). Its inputs are self, then the
 * arguments. */
ts_graph *ts_rt_model_graph(ts_rt_model *m, const char *method, ts_diag *d);
/* Runs a method of the root module: args are the arguments after self
 * (borrowed); the graph's outputs are written to ret (new references; the
 * graph has one output, forward's return value). Arguments left out at the
 * end take the method's default values (literal defaults); a missing one
 * without a default is an error ("forward() is missing value for argument
 * 'x'"). On error see ts_rt_interp_run. */
bool ts_rt_model_run(ts_rt_model *m, ts_rt_ctx *ctx, const char *method, const ts_iv *args, uint32_t nargs,
                     ts_iv *ret, ts_buf *where);
/* The same, running `g` (NULL: the method's own graph) in place of the
 * method's graph: an optimized copy of it, with the same inputs (self
 * first). Defaults are the method's. */
bool ts_rt_model_run_graph(ts_rt_model *m, ts_rt_ctx *ctx, const char *method, ts_graph *g, const ts_iv *args,
                           uint32_t nargs, ts_iv *ret, ts_buf *where);
/* The root module object (borrowed). */
ts_iv ts_rt_model_root(const ts_rt_model *m);
/* The text of a code/ file of the archive, for messages (NULL: none). The
 * shape of ts_rt_resolver.source: ctx is the model. */
const char *ts_rt_model_source(void *m, const char *file, size_t *len);
/* The default values of the parameters of a method's graph g from position
 * `given` (self is 0) on, into all[given..] (new references), as a call
 * that leaves them out gets them. False with the reason in ctx when one has
 * no default. */
bool ts_rt_model_defaults(ts_rt_model *m, ts_rt_ctx *ctx, const ts_graph *g, const char *method, ts_iv *all,
                          uint32_t given);
/* The loader as runtime/hosted/aot.c calls it (load from the embedded
 * archive, run a graph with the module, free): what codegen/entry.c puts in
 * the descriptor of a model that embeds its archive, so that only such a
 * model links this library. */
extern const ts_rt_aot_module_ops ts_rt_model_aot_ops;

#endif
