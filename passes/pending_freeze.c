/* Development scaffold: deleted when freeze.c, fold_conv_bn.c and
 * remove_dropout.c land. */
#include "passes.h"
bool ts_pass_freeze(ts_graph *g, const ts_iv *module, ts_diag *d) { (void)g; (void)module; ts_diag_error(d, "freeze: not written yet"); return false; }
bool ts_pass_fold_conv_bn(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "fold-conv-bn: not written yet"); return false; }
bool ts_pass_remove_dropout(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "remove-dropout: not written yet"); return false; }
