/* Development scaffold: deleted when shape_prop.c and spec.c land. */
#include "passes.h"
bool ts_pass_shape_prop(ts_graph *g, const ts_type *const *types, uint32_t ntypes, ts_diag *d) { (void)g; (void)types; (void)ntypes; ts_diag_error(d, "shape-prop: not written yet"); return false; }
const ts_type *ts_pass_spec_parse(ts_arena *a, const char *text, size_t len, ts_diag *d) { (void)a; (void)text; (void)len; ts_diag_error(d, "input specs: not written yet"); return NULL; }
const ts_type *ts_pass_spec_of_tensor(ts_arena *a, const ts_rt_tensor *t) { (void)a; (void)t; return NULL; }
