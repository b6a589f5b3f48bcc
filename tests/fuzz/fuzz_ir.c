/* tests/fuzz/fuzz_ir.c: the IR text parser (what tsaot-opt reads), then the
 * verifier, then the printer on a graph that verifies. */
#include "fuzz.h"
#include "ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("fuzz.txt", (const char *)data, size, &d);
  if (g) {
    if (ts_graph_verify(g, &d)) {
      ts_buf b = {0};
      ts_graph_print(&b, g);
      ts_buf_free(&b);
    }
    ts_graph_free(g);
  }
  ts_diag_free(&d);
  return 0;
}
