/* tests/unit/test_names.c: every debug name PyTorch can make survives the
 * text format (print, then parse): names with each byte 1..255 in front,
 * inside and at the end, and the names freezing makes of submodule paths.
 * PyTorch's Value::setDebugName takes any non-numeric string, and a
 * ModuleDict key any character but '.'. */
#include "ir.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { NAMES_PER_GRAPH = 3 * 255 };

/* A graph whose inputs carry `names`, each returned by an aten::relu whose
 * output is named like its input plus ".r" (a use and a definition of every
 * name, in a node and in the graph's parameters and return). */
static ts_graph *graph_with_names(char names[][8], size_t n) {
  ts_graph *g = ts_graph_new(0);
  if (!g)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    ts_value *x = ts_block_add_input(g->block, ts_type_leaf(TS_TY_TENSOR));
    ts_node *r = ts_node_new(g, TS_K_aten_relu, 1);
    if (!x || !r || !ts_value_set_name(x, names[i]) || !ts_node_add_input(r, x))
      return ts_graph_free(g), NULL;
    ts_block_append_node(g->block, r);
    char out[16];
    snprintf(out, sizeof out, "%.7s.r", names[i]);
    if (!ts_value_set_name(r->outputs[0], out) || !ts_block_add_output(g->block, r->outputs[0]))
      return ts_graph_free(g), NULL;
  }
  return g;
}

static void test_every_byte(void) {
  static char names[NAMES_PER_GRAPH][8];
  size_t n = 0;
  for (int c = 1; c < 256; c++) {
    snprintf(names[n++], 8, "%c", c);
    snprintf(names[n++], 8, "a%cb", c);
    snprintf(names[n++], 8, "%c0.1", c);
  }
  /* "0".."9" alone are ids, which PyTorch refuses as names too */
  for (size_t i = 0; i < n; i++)
    if (ts_name_is_number(names[i], strlen(names[i])))
      names[i][1] = 'x', names[i][2] = 0;
  ts_graph *g = graph_with_names(names, n);
  if (!TS_CHECK(g != NULL))
    return;
  ts_buf text = {0};
  ts_graph_print(&text, g);
  ts_diag d = {0};
  ts_graph *r = ts_graph_parse("names", text.data, text.len, &d);
  if (!TS_CHECK(r != NULL)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  } else {
    TS_CHECK(ts_graph_verify(r, &d));
    TS_CHECK_INTEQ(ts_block_ninputs(r->block), n);
    for (size_t i = 0; i < n && i < ts_block_ninputs(r->block); i++)
      if (!TS_CHECK_STREQ(ts_block_input(r->block, i)->name, names[i]))
        fprintf(stderr, "  name %zu: byte 0x%02x\n", i, (unsigned char)names[i][i % 3 == 1]);
    ts_buf again = {0};
    ts_graph_print(&again, r);
    TS_CHECK(again.len == text.len && memcmp(again.data, text.data, text.len) == 0);
    ts_buf_free(&again);
    ts_graph_free(r);
  }
  ts_diag_free(&d);
  ts_buf_free(&text);
  ts_graph_free(g);
}

/* How names print: PyTorch's text where it can be read back, quoted where
 * not. */
static void test_printed(void) {
  static const struct {
    const char *name, *printed;
  } cases[] = {
      {"self.trunk_output.block1.block1-0.f.se.fc1.weight", "%self.trunk_output.block1.block1-0.f.se.fc1.weight"},
      {"self.seq.0.weight", "%self.seq.0.weight"},
      {"_0", "%_0"},
      {"1x", "%1x"},
      {"x#y", "%x#y"},
      {"p%q", "%p%q"},
      {"a->b", "%a->b"},
      {"caf\xc3\xa9", "%caf\xc3\xa9"},
      {"self.d.a b.weight", "%\"self.d.a b.weight\""},
      {"c:d,(e)", "%\"c:d,(e)\""},
      {"q\"\\", "%\"q\\\"\\\\\""},
      {"tab\tcaf\xc3\xa9", "%\"tab\\tcaf\\303\\251\""},
      {"del\x7f", "%\"del\\177\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ts_buf b = {0};
    ts_name_print(&b, cases[i].name, strlen(cases[i].name));
    TS_CHECK_STREQ(b.data, cases[i].printed);
    ts_buf_free(&b);
  }
}

int main(void) {
  test_every_byte();
  test_printed();
  return ts_test_finish();
}
