/* Development scaffold: deleted when alias_analysis.c, cse.c and
 * remove_mutation.c land. */
#include "passes.h"
/* a non-NULL handle whose every answer is the conservative one */
ts_alias_db *ts_alias_db_new(ts_graph *g, ts_diag *d) { static char conservative; (void)g; (void)d; return (ts_alias_db *)(void *)&conservative; }
void ts_alias_db_free(ts_alias_db *db) { (void)db; }
bool ts_alias_may_alias(const ts_alias_db *db, const ts_value *a, const ts_value *b) { (void)db; (void)a; (void)b; return true; }
bool ts_alias_node_writes_to(const ts_alias_db *db, const ts_node *n, const ts_value *v) { (void)db; (void)n; (void)v; return true; }
bool ts_alias_has_writers(const ts_alias_db *db, const ts_value *v) { (void)db; (void)v; return true; }
bool ts_alias_node_has_writes(const ts_alias_db *db, const ts_node *n) { (void)db; (void)n; return true; }
bool ts_alias_escapes(const ts_alias_db *db, const ts_value *v) { (void)db; (void)v; return true; }
bool ts_alias_can_move_before(const ts_alias_db *db, const ts_node *n, const ts_node *pos) { (void)db; (void)n; (void)pos; return false; }
bool ts_pass_cse(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "cse: not written yet"); return false; }
bool ts_pass_remove_mutation(ts_graph *g, ts_diag *d) { (void)g; ts_diag_error(d, "remove-mutation: not written yet"); return false; }
