/* tests/unit/test_ops_pytorch.c: ir/ops_pytorch.def, PyTorch's registered
 * ops that ops.def lacks: the table is sound (sorted, every schema parses,
 * nothing also in ops.def), lookups find rows by name, and the schemas print
 * back as registered. */
#include "ir.h"
#include "test.h"

#include <string.h>

static void test_table(void) {
  ts_diag d = {0};
  bool ok = ts_op_pytorch_check(&d);
  if (!TS_CHECK(ok))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  /* PyTorch 1.13 registers some 2,100 ops; ops.def holds some 750 rows */
  TS_CHECK(ts_op_pytorch_count() > 800);
  TS_CHECK(ts_op_pytorch_name(ts_op_pytorch_count()) == NULL);
}

/* Every row is found by its name, its schemas print back as PyTorch
 * prints them (the text the row holds), and nothing is found by a prefix. */
static void test_lookup(void) {
  uint32_t bad = 0, reprint = 0, total = 0;
  for (uint32_t i = 0; i < ts_op_pytorch_count(); i++) {
    const char *name = ts_op_pytorch_name(i);
    uint32_t n = 0;
    const ts_schema *const *s = ts_op_pytorch_schemas(name, strlen(name), &n);
    if (!s || n == 0 || strcmp(s[0]->name, name) != 0)
      bad++;
    for (uint32_t k = 0; s && k < n; k++) {
      ts_buf b = {0};
      ts_schema_print(&b, s[k]);
      total++;
      if (!b.data || strcmp(b.data, s[k]->text) != 0) {
        if (reprint++ < 5)
          fprintf(stderr, "prints as %s\n  not as %s\n", b.data ? b.data : "?", s[k]->text);
      }
      ts_buf_free(&b);
    }
  }
  TS_CHECK_INTEQ(bad, 0);
  TS_CHECK_INTEQ(reprint, 0);
  TS_CHECK(total > 1500); /* of PyTorch's ~4,200 schemas, ops.def holds ~2,200 */
  uint32_t n = 7;
  TS_CHECK(ts_op_pytorch_schemas("aten::no_such_op", 16, &n) == NULL && n == 0);
  /* ops.def's own ops are not here */
  TS_CHECK(ts_op_pytorch_schemas("aten::add", 9, &n) == NULL && n == 0);
  /* the length bounds the name: "aten::poisson" within "aten::poisson_nll_loss" */
  const ts_schema *const *s = ts_op_pytorch_schemas("aten::poisson_nll_loss", 13, &n);
  TS_CHECK(s && n == 2);
  bool found = false;
  for (uint32_t i = 0; s && i < n; i++)
    if (strcmp(s[i]->overload, "") == 0) {
      ts_buf b = {0};
      ts_schema_print(&b, s[i]);
      TS_CHECK_STREQ(b.data, "aten::poisson(Tensor self, Generator? generator=None) -> Tensor");
      ts_buf_free(&b);
      found = true;
    }
  TS_CHECK(found);
  /* torchvision's ops are registered too */
  TS_CHECK(ts_op_pytorch_schemas("torchvision::nms", 16, &n) != NULL || ts_kind_lookup("torchvision::nms", 16) != TS_K_OTHER);
}

int main(void) {
  test_table();
  test_lookup();
  return ts_test_finish();
}
