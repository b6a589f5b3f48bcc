/* Development scaffold: deleted when ts_pass_constant_prop and unroll.c
 * land. */
#include "passes.h"
bool ts_pass_constant_prop(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "constprop: not written yet"); return false; }
bool ts_pass_unroll(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "unroll: not written yet"); return false; }
