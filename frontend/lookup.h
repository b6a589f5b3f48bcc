/* frontend/lookup.h: what the runtime's model loader (loader/model.c) asks
 * of a loaded model beyond frontend.h: the declared attributes of any class,
 * the graphs of methods of any class and of free functions with their calls
 * inlined, and the source text of code/ files for messages.
 *
 * Everything returned is owned by the model. */
#ifndef TSAOT_FRONTEND_LOOKUP_H
#define TSAOT_FRONTEND_LOOKUP_H

#include "frontend.h"

/* A class as objects of it are laid out: its declared attributes, in the
 * order the class body declares them. */
typedef struct ts_fe_class_layout {
  const char *qualname;
  const ts_type *type; /* the class type (a named tuple's tuple type) */
  uint32_t nattrs;
  const char *const *names;
  const ts_type *const *types;
  bool is_module;
} ts_fe_class_layout;

/* False and the reason in d if there is no such class or its source does
 * not read. */
bool ts_fe_model_class_layout(ts_fe_model *m, const char *qualname, ts_fe_class_layout *out, ts_diag *d);

/* The graph of method `name` of class `qualname`, with every call inlined
 * except calls through module interfaces (the graph PyTorch inlines into a
 * caller). NULL with the reason in d (no such class or method, compile
 * errors). */
ts_graph *ts_fe_model_class_method_graph(ts_fe_model *m, const char *qualname, const char *name, ts_diag *d);

/* The same for the free function `qualname` ("__torch__.m.fn"). */
ts_graph *ts_fe_model_function_graph(ts_fe_model *m, const char *qualname, ts_diag *d);

/* The default values of the parameters of method `name` of class
 * `qualname`, self included: defaults[i] NULL where parameter i has none or
 * its default is not a literal (None, True/False, numbers, strings, and
 * tuples and lists of them). The count in *n. False with the reason in d if
 * there is no such method or its signature does not read. */
bool ts_fe_model_method_defaults(ts_fe_model *m, const char *qualname, const char *name, uint32_t *n,
                                 const ts_pv *const **defaults, ts_diag *d);

/* The text of a code/ file that was read ("code/__torch__/m.py", as node
 * locations name it); NULL if none. */
const char *ts_fe_model_source_text(const ts_fe_model *m, const char *file, size_t *len);

#endif
