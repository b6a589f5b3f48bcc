/* tests/unit/test_ir.c: the arena, use lists, node editing, debug names,
 * types and the text format's helpers. */
#include "ir.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_arena(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  char *p = ts_arena_alloc(&a, 3);
  char *q = ts_arena_alloc(&a, 100);
  TS_CHECK(p && q);
  TS_CHECK(((uintptr_t)p & 15) == 0 && ((uintptr_t)q & 15) == 0);
  TS_CHECK(q[0] == 0 && q[99] == 0);
  /* a request bigger than a chunk gets its own and the arena keeps serving */
  char *big = ts_arena_alloc(&a, 1 << 20);
  char *after = ts_arena_alloc(&a, 16);
  TS_CHECK(big && after && big[(1 << 20) - 1] == 0);
  int *arr = ts_arena_grow(&a, NULL, 0, 4, sizeof *arr);
  arr[3] = 7;
  int *arr2 = ts_arena_grow(&a, arr, 4, 8, sizeof *arr2);
  TS_CHECK(arr2 && arr2[3] == 7 && arr2[7] == 0);
  TS_CHECK(ts_arena_grow(&a, NULL, 0, SIZE_MAX / 2, 4) == NULL);
  TS_CHECK(a.failed);
  TS_CHECK(ts_arena_alloc(&a, 1) == NULL); /* failure is sticky */
  ts_arena_release(&a);

  ts_arena lim;
  ts_arena_init(&lim, 1000);
  TS_CHECK(ts_arena_alloc(&lim, 512) != NULL);
  TS_CHECK(ts_arena_alloc(&lim, 512) == NULL);
  TS_CHECK(lim.failed);
  ts_arena_release(&lim);
}

/* x -> relu -> (a), x -> neg -> (b), add(a, b) */
static void test_uses(void) {
  ts_graph *g = ts_graph_new(0);
  TS_CHECK(g != NULL);
  ts_value *x = ts_block_add_input(g->block, ts_type_leaf(TS_TY_TENSOR));
  /* kinds outside the op table: no schema arity to satisfy */
  ts_node *relu = ts_node_new_named(g, "my::relu", 8, 1);
  ts_node *other = ts_node_new_named(g, "my::op", 6, 1);
  TS_CHECK(relu && other && other->kind == TS_K_OTHER);
  TS_CHECK_STREQ(other->kind_name, "my::op");
  ts_block_append_node(g->block, relu);
  ts_block_append_node(g->block, other);
  TS_CHECK(ts_node_add_input(relu, x));
  TS_CHECK(ts_node_add_input(relu, x));
  TS_CHECK(ts_node_add_input(other, relu->outputs[0]));
  TS_CHECK(ts_node_add_input(other, x));
  TS_CHECK(ts_block_add_output(g->block, other->outputs[0]));
  TS_CHECK_INTEQ(x->nuses, 3);
  TS_CHECK(x->uses[0].user == relu && x->uses[0].index == 0);
  TS_CHECK(x->uses[1].user == relu && x->uses[1].index == 1);
  TS_CHECK(x->uses[2].user == other && x->uses[2].index == 1);

  /* removing input 0 renumbers the use of input 1 */
  ts_node_remove_input(relu, 0);
  TS_CHECK_INTEQ(relu->ninputs, 1);
  TS_CHECK_INTEQ(x->nuses, 2);
  TS_CHECK(x->uses[0].user == relu && x->uses[0].index == 0);

  /* replace-all-uses moves every use, including the Return's */
  ts_node *n2 = ts_node_new_named(g, "my::op", 6, 1);
  ts_node_insert_after(n2, other);
  TS_CHECK(ts_node_add_input(n2, x));
  ts_value_replace_all_uses(other->outputs[0], n2->outputs[0]);
  TS_CHECK_INTEQ(other->outputs[0]->nuses, 0);
  TS_CHECK(g->block->ret->inputs[0] == n2->outputs[0]);
  TS_CHECK_INTEQ(n2->outputs[0]->nuses, 1);

  ts_node_replace_input(other, 1, relu->outputs[0]);
  TS_CHECK_INTEQ(relu->outputs[0]->nuses, 2);
  TS_CHECK(relu->outputs[0]->uses[1].index == 1);

  ts_diag d = {0};
  TS_CHECK(ts_graph_verify(g, &d));
  ts_diag_free(&d);

  /* destroying a node drops its uses; its output is now unused */
  ts_node_destroy(other);
  TS_CHECK_INTEQ(relu->outputs[0]->nuses, 0);
  TS_CHECK(g->block->ret->prev == n2 && n2->prev == relu);
  TS_CHECK(ts_graph_verify(g, &d));
  ts_diag_free(&d);

  /* a use of a destroyed node's output is caught by the verifier */
  ts_node *dead = ts_node_new_named(g, "my::op", 6, 1);
  ts_node_insert_before(dead, n2);
  ts_node_replace_input(n2, 0, dead->outputs[0]);
  ts_node_destroy(dead);
  TS_CHECK(!ts_graph_verify(g, &d));
  TS_CHECK(d.text.data && strstr(d.text.data, "used before its definition"));
  ts_diag_free(&d);
  ts_graph_free(g);
}

/* Destroying a prim::If must forget the uses its nested nodes made of
 * values from outside, or replace-all-uses would write into dead nodes. */
static void test_destroy_nested(void) {
  ts_graph *g = ts_graph_new(0);
  ts_value *c = ts_block_add_input(g->block, ts_type_leaf(TS_TY_BOOL));
  ts_value *x = ts_block_add_input(g->block, ts_type_leaf(TS_TY_TENSOR));
  ts_node *iff = ts_node_new(g, TS_K_prim_If, 1);
  ts_block_append_node(g->block, iff);
  ts_node_add_input(iff, c);
  for (int i = 0; i < 2; i++) {
    ts_block *b = ts_node_add_block(iff);
    ts_node *m = ts_node_new_named(g, "my::op", 6, 1);
    ts_block_append_node(b, m);
    ts_node_add_input(m, x);
    ts_block_add_output(b, i ? x : m->outputs[0]);
  }
  TS_CHECK_INTEQ(x->nuses, 3);
  ts_diag d = {0};
  TS_CHECK(ts_graph_verify(g, &d));
  ts_node_destroy(iff);
  TS_CHECK_INTEQ(x->nuses, 0);
  TS_CHECK_INTEQ(c->nuses, 0);
  TS_CHECK(ts_block_first(g->block) == g->block->ret);
  ts_diag_free(&d);
  ts_graph_free(g);
}

static void test_names(void) {
  ts_graph *g = ts_graph_new(0);
  ts_value *a = ts_block_add_input(g->block, NULL);
  ts_value *b = ts_block_add_input(g->block, NULL);
  ts_value *c = ts_block_add_input(g->block, NULL);
  ts_value *d = ts_block_add_input(g->block, NULL);
  TS_CHECK(ts_value_set_name(a, "x"));
  TS_CHECK(ts_value_set_name(b, "x")); /* a becomes x.1 */
  TS_CHECK_STREQ(a->name, "x.1");
  TS_CHECK_STREQ(b->name, "x");
  TS_CHECK(ts_value_set_name(c, "x")); /* b becomes x.3: PyTorch skips one */
  TS_CHECK_STREQ(b->name, "x.3");
  TS_CHECK(ts_value_set_name(d, "x.1")); /* a, holding x.1, moves on from 1 */
  TS_CHECK_STREQ(d->name, "x.1");
  TS_CHECK(a->name && strcmp(a->name, "x.1") != 0 && strncmp(a->name, "x.", 2) == 0);
  TS_CHECK(ts_graph_find_value(g, "x", 1) == c);
  TS_CHECK(!ts_value_set_name(d, "12")); /* numeric names are ids */
  TS_CHECK(ts_value_set_name(d, NULL));
  TS_CHECK(d->name == NULL && ts_graph_find_value(g, "x.1", 3) == NULL);
  TS_CHECK(!ts_value_set_name_exact(a, "x", 1)); /* taken by c */
  /* numeric names read from text keep ids of new values clear of them */
  TS_CHECK(ts_value_set_name_exact(d, "500", 3));
  ts_value *e = ts_block_add_input(g->block, NULL);
  TS_CHECK(e->id > 500);
  ts_graph_free(g);
}

static const char *print_type(ts_buf *b, const ts_type *t) {
  b->len = 0;
  ts_type_print(b, t);
  return b->data ? b->data : "";
}

static void test_types(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_buf b = {0};
  const ts_type *i = ts_type_leaf(TS_TY_INT);
  const ts_type *t = ts_type_leaf(TS_TY_TENSOR);
  const ts_type *li = ts_type_list(&a, i);
  TS_CHECK_STREQ(print_type(&b, li), "int[]");
  TS_CHECK_STREQ(print_type(&b, ts_type_optional(&a, li)), "int[]?");
  const ts_type *kv[2] = {ts_type_leaf(TS_TY_STR), t};
  TS_CHECK_STREQ(print_type(&b, ts_type_dict(&a, kv[0], kv[1])), "Dict(str, Tensor)");
  TS_CHECK_STREQ(print_type(&b, ts_type_tuple(&a, 2, kv)), "(str, Tensor)");
  TS_CHECK_STREQ(print_type(&b, ts_type_tuple(&a, 0, NULL)), "()");
  int64_t sizes[2] = {2, -1}, strides[2] = {3, 1};
  ts_tensor_info ti = {.dtype = TS_DT_FLOAT32, .requires_grad = 0, .undefined = -1,
                       .device = {TS_DEV_CPU, -1}, .rank = 2, .sizes = sizes, .strides = strides};
  const ts_type *ft = ts_type_tensor(&a, &ti);
  TS_CHECK_STREQ(print_type(&b, ft), "Float(2, *, strides=[3, 1], requires_grad=0, device=cpu)");
  sizes[0] = 9; /* the type keeps its own copy */
  TS_CHECK_STREQ(print_type(&b, ft), "Float(2, *, strides=[3, 1], requires_grad=0, device=cpu)");

  /* equality is structural; clones are equal */
  TS_CHECK(ts_type_equal(ts_type_list(&a, i), li));
  TS_CHECK(!ts_type_equal(ts_type_list(&a, t), li));
  TS_CHECK(ts_type_equal(ts_type_clone(&a, ft), ft));
  TS_CHECK(ts_type_clone(&a, i) == i);

  /* subtyping */
  TS_CHECK(ts_type_is_subtype(ft, t));
  TS_CHECK(!ts_type_is_subtype(t, ft));
  TS_CHECK(ts_type_is_subtype(i, ts_type_leaf(TS_TY_NUMBER)));
  TS_CHECK(ts_type_is_subtype(ts_type_leaf(TS_TY_NONE), ts_type_optional(&a, t)));
  TS_CHECK(ts_type_is_subtype(ft, ts_type_optional(&a, t)));
  TS_CHECK(!ts_type_is_subtype(ts_type_list(&a, ft), ts_type_list(&a, t))); /* lists are invariant */
  TS_CHECK(ts_type_is_subtype(li, ts_type_leaf(TS_TY_ANY)));
  const ts_type *tup_sub[2] = {ft, i}, *tup_sup[2] = {t, ts_type_leaf(TS_TY_NUMBER)};
  TS_CHECK(ts_type_is_subtype(ts_type_tuple(&a, 2, tup_sub), ts_type_tuple(&a, 2, tup_sup)));
  /* a union where each member fits (torch.functional.norm's Union[number] p) */
  const ts_type *num = ts_type_leaf(TS_TY_NUMBER), *ifl[2] = {i, ts_type_leaf(TS_TY_FLOAT)}, *it[2] = {i, t};
  TS_CHECK(ts_type_is_subtype(ts_type_union(&a, 1, &num), num));
  TS_CHECK(ts_type_is_subtype(ts_type_union(&a, 1, &num), ts_type_optional(&a, num)));
  TS_CHECK(ts_type_is_subtype(ts_type_union(&a, 2, ifl), num));
  TS_CHECK(!ts_type_is_subtype(ts_type_union(&a, 2, it), num));

  /* the type parser reads what the printer writes */
  ts_diag d = {0};
  const char *texts[] = {"Float(2, *, strides=[3, 1], requires_grad=0, device=cpu)", "Dict(str, (int, Tensor?)[])",
                         "Long()", "DoubleTensor", "Tensor(requires_grad=1)", "__torch__.a.B", "Union(int, str)",
                         "NamedTuple(x : int, y : Half(1, device=cuda:1))"};
  for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
    const ts_type *pt = ts_type_parse(&a, texts[k], strlen(texts[k]), &d);
    TS_CHECK(pt != NULL);
    if (pt)
      TS_CHECK_STREQ(print_type(&b, pt), texts[k]);
  }
  TS_CHECK(ts_type_parse(&a, "Dict(int)", 9, &d) == NULL);
  TS_CHECK(d.text.data && strstr(d.text.data, "'Dict' takes 2 type arguments"));
  ts_diag_free(&d);

  /* deep nesting is refused, not a stack overflow */
  size_t n = 100000;
  char *deep = malloc(2 * n + 4);
  memset(deep, '(', n);
  memcpy(deep + n, "int", 3);
  memset(deep + n + 3, ')', n);
  TS_CHECK(ts_type_parse(&a, deep, 2 * n + 3, &d) == NULL);
  TS_CHECK(d.text.data && strstr(d.text.data, "nesting deeper than"));
  free(deep);
  ts_diag_free(&d);
  ts_buf_free(&b);
  ts_arena_release(&a);
}

/* unifyTypes: the If-output and list-literal rule of the emitter and the
 * peephole pass. */
static void test_unify(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_buf b = {0};
  bool oom = false;
  const ts_type *i = ts_type_leaf(TS_TY_INT), *f = ts_type_leaf(TS_TY_FLOAT), *none = ts_type_leaf(TS_TY_NONE);
  const ts_type *t = ts_type_leaf(TS_TY_TENSOR);
  TS_CHECK(ts_type_unify(&a, i, i, &oom) == i);
  TS_CHECK(ts_type_unify(&a, i, f, &oom) == NULL);
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, none, i, &oom)), "int?");
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, ts_type_optional(&a, i), i, &oom)), "int?");
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, i, none, &oom)), "int?");
  const ts_type *pair1[2] = {i, none}, *pair2[2] = {i, i};
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, ts_type_tuple(&a, 2, pair1), ts_type_tuple(&a, 2, pair2), &oom)),
                 "(int, int?)");
  int64_t s1[1] = {2}, s2[1] = {3};
  ts_tensor_info ti1 = {.dtype = TS_DT_FLOAT32, .requires_grad = -1, .undefined = -1, .device = {TS_DEV_NONE, -1},
                        .rank = 1, .sizes = s1};
  ts_tensor_info ti2 = ti1;
  ti2.sizes = s2;
  /* tensors merge to what both agree on; lists of different tensors unify unshaped */
  const ts_type *t1 = ts_type_tensor(&a, &ti1), *t2 = ts_type_tensor(&a, &ti2);
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, t1, t2, &oom)), "Float(*)");
  TS_CHECK_STREQ(print_type(&b, ts_type_unify(&a, ts_type_list(&a, t1), ts_type_list(&a, t2), &oom)), "Tensor[]");
  TS_CHECK(ts_type_unify(&a, ts_type_list(&a, t), ts_type_list(&a, i), &oom) == NULL);
  TS_CHECK(!oom);
  ts_buf_free(&b);
  ts_arena_release(&a);
}

static void test_buf(void) {
  ts_buf b = {0};
  double vals[] = {0.0, -0.0, 1.0, 2.5, 0.1, 1e10, 9999999999.0, 1e20, 1e-5, -3.0, INFINITY, -INFINITY};
  const char *want[] = {"0.", "-0.", "1.", "2.5", "0.10000000000000001", "10000000000", "9999999999.", "1e+20",
                        "1.0000000000000001e-05", "-3.", "inf", "-inf"};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    b.len = 0;
    ts_buf_put_double(&b, vals[i]);
    TS_CHECK_STREQ(b.data, want[i]);
  }
  b.len = 0;
  ts_buf_put_quoted(&b, "a'b\"c\\\n\x01\xc3", 9);
  TS_CHECK_STREQ(b.data, "\"a\\'b\\\"c\\\\\\n\\001\\303\"");
  ts_buf_free(&b);
}

/* A caret lines up under the column it reports. */
static void test_diag(void) {
  ts_diag d = {0};
  const char *src = "line one\n  two here\nthree";
  ts_diag_error_at(&d, "f.ir", src, strlen(src), 2, 3, "bad %s", "thing");
  TS_CHECK_STREQ(d.text.data, "f.ir:2:3: error: bad thing\n  two here\n  ^\n");
  TS_CHECK_INTEQ(d.errors, 1);
  ts_diag_free(&d);
}

/* PyTorch's dtype rules (ir/promote.c); the expected values are PyTorch
 * 1.13's (the Python expression that gave each is beside it). */
static void test_promote(void) {
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_UINT8, TS_DT_INT8), TS_DT_INT16); /* torch.promote_types(uint8, int8) */
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_BFLOAT16, TS_DT_FLOAT16), TS_DT_FLOAT32);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_BOOL, TS_DT_UINT8), TS_DT_UINT8);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_INT64, TS_DT_FLOAT16), TS_DT_FLOAT16);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_FLOAT32, TS_DT_COMPLEX32), TS_DT_COMPLEX64);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_INT32, TS_DT_INT32), TS_DT_INT32);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_NONE, TS_DT_INT32), TS_DT_NONE);
  TS_CHECK_INTEQ(ts_type_promote(TS_DT_QINT8, TS_DT_FLOAT32), TS_DT_NONE);
  /* torch.can_cast(float32, int32), (int32, bool), (bool, uint8), (complex64, float64), (int64, float16) */
  TS_CHECK(!ts_type_can_cast(TS_DT_FLOAT32, TS_DT_INT32));
  TS_CHECK(!ts_type_can_cast(TS_DT_INT32, TS_DT_BOOL));
  TS_CHECK(ts_type_can_cast(TS_DT_BOOL, TS_DT_UINT8));
  TS_CHECK(!ts_type_can_cast(TS_DT_COMPLEX64, TS_DT_FLOAT64));
  TS_CHECK(ts_type_can_cast(TS_DT_INT64, TS_DT_FLOAT16));
  struct {
    ts_dtype a;
    ts_result_kind ka;
    ts_dtype b;
    ts_result_kind kb;
    ts_dtype want;
  } rt[] = {
      /* torch.result_type(torch.ones(2, dtype=torch.int32), 2.5) */
      {TS_DT_INT32, TS_RESULT_DIM, TS_DT_FLOAT64, TS_RESULT_WRAPPED, TS_DT_FLOAT32},
      /* torch.result_type(torch.ones(2, dtype=torch.uint8), torch.tensor(5)) */
      {TS_DT_UINT8, TS_RESULT_DIM, TS_DT_INT64, TS_RESULT_ZERO_DIM, TS_DT_UINT8},
      /* torch.result_type(torch.ones(2, dtype=torch.float16), torch.tensor(1., dtype=torch.float64)) */
      {TS_DT_FLOAT16, TS_RESULT_DIM, TS_DT_FLOAT64, TS_RESULT_ZERO_DIM, TS_DT_FLOAT16},
      /* torch.result_type(torch.ones(2, dtype=torch.int32), torch.tensor(1., dtype=torch.float64)) */
      {TS_DT_INT32, TS_RESULT_DIM, TS_DT_FLOAT64, TS_RESULT_ZERO_DIM, TS_DT_FLOAT64},
      /* torch.result_type(torch.tensor(True), 5) */
      {TS_DT_BOOL, TS_RESULT_ZERO_DIM, TS_DT_INT64, TS_RESULT_WRAPPED, TS_DT_INT64},
      /* torch.result_type(torch.ones(2, dtype=torch.float16), 1j) */
      {TS_DT_FLOAT16, TS_RESULT_DIM, TS_DT_COMPLEX128, TS_RESULT_WRAPPED, TS_DT_COMPLEX32},
      /* torch.result_type(torch.ones(2, dtype=torch.int8), 1j) */
      {TS_DT_INT8, TS_RESULT_DIM, TS_DT_COMPLEX128, TS_RESULT_WRAPPED, TS_DT_COMPLEX64},
  };
  for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++) {
    ts_result_state st = TS_RESULT_STATE_INIT;
    ts_result_add(&st, rt[i].a, rt[i].ka);
    ts_result_add(&st, rt[i].b, rt[i].kb);
    if (!TS_CHECK_INTEQ(ts_result_type(&st), rt[i].want))
      fprintf(stderr, "  result_type case %zu\n", i);
  }
  ts_result_state none = TS_RESULT_STATE_INIT;
  TS_CHECK_INTEQ(ts_result_type(&none), TS_DT_NONE);
}

int main(void) {
  TS_CHECK(ts_ops_init(NULL));
  test_arena();
  test_uses();
  test_destroy_nested();
  test_names();
  test_types();
  test_unify();
  test_buf();
  test_diag();
  test_promote();
  return ts_test_finish();
}
