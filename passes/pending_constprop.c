/* Development scaffold: deleted when ts_pass_constant_prop and unroll.c
 * land. */
#include "passes.h"
bool ts_pass_constant_prop(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "constprop: not written yet"); return false; }
bool ts_pass_unroll(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "unroll: not written yet"); return false; }
bool ts_pass_const_to_iv(ts_rt_ctx *ctx, const ts_value *v, ts_iv *out) { (void)ctx; (void)v; (void)out; return false; }
ts_value *ts_pass_const_insert_iv(ts_node *pos, const ts_iv *iv, const ts_type *type, bool borrow_tensors) { (void)pos; (void)iv; (void)type; (void)borrow_tensors; return NULL; }
