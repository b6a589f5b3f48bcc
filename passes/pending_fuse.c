/* Development scaffold: deleted when fuse.c lands. */
#include "passes.h"
bool ts_pass_fuse(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "fuse: not written yet"); return false; }
