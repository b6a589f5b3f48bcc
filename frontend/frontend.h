/* frontend/frontend.h: loading a TorchScript archive (what torch.jit.save
 * writes) into a module tree and one IR graph per method.
 *
 * The model owns everything it hands out: graphs, types and tensor bytes
 * stay valid until ts_fe_model_free. */
#ifndef TSAOT_FRONTEND_H
#define TSAOT_FRONTEND_H

#include "ir.h"
#include "pickle.h"

typedef struct ts_fe_model ts_fe_model;

/* Opens `path`, reads the module tree (data.pkl) and the tensor constants
 * of traced code (constants.pkl). Code is compiled lazily, method by method.
 * NULL and a reason in `d` on error. */
ts_fe_model *ts_fe_model_load(const char *path, ts_diag *d);
/* The same from an archive in memory (borrowed: it must outlive the
 * model); `name` stands for the file in messages. */
ts_fe_model *ts_fe_model_load_buffer(const void *data, size_t len, const char *name, ts_diag *d);
void ts_fe_model_free(ts_fe_model *m);

/* The root object (a TS_PV_OBJECT of the module's class). */
const ts_pv *ts_fe_model_root(const ts_fe_model *m);

/* The graph of `method` of the root module ("forward"), compiled from its
 * source as PyTorch compiles it when loading (SSA, calls to other methods and
 * functions left as prim::CallMethod / prim::CallFunction). NULL with every
 * error found (all unknown operators of the method and what it calls, not
 * only the first) in `d`. */
ts_graph *ts_fe_model_method(ts_fe_model *m, const char *method, ts_diag *d);

/* The same graph with every call inlined, as PyTorch's `inlined_graph`. */
ts_graph *ts_fe_model_method_inlined(ts_fe_model *m, const char *method, ts_diag *d);

/* Writes the module tree for people: each object's class, its attributes
 * with their types and values (tensors as dtype and shape), submodules
 * indented, then each class used with its constants and method signatures. */
bool ts_fe_model_print_code(ts_fe_model *m, ts_buf *b, ts_diag *d);

#endif
