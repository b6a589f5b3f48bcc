/* tests/unit/test_pass_constants.c: IR constants <-> runtime values
 * (ts_pass_const_to_iv, ts_pass_const_insert_iv, ts_rt_iv_from_constant):
 * what the text format cannot reach (tensor bytes, borrowed storages). */
#include "passes.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* The printed node defining v, without the trailing newline. */
static char *node_text(const ts_value *v) {
  ts_buf b = {0};
  ts_node_print(&b, v->node, 0);
  while (b.len && (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == ' '))
    b.data[--b.len] = 0;
  char *s = b.data;
  while (s && *s == ' ')
    s++;
  char *r = s ? strdup(s) : NULL;
  ts_buf_free(&b);
  return r;
}

/* The node's text from its type on ("" dropped: value ids count
 * every value made). */
static bool check_text(const ts_value *v, const char *want) {
  char *got = v ? node_text(v) : NULL;
  if (got && strstr(got, " : "))
    memmove(got, strstr(got, " : ") + 3, strlen(strstr(got, " : ") + 3) + 1);
  bool ok = TS_CHECK_STREQ(got, want);
  free(got);
  return ok;
}

static bool verify(const ts_graph *g) {
  ts_diag d = {0};
  bool ok = ts_graph_verify(g, &d);
  if (!ok && d.text.data)
    fprintf(stderr, "%s", d.text.data);
  ts_diag_free(&d);
  return ok;
}

/* A 2x3 float tensor holding 0..5, and its transpose (a view). */
static ts_rt_tensor *make_2x3(ts_rt_ctx *ctx) {
  int64_t sizes[2] = {2, 3};
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, TS_DT_FLOAT32, 2, sizes, false);
  float *p = ts_rt_tensor_data(t);
  for (int i = 0; i < 6; i++)
    p[i] = (float)i;
  return t;
}

static void test_tensor_copy_and_borrow(void) {
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_graph *g = ts_graph_new(0);
  ts_node *ret = g->block->ret;
  ts_rt_tensor *t = make_2x3(&ctx);
  int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
  ts_rt_tensor *tt = ts_rt_tensor_view(&ctx, t, 0, 2, tsz, tst);

  /* copied: contiguous in the arena, refined type with contiguous strides */
  ts_iv iv = ts_iv_tensor(tt);
  ts_value *c = ts_pass_const_insert_iv(ret, &iv, NULL, false);
  if (!TS_CHECK(c))
    return;
  char *txt = node_text(c);
  TS_CHECK(txt && strstr(txt, ": Float(3, 2, strides=[2, 1], requires_grad=0, device=cpu) = "
                              "prim::Constant[value=<Tensor>]()"));
  free(txt);
  const ts_attr *a = ts_node_attr(c->node, "value");
  TS_CHECK(a && a->kind == TS_ATTR_TENSOR);
  const float *d = a->u.t->data;
  TS_CHECK(d != ts_rt_tensor_data(tt));
  static const float want[6] = {0, 3, 1, 4, 2, 5};
  TS_CHECK(memcmp(d, want, sizeof want) == 0);

  /* and back: a new runtime tensor with the same values */
  ts_iv back;
  TS_CHECK(ts_pass_const_to_iv(&ctx, c, &back));
  TS_CHECK(back.tag == TS_IV_TENSOR && back.u.t->ndim == 2 && back.u.t->sizes[0] == 3);
  TS_CHECK(memcmp(ts_rt_tensor_data(back.u.t), want, sizeof want) == 0);
  TS_CHECK(ts_rt_tensor_data(back.u.t) != (const void *)d); /* a copy, not the graph's bytes */
  ts_iv_release(back);

  /* borrowed: the storage's bytes, the view's strides */
  int64_t off_sz[1] = {2}, off_st[1] = {3};
  ts_rt_tensor *col = ts_rt_tensor_view(&ctx, t, 1, 1, off_sz, off_st); /* t[:, 1] = [1, 4] */
  iv = ts_iv_tensor(col);
  ts_value *b = ts_pass_const_insert_iv(ret, &iv, NULL, true);
  if (TS_CHECK(b)) {
    check_text(b, "Float(2, strides=[3], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()");
    a = ts_node_attr(b->node, "value");
    TS_CHECK(a->u.t->data == (const void *)((float *)ts_rt_tensor_data(t) + 1));
    TS_CHECK(ts_pass_const_to_iv(&ctx, b, &back));
    TS_CHECK(back.tag == TS_IV_TENSOR && ts_rt_load_f64(ts_rt_tensor_data(back.u.t), TS_DT_FLOAT32) == 1.0);
    TS_CHECK(ts_rt_load_f64((float *)ts_rt_tensor_data(back.u.t) + back.u.t->strides[0], TS_DT_FLOAT32) == 4.0);
    ts_iv_release(back);
  }

  /* a 0-d int64 tensor prints its value */
  ts_rt_tensor *s = ts_rt_tensor_scalar(&ctx, TS_DT_INT64, 0, 7);
  iv = ts_iv_tensor(s);
  ts_value *sv = ts_pass_const_insert_iv(ret, &iv, NULL, false);
  if (TS_CHECK(sv))
    check_text(sv, "Long(requires_grad=0, device=cpu) = prim::Constant[value={7}]()");

  TS_CHECK(verify(g));
  ts_rt_tensor_release(s);
  ts_rt_tensor_release(col);
  ts_rt_tensor_release(tt);
  ts_rt_tensor_release(t);
  ts_graph_free(g);
  TS_CHECK(!ctx.failed);
  ts_rt_ctx_free(&ctx);
}

static ts_iv list_of(ts_rt_ctx *ctx, const ts_type *elem, const ts_iv *items, uint32_t n) {
  ts_rt_list *l = ts_rt_list_new(ctx, elem, n);
  for (uint32_t i = 0; i < n; i++) {
    ts_iv_retain(items[i]);
    ts_rt_list_append(ctx, l, items[i]);
  }
  ts_iv v = {.u.l = l, .tag = TS_IV_LIST};
  return v;
}

/* Every scalar and list kind, inserted and read back. */
static void test_scalars_and_lists(void) {
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_graph *g = ts_graph_new(0);
  ts_node *ret = g->block->ret;
  struct {
    ts_iv iv;
    const char *text;
  } cases[] = {
      {ts_iv_none(), "NoneType = prim::Constant()"},
      {ts_iv_bool(true), "bool = prim::Constant[value=1]()"},
      {ts_iv_int(-3), "int = prim::Constant[value=-3]()"},
      {ts_iv_double(0.5), "float = prim::Constant[value=0.5]()"},
      {ts_iv_device((ts_device){.type = TS_DEV_CPU, .index = -1}), "Device = prim::Constant[value=\"cpu\"]()"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ts_value *v = ts_pass_const_insert_iv(ret, &cases[i].iv, NULL, false);
    if (!TS_CHECK(v))
      continue;
    check_text(v, cases[i].text);
    ts_iv back;
    TS_CHECK(ts_pass_const_to_iv(&ctx, v, &back));
    TS_CHECK(back.tag == cases[i].iv.tag && ts_iv_equal(back, cases[i].iv));
  }
  ts_rt_str *str = ts_rt_str_new(&ctx, "a\"b", 3);
  ts_iv sv = {.u.s = str, .tag = TS_IV_STR};
  ts_value *v = ts_pass_const_insert_iv(ret, &sv, NULL, false);
  if (TS_CHECK(v))
    check_text(v, "str = prim::Constant[value=\"a\\\"b\"]()");

  ts_iv ints[3] = {ts_iv_int(1), ts_iv_int(2), ts_iv_int(3)};
  ts_iv bools[2] = {ts_iv_bool(true), ts_iv_bool(false)};
  ts_iv floats[2] = {ts_iv_double(1.5), ts_iv_double(-0.0)};
  ts_iv strs[2] = {sv, sv};
  ts_iv mixed[2] = {ts_iv_int(1), ts_iv_none()};
  struct {
    ts_iv list;
    const char *text;
  } lists[] = {
      {list_of(&ctx, NULL, ints, 3), "int[] = prim::Constant[value=[1, 2, 3]]()"},
      {list_of(&ctx, NULL, bools, 2), "bool[] = prim::Constant[value=[1, 0]]()"},
      {list_of(&ctx, NULL, floats, 2), "float[] = prim::Constant[value=[1.5, -0.]]()"},
      {list_of(&ctx, NULL, strs, 2), "str[] = prim::Constant[value=[\"a\\\"b\", \"a\\\"b\"]]()"},
      {list_of(&ctx, ts_type_leaf(TS_TY_INT), NULL, 0), "int[] = prim::Constant[value=[]]()"},
  };
  for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
    ts_value *lv = ts_pass_const_insert_iv(ret, &lists[i].list, NULL, false);
    if (TS_CHECK(lv)) {
      check_text(lv, lists[i].text);
      ts_iv back;
      TS_CHECK(ts_pass_const_to_iv(&ctx, lv, &back));
      TS_CHECK(back.tag == TS_IV_LIST && ts_iv_equal(back, lists[i].list));
      TS_CHECK(back.tag == TS_IV_LIST && back.u.l->n == lists[i].list.u.l->n &&
               (!back.u.l->n || back.u.l->items[0].tag == lists[i].list.u.l->items[0].tag));
      ts_iv_release(back);
    }
    ts_iv_release(lists[i].list);
  }

  /* not constants here: tuples, mixed lists, empty lists of unknown type */
  ts_rt_tuple *tup = ts_rt_tuple_new(&ctx, 1);
  ts_iv tv = {.u.tup = tup, .tag = TS_IV_TUPLE};
  TS_CHECK(ts_pass_const_insert_iv(ret, &tv, NULL, false) == NULL);
  ts_iv_release(tv);
  ts_iv ml = list_of(&ctx, NULL, mixed, 2);
  TS_CHECK(ts_pass_const_insert_iv(ret, &ml, NULL, false) == NULL);
  ts_iv_release(ml);
  ts_iv el = list_of(&ctx, NULL, NULL, 0);
  TS_CHECK(ts_pass_const_insert_iv(ret, &el, NULL, false) == NULL);
  ts_iv_release(el);

  /* a tensor list: each tensor copied */
  ts_rt_tensor *t = make_2x3(&ctx);
  ts_iv tl[2] = {ts_iv_tensor(t), ts_iv_tensor(t)};
  ts_iv tlist = list_of(&ctx, NULL, tl, 2);
  ts_value *tlv = ts_pass_const_insert_iv(ret, &tlist, NULL, false);
  if (TS_CHECK(tlv)) {
    check_text(tlv, "Tensor[] = prim::Constant[value=[<Tensors>]]()");
    ts_iv back;
    TS_CHECK(ts_pass_const_to_iv(&ctx, tlv, &back));
    TS_CHECK(back.tag == TS_IV_LIST && back.u.l->n == 2 && back.u.l->items[1].tag == TS_IV_TENSOR &&
             ((float *)ts_rt_tensor_data(back.u.l->items[1].u.t))[5] == 5.0f);
    ts_iv_release(back);
  }
  ts_iv_release(tlist);
  ts_rt_tensor_release(t);
  ts_iv_release(sv);
  TS_CHECK(verify(g));
  TS_CHECK(!ctx.failed);
  ts_graph_free(g);
  ts_rt_ctx_free(&ctx);
}

/* A graph read from text has tensor constants without bytes: not values
 * (no error recorded), while the interpreter's reader reports why. */
static void test_text_tensor(void) {
  static const char src[] = "graph():\n"
                            "  %w : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = "
                            "prim::Constant[value=<Tensor>]()\n"
                            "  %x : Tensor = aten::relu(%w)\n"
                            "  return (%x)\n";
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("t.ir", src, sizeof src - 1, &d);
  if (!TS_CHECK(g)) {
    ts_diag_free(&d);
    return;
  }
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_value *w = ts_block_first(g->block)->outputs[0];
  ts_iv iv;
  TS_CHECK(!ts_pass_const_to_iv(&ctx, w, &iv));
  TS_CHECK(!ctx.failed);
  /* a non-constant is no value either */
  TS_CHECK(!ts_pass_const_to_iv(&ctx, ts_block_output(g->block, 0), &iv));
  TS_CHECK(!ctx.failed);
  TS_CHECK(!ts_rt_iv_from_constant(&ctx, w->node, &iv));
  TS_CHECK_STREQ(ctx.err.data, "tensor constant without its data (a graph read from text)");
  ts_rt_ctx_free(&ctx);
  ts_graph_free(g);
  ts_diag_free(&d);
}

/* Parses src and points every tensor constant at `data` (as freezing
 * points constants at a module's storage); the ones named "%o..." at data
 * + 1 float. */
static ts_graph *parse_with_data(const char *src, const float *data) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("pool.ir", src, strlen(src), &d);
  if (!TS_CHECK(g)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return NULL;
  }
  ts_diag_free(&d);
  for (ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next) {
    const ts_attr *a = ts_node_attr(n, "value");
    if (!ts_node_is(n, TS_K_prim_Constant) || !a || a->kind != TS_ATTR_TENSOR)
      continue;
    ts_tconst tc = *a->u.t;
    tc.repr = NULL;
    tc.data = n->outputs[0]->name && n->outputs[0]->name[0] == 'o' ? data + 1 : data;
    ts_node_set_t(n, "value", &tc);
  }
  return g;
}

/* How many prim::Constants the graph has after constant pooling. */
static int pooled_constants(const char *src, const float *data) {
  ts_graph *g = parse_with_data(src, data);
  if (!g)
    return -1;
  ts_diag d = {0};
  int n = -1;
  if (TS_CHECK(ts_pass_constant_pooling(g, &d)) && TS_CHECK(verify(g)))
    n = (int)ts_graph_count_kind(g, TS_K_prim_Constant);
  ts_diag_free(&d);
  ts_graph_free(g);
  return n;
}

#define POOL_K " = prim::Constant[value=<Tensor>]()\n"
#define POOL_F2 "Float(2, strides=[1], requires_grad=0, device=cpu)" POOL_K

/* Tensor constants are pooled when they are the same constant (the same
 * bytes by address, dtype, sizes and strides), nothing writes either and
 * not both escape; their bytes are never compared. */

static void test_pool_tensors(void) {
  static const float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  /* two reads of one parameter: one constant */
  TS_CHECK_INTEQ(pooled_constants("graph(%x : Tensor):\n"
                                  "  %a : " POOL_F2
                                  "  %b : " POOL_F2
                                  "  %y : Tensor = aten::mul(%x, %a)\n"
                                  "  %z : Tensor = aten::mul(%y, %b)\n"
                                  "  return (%z)\n",
                                  data),
                 1);
  /* other bytes (o: one float further on), other strides, other sizes */
  TS_CHECK_INTEQ(pooled_constants("graph(%x : Tensor):\n"
                                  "  %a : " POOL_F2
                                  "  %o : " POOL_F2
                                  "  %s : Float(2, strides=[2], requires_grad=0, device=cpu)" POOL_K
                                  "  %n : Float(3, strides=[1], requires_grad=0, device=cpu)" POOL_K
                                  "  %y : Tensor = aten::mul(%x, %a)\n"
                                  "  %z : Tensor = aten::mul(%y, %o)\n"
                                  "  %w : Tensor = aten::mul(%z, %s)\n"
                                  "  %v : Tensor = aten::mul(%w, %n)\n"
                                  "  return (%v)\n",
                                  data),
                 4);
  /* one of them written in place: kept apart */
  TS_CHECK_INTEQ(pooled_constants("graph(%x : Tensor):\n"
                                  "  %one : int = prim::Constant[value=1]()\n"
                                  "  %a : " POOL_F2
                                  "  %b : " POOL_F2
                                  "  %y : Tensor = aten::mul(%x, %a)\n"
                                  "  %b2 : Tensor = aten::add_(%b, %one, %one)\n"
                                  "  %z : Tensor = aten::mul(%y, %b)\n"
                                  "  return (%z)\n",
                                  data),
                 3);
  /* both returned (both escape): kept apart; one returned: pooled */
  TS_CHECK_INTEQ(pooled_constants("graph(%x : Tensor):\n"
                                  "  %a : " POOL_F2
                                  "  %b : " POOL_F2
                                  "  return (%a, %b)\n",
                                  data),
                 2);
  TS_CHECK_INTEQ(pooled_constants("graph(%x : Tensor):\n"
                                  "  %a : " POOL_F2
                                  "  %b : " POOL_F2
                                  "  %y : Tensor = aten::mul(%x, %b)\n"
                                  "  return (%a, %y)\n",
                                  data),
                 1);
}

int main(void) {
  if (!ts_rt_kernels_init(NULL))
    return 1;
  test_tensor_copy_and_borrow();
  test_scalars_and_lists();
  test_text_tensor();
  test_pool_tensors();
  return ts_test_finish();
}
