/* tests/unit/test_clone.c: ts_block_clone_before and ts_graph_copy (ir/clone.c),
 * and ts_pass_inline (passes/inline.c), which is built on them and has no
 * resolver in tsaot-opt for lit tests to use. */
#include "ir.h"
#include "passes.h"
#include "test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

/* The graph as text (malloc'd), NULL if it does not verify. */
static char *print(const ts_graph *g) {
  ts_diag d = {0};
  bool ok = ts_graph_verify(g, &d);
  if (!TS_CHECK(ok))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  ts_buf b = {0};
  ts_graph_print(&b, g);
  if (!ok) {
    ts_buf_free(&b);
    return NULL;
  }
  return b.data;
}

static bool check_print(const ts_graph *g, const char *want) {
  char *got = print(g);
  bool ok = TS_CHECK_STREQ(got, want);
  free(got);
  return ok;
}

/* A source graph with nested blocks, composite and refined types, every
 * attribute kind the text format has, a numeric name and source locations. */
static const char *const src_text =
    "graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %n : int):\n"
    "  %y : int[] = prim::Constant[value=[1, 2]]()\n"
    "  %fs : float[] = prim::Constant[value=[0.5, 1.]]()\n"
    "  %ss : str[] = prim::Constant[value=[\"a\", \"b\"]]()\n"
    "  %s : str = prim::Constant[value=\"hi\\n\"]() # m.py:3:4\n"
    "  %f : float = prim::Constant[value=0.25]()\n"
    "  %t : Tensor = prim::Constant[value={2}]()\n"
    "  %d : Dict(str, Tensor[]) = prim::DictConstruct(%s, %y)\n"
    "  %5 : (int, Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)) = prim::TupleConstruct(%n, %x)\n"
    "  %true : bool = prim::Constant[value=1]()\n"
    "  %r : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::Loop(%n, %true, %x)\n"
    "    block0(%i : int, %acc.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
    "      %c : bool = aten::lt(%i, %n)\n"
    "      %acc.3 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::If(%c)\n"
    "        block0():\n"
    "          %z : Tensor = aten::neg(%acc.1) # m.py:7:10\n"
    "          -> (%z)\n"
    "        block1():\n"
    "          -> (%acc.1)\n"
    "      -> (%true, %acc.3)\n"
    "  return (%r, %5, %d, %f, %fs, %ss, %t)\n";

/* What the copy of src_text's block looks like in front of the destination's
 * last node, with the destination's %x and %n for its inputs. The
 * destination's own %y, %z and %r move to %y.1, %z.1, %r.1 (PyTorch's
 * setDebugName rule: the copy takes the name); the numeric %5 gets an id. */
static const char *const dst_text =
    "graph(%a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %m : int):\n"
    "  %y : Tensor = aten::relu(%a)\n"
    "  %z : Tensor = aten::relu(%y)\n"
    "  %r : Tensor = aten::sigmoid(%z)\n"
    "  return (%r)\n";

static const char *const dst_after =
    "graph(%a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
    "      %m : int):\n"
    "  %y.1 : Tensor = aten::relu(%a)\n"
    "  %z.1 : Tensor = aten::relu(%y.1)\n"
    "  %y : int[] = prim::Constant[value=[1, 2]]()\n"
    "  %fs : float[] = prim::Constant[value=[0.5, 1.]]()\n"
    "  %ss : str[] = prim::Constant[value=[\"a\", \"b\"]]()\n"
    "  %s : str = prim::Constant[value=\"hi\\n\"]() # m.py:3:4\n"
    "  %f : float = prim::Constant[value=0.25]()\n"
    "  %t : Tensor = prim::Constant[value={2}]()\n"
    "  %d : Dict(str, Tensor[]) = prim::DictConstruct(%s, %y)\n"
    "  %12 : (int, Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)) = prim::TupleConstruct(%m, %a)\n"
    "  %true : bool = prim::Constant[value=1]()\n"
    "  %r : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::Loop(%m, %true, %a)\n"
    "    block0(%i : int, %acc.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):\n"
    "      %c : bool = aten::lt(%i, %m)\n"
    "      %acc.3 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::If(%c)\n"
    "        block0():\n"
    "          %z : Tensor = aten::neg(%acc.1) # m.py:7:10\n"
    "          -> (%z)\n"
    "        block1():\n"
    "          -> (%acc.1)\n"
    "      -> (%true, %acc.3)\n"
    "  %r.1 : Tensor = aten::sigmoid(%z.1)\n"
    "  return (%r.1)\n";

/* Into another graph; the source is freed before the result is looked at,
 * so a type, string or attribute still pointing into it shows under ASan. */
static void test_clone_other_graph(void) {
  ts_graph *src = parse(src_text), *dst = parse(dst_text);
  if (!src || !dst)
    return;
  const ts_block *from = src->block;
  ts_value *inputs[2] = {ts_block_input(dst->block, 0), ts_block_input(dst->block, 1)};
  ts_value *outs[7] = {0};
  ts_node *pos = dst->block->ret->prev; /* the sigmoid */
  TS_CHECK(ts_block_clone_before(from, pos, inputs, outs));
  const ts_type *src_dict = ts_block_output(from, 2)->type;
  ts_graph_free(src);

  TS_CHECK(outs[0] && outs[0]->node->kind == TS_K_prim_Loop);
  TS_CHECK(outs[2] && outs[2]->type != src_dict && outs[2]->type->kind == TS_TY_DICT);
  TS_CHECK(outs[5] && outs[5]->node->graph == dst);
  /* the locations' file names live in dst now */
  const ts_node *neg = outs[0] ? ts_block_first(outs[0]->node->blocks[0])->next->blocks[0]->ret->prev : NULL;
  TS_CHECK(neg && neg->kind == TS_K_aten_neg && strcmp(neg->loc.file, "m.py") == 0 && neg->loc.line == 7);
  check_print(dst, dst_after);
  /* a small tensor constant's bytes were copied out of the freed source */
  const ts_attr *ta = outs[6] ? ts_node_attr(outs[6]->node, "value") : NULL;
  int64_t two = 0;
  if (TS_CHECK(ta && ta->kind == TS_ATTR_TENSOR && ta->u.t->data && ta->u.t->dtype == TS_DT_INT64))
    memcpy(&two, ta->u.t->data, sizeof two);
  TS_CHECK_INTEQ(two, 2);
  ts_graph_free(dst);
}

/* The Function constants of CallFunction carry a particular function's type
 * (the text format prints it as plain "Function"). */
static void set_function_type(ts_graph *g, const char *value_name, const char *qualname) {
  ts_value *v = ts_graph_find_value(g, value_name, strlen(value_name));
  if (TS_CHECK(v != NULL))
    ts_value_set_type(v, ts_type_function(ts_graph_arena(g), qualname, strlen(qualname)));
}

/* A particular function's type keeps its qualified name in a copy made in
 * another graph (ts_type_clone alone would give the plain Function leaf). */
static void test_clone_function_type(void) {
  ts_graph *src = parse("graph():\n  %f : Function = prim::Constant[name=\"f\"]()\n  return (%f)\n");
  if (!src)
    return;
  set_function_type(src, "f", "__torch__.m.f");
  ts_graph *copy = ts_graph_copy(src);
  ts_graph *dst = parse("graph():\n  %x : int = prim::Constant[value=1]()\n  return (%x)\n");
  ts_value *out = NULL;
  TS_CHECK(dst && ts_block_clone_before(src->block, dst->block->ret, NULL, &out));
  ts_graph_free(src);
  const ts_type *t = copy ? ts_block_output(copy->block, 0)->type : NULL;
  TS_CHECK(t && t->kind == TS_TY_FUNCTION && t->name && strcmp(t->name, "__torch__.m.f") == 0);
  t = out ? out->type : NULL;
  TS_CHECK(t && t->kind == TS_TY_FUNCTION && t->name && strcmp(t->name, "__torch__.m.f") == 0);
  ts_graph_free(copy);
  ts_graph_free(dst);
}

/* Within one graph: the loop body copied in front of the loop, standing for
 * its inputs the loop's trip count and initial value. The copies take the
 * names, the originals move to name.N. */
static void test_clone_same_graph(void) {
  ts_graph *g = parse("graph(%x : Tensor,\n"
                      "      %n : int):\n"
                      "  %t : bool = prim::Constant[value=1]()\n"
                      "  %r : Tensor = prim::Loop(%n, %t, %x)\n"
                      "    block0(%i : int, %acc : Tensor):\n"
                      "      %acc.2 : Tensor = aten::neg(%acc)\n"
                      "      -> (%t, %acc.2)\n"
                      "  return (%r)\n");
  if (!g)
    return;
  ts_node *loop = g->block->ret->prev;
  ts_block *body = loop->blocks[0];
  ts_value *ins[2] = {loop->inputs[0], loop->inputs[2]};
  ts_value *outs[2] = {0};
  TS_CHECK(ts_block_clone_before(body, loop, ins, outs));
  TS_CHECK(outs[0] == loop->inputs[1]); /* %t: from outside the block, itself */
  check_print(g, "graph(%x : Tensor,\n"
                 "      %n : int):\n"
                 "  %t : bool = prim::Constant[value=1]()\n"
                 "  %acc.2 : Tensor = aten::neg(%x)\n"
                 "  %r : Tensor = prim::Loop(%n, %t, %x)\n"
                 "    block0(%i : int, %acc : Tensor):\n"
                 "      %acc.3 : Tensor = aten::neg(%acc)\n"
                 "      -> (%t, %acc.3)\n"
                 "  return (%r)\n");
  /* Copying a block in front of one of its own nodes copies it once. The
   * copy takes %acc.3 and the original moves on to %acc.5: PyTorch's rule
   * counts on from one past the last suffix handed out for "acc" (4). */
  ts_node *neg = ts_block_first(body);
  ts_value *ins2[2] = {ts_block_input(body, 0), ts_block_input(body, 1)};
  TS_CHECK(ts_block_clone_before(body, neg, ins2, outs));
  TS_CHECK_INTEQ(outs[1]->node->kind, TS_K_aten_neg);
  char *text = print(g);
  const char *want = "      %acc.3 : Tensor = aten::neg(%acc)\n      %acc.5 : Tensor = aten::neg(%acc)\n";
  if (!TS_CHECK(text && strstr(text, want)))
    fprintf(stderr, "%s", text ? text : "");
  free(text);
  ts_graph_free(g);
}

/* A block that uses a value of its own graph from outside it cannot be
 * copied into another graph (there is nothing for that value to be). */
static void test_clone_free_value(void) {
  ts_graph *src = parse("graph(%x : Tensor,\n"
                        "      %c : bool):\n"
                        "  %r : Tensor = prim::If(%c)\n"
                        "    block0():\n"
                        "      %y : Tensor = aten::neg(%x)\n"
                        "      -> (%y)\n"
                        "    block1():\n"
                        "      -> (%x)\n"
                        "  return (%r)\n");
  ts_graph *dst = parse("graph(%a : Tensor):\n  return (%a)\n");
  if (!src || !dst)
    return;
  ts_value *out = NULL;
  TS_CHECK(!ts_block_clone_before(src->block->ret->prev->blocks[0], dst->block->ret, NULL, &out));
  ts_graph_free(src);
  ts_graph_free(dst);
}

/* ts_graph_copy prints the same as its source, also after the source is
 * gone, and is independent of it. */
static void check_copy(const char *what, ts_graph *g) {
  char *want = print(g);
  ts_graph *c = ts_graph_copy(g);
  if (!TS_CHECK(c != NULL) || !want) {
    free(want);
    return;
  }
  ts_graph_free(g);
  char *got = print(c);
  if (!TS_CHECK_STREQ(got, want))
    fprintf(stderr, "  copy of %s differs\n", what);
  /* new values get ids past the copied ones */
  ts_value *v = ts_block_add_input(c->block, ts_type_leaf(TS_TY_INT));
  TS_CHECK(v && v->id >= c->next_value_id - 1);
  for (uint32_t i = 0; i + 1 < ts_block_ninputs(c->block); i++)
    TS_CHECK(ts_block_input(c->block, i)->id != v->id);
  free(got);
  free(want);
  ts_graph_free(c);
}

static void test_copy(void) {
  ts_graph *g = parse(src_text);
  if (g)
    check_copy("src_text", g);
  /* subgraph attributes (nested ones too) are copied, not shared */
  g = parse("graph(%a : Tensor,\n"
            "      %c : bool):\n"
            "  %b : Tensor = prim::FusionGroup_0(%a)\n"
            "  %d : Tensor = prim::If(%c)\n"
            "    block0():\n"
            "      %e : Tensor = prim::FusionGroup_1[note=\"kept\"](%b)\n"
            "      -> (%e)\n"
            "    block1():\n"
            "      -> (%b)\n"
            "  return (%d)\n"
            "with prim::FusionGroup_0 = graph(%x : Tensor):\n"
            "  %y : Tensor = prim::FusionGroup_0(%x)\n"
            "  return (%y)\n"
            "with prim::FusionGroup_0 = graph(%p : Tensor):\n"
            "  %q : Tensor = aten::relu(%p)\n"
            "  return (%q)\n"
            "with prim::FusionGroup_1 = graph(%x : Tensor):\n"
            "  %y : Tensor = aten::sigmoid(%x)\n"
            "  return (%y)\n");
  if (g) {
    ts_graph *c = ts_graph_copy(g);
    const ts_attr *a = ts_node_attr(ts_block_first(g->block), "Subgraph");
    const ts_attr *b = c ? ts_node_attr(ts_block_first(c->block), "Subgraph") : NULL;
    TS_CHECK(a && b && a->u.g != b->u.g && b->u.g->parent == c);
    ts_graph_free(c);
    check_copy("fusion groups", g);
  }
  /* every fixture graph PyTorch printed */
  DIR *dir = opendir(TSAOT_SOURCE_DIR "/tests/fixtures/graphs");
  if (!TS_CHECK(dir != NULL))
    return;
  int n = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".txt") != 0)
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/graphs/%s", TSAOT_SOURCE_DIR, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!TS_CHECK(f != NULL))
      continue;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t got = text ? fread(text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!TS_CHECK(text && got == (size_t)size)) {
      free(text);
      continue;
    }
    text[size] = 0;
    /* graphs the parser does not read yet are another test's business */
    ts_graph *fg = ts_graph_parse(path, text, (size_t)size, NULL);
    free(text);
    if (fg) {
      check_copy(e->d_name, fg);
      n++;
    }
  }
  closedir(dir);
  TS_CHECK(n > 5);
}

/* ---- inlining ---- */

typedef struct callees {
  const char *name[4];
  ts_graph *g[4];
  int calls;
} callees;

/* CallFunction: the Function constant's qualified name; CallMethod: the
 * method name. */
static ts_graph *resolve(void *ctx, const ts_node *call, ts_diag *d) {
  callees *c = ctx;
  c->calls++;
  const char *name = NULL;
  if (call->kind == TS_K_prim_CallFunction) {
    const ts_type *t = call->inputs[0]->type;
    name = t->kind == TS_TY_FUNCTION ? t->name : NULL;
  } else {
    const ts_attr *a = ts_node_attr(call, "name");
    name = a && a->kind == TS_ATTR_STR ? a->u.s : NULL;
  }
  for (int i = 0; i < 4 && name; i++)
    if (c->name[i] && strcmp(c->name[i], name) == 0)
      return c->g[i];
  ts_diag_error(d, "no function '%s'", name ? name : "?");
  return NULL;
}


static void test_inline(void) {
  ts_graph *caller = parse("graph(%self : __torch__.M,\n"
                           "      %x : Tensor,\n"
                           "      %c : bool):\n"
                           "  %f : Function = prim::Constant[name=\"f\"]()\n"
                           "  %y : Tensor = prim::CallFunction(%f, %x, %x)\n"
                           "  %r : Tensor = prim::If(%c)\n"
                           "    block0():\n"
                           "      %z : Tensor = prim::CallMethod[name=\"g\"](%self, %y)\n"
                           "      -> (%z)\n"
                           "    block1():\n"
                           "      -> (%y)\n"
                           "  %w : Tensor = prim::CallFunction(%f, %r, %x)\n"
                           "  return (%w)\n");
  /* f(a, b) = a + b; the callee's %y collides with the caller's */
  ts_graph *f = parse("graph(%a : Tensor,\n"
                      "      %b : Tensor):\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %y : Tensor = aten::add(%a, %b, %one) # f.py:2:9\n"
                      "  return (%y)\n");
  /* M.g(self, v) = v: returns its input */
  ts_graph *g = parse("graph(%self : __torch__.M,\n"
                      "      %v : Tensor):\n"
                      "  return (%v)\n");
  if (!caller || !f || !g)
    return;
  set_function_type(caller, "f", "__torch__.f");
  callees c = {.name = {"__torch__.f", "g"}, .g = {f, g}};
  ts_diag d = {0};
  bool ok = ts_pass_inline(caller, resolve, &c, &d);
  if (!TS_CHECK(ok))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  TS_CHECK_INTEQ(c.calls, 3);
  /* Names: the copy of f's %y takes "y" and the call's output moves to
   * %y.1; inlineCallTo then gives the call output's name, y.1, to the copy.
   * M.g returns its input, the copy, which so takes the method call's name
   * %z. The second copy of %one takes "one", the first moves to %one.1.
   * The Function constant stays, unused. */
  check_print(caller, "graph(%self : __torch__.M,\n"
                      "      %x : Tensor,\n"
                      "      %c : bool):\n"
                      "  %f : Function = prim::Constant[name=\"f\"]()\n"
                      "  %one.1 : int = prim::Constant[value=1]()\n"
                      "  %z : Tensor = aten::add(%x, %x, %one.1) # f.py:2:9\n"
                      "  %r : Tensor = prim::If(%c)\n"
                      "    block0():\n"
                      "      -> (%z)\n"
                      "    block1():\n"
                      "      -> (%z)\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %w : Tensor = aten::add(%r, %x, %one) # f.py:2:9\n"
                      "  return (%w)\n");
  /* the callees are not changed */
  check_print(g, "graph(%self : __torch__.M,\n"
                 "      %v : Tensor):\n"
                 "  return (%v)\n");
  ts_graph_free(f);
  ts_graph_free(g);
  ts_graph_free(caller);
}

static void test_inline_errors(void) {
  ts_graph *caller = parse("graph(%x : Tensor):\n"
                           "  %f : Function = prim::Constant[name=\"f\"]()\n"
                           "  %y : Tensor = prim::CallFunction(%f, %x)\n"
                           "  return (%y)\n");
  ts_graph *two = parse("graph(%a : Tensor,\n"
                        "      %b : Tensor):\n"
                        "  return (%a)\n");
  if (!caller || !two)
    return;
  set_function_type(caller, "f", "__torch__.f");
  ts_diag d = {0};
  /* unknown callee: the resolver's reason */
  callees none = {0};
  TS_CHECK(!ts_pass_inline(caller, resolve, &none, &d));
  TS_CHECK(d.text.data && strstr(d.text.data, "no function '__torch__.f'"));
  ts_diag_free(&d);
  /* arity mismatch */
  callees c = {.name = {"__torch__.f"}, .g = {two}};
  TS_CHECK(!ts_pass_inline(caller, resolve, &c, &d));
  TS_CHECK(d.text.data && strstr(d.text.data, "do not match the call"));
  ts_diag_free(&d);
  ts_graph_free(two);
  ts_graph_free(caller);
}

/* The graph-size budget: a call whose callee would take the graph past
 * the limit is refused, naming the callee; at the limit it is inlined. */
static void test_inline_budget(void) {
  /* 2 nodes; the callee 2 more, its call gone: 3 once inlined */
  static const char caller_text[] = "graph(%x : Tensor):\n"
                                    "  %f : Function = prim::Constant[name=\"f\"]()\n"
                                    "  %y : Tensor = prim::CallFunction(%f, %x)\n"
                                    "  return (%y)\n";
  ts_graph *f = parse("graph(%a : Tensor):\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %y : Tensor = aten::add(%a, %a, %one)\n"
                      "  return (%y)\n");
  for (uint64_t limit = 2; limit <= 3 && f; limit++) {
    ts_graph *caller = parse(caller_text);
    if (!caller)
      break;
    set_function_type(caller, "f", "__torch__.f");
    callees c = {.name = {"__torch__.f"}, .g = {f}};
    ts_diag d = {0};
    bool ok = ts_pass_inline_limited(caller, resolve, &c, limit, &d);
    if (limit == 3) {
      TS_CHECK(ok && ts_graph_count_nodes(caller) == 3 && ts_graph_count_kind(caller, TS_K_prim_CallFunction) == 0);
    } else if (TS_CHECK(!ok) && !TS_CHECK(d.errors == 1 && d.text.data &&
                                          strcmp(d.text.data, "error: inline: inlining __torch__.f would make the graph "
                                                              "3 nodes, over the limit of 2 (graph size)\n") == 0)) {
      fprintf(stderr, "  got: %s", d.text.data ? d.text.data : "(nothing)\n");
    }
    ts_diag_free(&d);
    ts_graph_free(caller);
  }
  ts_graph_free(f);
}

int main(void) {
  TS_CHECK(ts_ops_init(NULL));
  test_clone_other_graph();
  test_clone_function_type();
  test_clone_same_graph();
  test_clone_free_value();
  test_copy();
  test_inline();
  test_inline_errors();
  test_inline_budget();
  return ts_test_finish();
}
