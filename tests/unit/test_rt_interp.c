/* tests/unit/test_rt_interp.c: the reference interpreter (runtime/hosted/interp.c)
 * on small graphs read with ts_graph_parse: constants, containers, If and
 * Loop (carried values, early exit, swaps), objects and calls through the
 * resolver, errors with their source location, and that values are
 * released at their last use (observed from inside a run through the
 * resolver, which the interpreter calls when a prim::CallFunction first
 * runs). Kernel-dependent cases run only once the kernels exist. */
#include "runtime.h"
#include "loader.h"
#include "npy.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  else if (!TS_CHECK(ts_graph_verify(g, &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

/* ------------------------------------------------------------ resolver */

/* What the test resolver serves and what the probe saw. */
static ts_graph *probe_graph;      /* "probe": returns 7 */
static ts_rt_tensor *watched;      /* the tensor whose refcount the probe records */
static int64_t probe_seen[8];
static int nprobes;
static ts_graph *method_graphs[4]; /* methods of __torch__.M by name below */
static const char *method_names[4];
static const char *source_text;

static ts_graph *test_method(void *ctx, const ts_rt_class *cls, const char *method, ts_diag *d) {
  (void)ctx;
  for (int i = 0; i < 4; i++)
    if (method_names[i] && strcmp(method_names[i], method) == 0)
      return method_graphs[i];
  ts_diag_error(d, "'%s' object has no method '%s'", cls->qualname, method);
  return NULL;
}

static ts_graph *test_function(void *ctx, const char *qualname, ts_diag *d) {
  (void)ctx;
  if (strcmp(qualname, "probe") != 0) {
    ts_diag_error(d, "unknown function '%s'", qualname);
    return NULL;
  }
  if (nprobes < 8)
    probe_seen[nprobes++] = watched ? watched->h.refcount : -1;
  return probe_graph;
}

static const char *test_source(void *ctx, const char *file, size_t *len) {
  (void)ctx;
  if (!source_text || strcmp(file, "m.py") != 0)
    return NULL;
  *len = strlen(source_text);
  return source_text;
}

static const char *const m_attrs[] = {"a", "b"};
static const ts_rt_class m_class = {.qualname = "__torch__.M", .nattrs = 2, .attr_names = m_attrs};

static const ts_rt_class *test_class(void *ctx, const ts_type *type, ts_diag *d) {
  (void)ctx;
  if (strcmp(type->name, "__torch__.M") == 0)
    return &m_class;
  ts_diag_error(d, "unknown class %s", type->name);
  return NULL;
}

static ts_rt_interp *new_interp(void) {
  ts_rt_resolver r = {.ctx = NULL, .method = test_method, .function = test_function, .source = test_source, .cls = test_class};
  ts_rt_interp *ip = ts_rt_interp_new(&r);
  TS_CHECK(ip != NULL);
  nprobes = 0;
  return ip;
}

/* Runs g once in a fresh interpreter; false if it failed (message printed
 * unless `quiet`). */
static bool run(ts_graph *g, const ts_iv *args, uint32_t nargs, ts_iv *ret, ts_buf *where, bool quiet) {
  ts_rt_interp *ip = new_interp();
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_buf w = {0};
  bool ok = ts_rt_interp_run(ip, &ctx, g, args, nargs, ret, where ? where : &w);
  if (!ok && !quiet)
    fprintf(stderr, "run failed: %s\n%s", ctx.err.data ? ctx.err.data : "?", w.data ? w.data : "");
  if (!ok && where)
    ts_buf_printf(where, "|%s", ctx.err.data ? ctx.err.data : "");
  ts_buf_free(&w);
  ts_rt_ctx_free(&ctx);
  ts_rt_interp_free(ip);
  return ok;
}

/* A float tensor of 4 elements over bytes whose release is counted. */
static int frees;
static void count_free(void *ctx, void *data) {
  (void)ctx;
  frees++;
  free(data);
}

static ts_rt_tensor *counted_tensor(ts_rt_ctx *ctx) {
  float *data = calloc(4, sizeof *data);
  ts_rt_storage *s = ts_rt_storage_wrap(ctx, data, 4 * sizeof *data, count_free, NULL);
  int64_t sizes[1] = {4}, strides[1] = {1};
  ts_rt_tensor *t = ts_rt_tensor_new_view(ctx, s, TS_DT_FLOAT32, 0, 1, sizes, strides);
  ts_rt_storage_release(s);
  return t;
}

/* ------------------------------------------------------------------ tests */

static void test_constants_and_containers(void) {
  ts_graph *g = parse("graph(%x : int):\n"
                      "  %a : int = prim::Constant[value=-3]()\n"
                      "  %b : float = prim::Constant[value=2.5]()\n"
                      "  %c : bool = prim::Constant[value=1]()\n"
                      "  %d : str = prim::Constant[value=\"hi\"]()\n"
                      "  %e : NoneType = prim::Constant()\n"
                      "  %f : Device = prim::Constant[value=\"cpu\"]()\n"
                      "  %g : int[] = prim::Constant[value=[1, 2, 3]]()\n"
                      "  %h : float[] = prim::Constant[value=[0.5]]()\n"
                      "  %l : int[] = prim::ListConstruct(%x, %a)\n"
                      "  %l0 : int, %l1 : int = prim::ListUnpack(%l)\n"
                      "  %t : (int, float) = prim::TupleConstruct(%l1, %b)\n"
                      "  %t0 : int, %t1 : float = prim::TupleUnpack(%t)\n"
                      "  %k : Dict(str, int) = prim::DictConstruct(%d, %l0)\n"
                      "  %u : Any = prim::Uninitialized()\n"
                      "  %r : (int, float, bool, str, NoneType, Device, int[], float[], Dict(str, int), int) = "
                      "prim::TupleConstruct(%t0, %t1, %c, %d, %e, %f, %g, %h, %k, %l0)\n"
                      "  return (%r)\n");
  if (!g)
    return;
  ts_iv arg = ts_iv_int(42), ret = ts_iv_none();
  if (TS_CHECK(run(g, &arg, 1, &ret, NULL, false)) && TS_CHECK(ret.tag == TS_IV_TUPLE)) {
    const ts_rt_tuple *t = ret.u.tup;
    TS_CHECK_INTEQ(t->n, 10);
    TS_CHECK(t->items[0].tag == TS_IV_INT && t->items[0].u.i == -3);
    TS_CHECK(t->items[1].tag == TS_IV_DOUBLE && t->items[1].u.d == 2.5);
    TS_CHECK(t->items[2].tag == TS_IV_BOOL && t->items[2].u.b);
    TS_CHECK(t->items[3].tag == TS_IV_STR && strcmp(t->items[3].u.s->data, "hi") == 0);
    TS_CHECK(t->items[4].tag == TS_IV_NONE);
    TS_CHECK(t->items[5].tag == TS_IV_DEVICE && t->items[5].u.dev.type == TS_DEV_CPU);
    TS_CHECK(t->items[6].tag == TS_IV_LIST && t->items[6].u.l->n == 3 && t->items[6].u.l->items[2].u.i == 3);
    TS_CHECK(t->items[6].u.l->elem && t->items[6].u.l->elem->kind == TS_TY_INT);
    TS_CHECK(t->items[7].tag == TS_IV_LIST && t->items[7].u.l->items[0].tag == TS_IV_DOUBLE);
    TS_CHECK(t->items[8].tag == TS_IV_DICT && t->items[8].u.dict->n == 1);
    TS_CHECK(t->items[9].tag == TS_IV_INT && t->items[9].u.i == 42);
    ts_buf b = {0};
    ts_iv_repr(&b, ret);
    TS_CHECK_STREQ(b.data, "(-3, 2.5, True, 'hi', None, cpu, [1, 2, 3], [0.5], {'hi': 42}, 42)");
    ts_buf_free(&b);
  }
  ts_iv_release(ret);
  ts_graph_free(g);
}

static void test_if(void) {
  ts_graph *g = parse("graph(%c : bool, %a : int, %b : str):\n"
                      "  %r : int, %s : str = prim::If(%c)\n"
                      "    block0():\n"
                      "      -> (%a, %b)\n"
                      "    block1():\n"
                      "      %z : int = prim::Constant[value=0]()\n"
                      "      %w : str = prim::Constant[value=\"else\"]()\n"
                      "      -> (%z, %w)\n"
                      "  %t : (int, str) = prim::TupleConstruct(%r, %s)\n"
                      "  return (%t)\n");
  if (!g)
    return;
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_rt_str *s = ts_rt_str_new(&ctx, "then", 4);
  for (int c = 0; c < 2; c++) {
    ts_iv args[3] = {ts_iv_bool(c), ts_iv_int(5), {.u.s = s, .tag = TS_IV_STR}}, ret = ts_iv_none();
    if (TS_CHECK(run(g, args, 3, &ret, NULL, false))) {
      ts_buf b = {0};
      ts_iv_repr(&b, ret);
      TS_CHECK_STREQ(b.data, c ? "(5, 'then')" : "(0, 'else')");
      ts_buf_free(&b);
    }
    ts_iv_release(ret);
    TS_CHECK_INTEQ(s->h.refcount, 1);
  }
  ts_iv_release((ts_iv){.u.s = s, .tag = TS_IV_STR});
  ts_rt_ctx_free(&ctx);
  ts_graph_free(g);
}

/* Loop: the iteration number, carried values swapped every iteration (a
 * parallel assignment), and a condition computed in the body. */
static void test_loop(void) {
  ts_graph *g = parse("graph(%n : int, %a : int, %b : int):\n"
                      "  %true : bool = prim::Constant[value=1]()\n"
                      "  %e : int[] = prim::ListConstruct()\n"
                      "  %x : int, %y : int, %last : int[] = prim::Loop(%n, %true, %a, %b, %e)\n"
                      "    block0(%i : int, %p : int, %q : int, %l : int[]):\n"
                      "      %li : int[] = prim::ListConstruct(%i)\n"
                      "      -> (%true, %q, %p, %li)\n"
                      "  %r : (int, int, int[]) = prim::TupleConstruct(%x, %y, %last)\n"
                      "  return (%r)\n");
  if (!g)
    return;
  const char *want[] = {"(1, 2, [])", "(2, 1, [0])", "(1, 2, [1])", "(2, 1, [2])"};
  for (int n = 0; n < 4; n++) {
    ts_iv args[3] = {ts_iv_int(n), ts_iv_int(1), ts_iv_int(2)}, ret = ts_iv_none();
    if (TS_CHECK(run(g, args, 3, &ret, NULL, false))) {
      ts_buf b = {0};
      ts_iv_repr(&b, ret);
      TS_CHECK_STREQ(b.data, want[n]);
      ts_buf_free(&b);
    }
    ts_iv_release(ret);
  }
  ts_graph_free(g);

  /* while f: f = not f -- one iteration; the condition flips through an If */
  g = parse("graph(%m : int):\n"
            "  %true : bool = prim::Constant[value=1]()\n"
            "  %false : bool = prim::Constant[value=0]()\n"
            "  %e : int[] = prim::ListConstruct()\n"
            "  %f : bool, %seen : int[] = prim::Loop(%m, %true, %true, %e)\n"
            "    block0(%i : int, %g : bool, %acc : int[]):\n"
            "      %ng : bool = prim::If(%g)\n"
            "        block0():\n"
            "          -> (%false)\n"
            "        block1():\n"
            "          -> (%true)\n"
            "      %li : int[] = prim::ListConstruct(%i)\n"
            "      -> (%ng, %ng, %li)\n"
            "  return (%seen)\n");
  if (!g)
    return;
  ts_iv arg = ts_iv_int(9223372036854775807), ret = ts_iv_none();
  if (TS_CHECK(run(g, &arg, 1, &ret, NULL, false))) {
    ts_buf b = {0};
    ts_iv_repr(&b, ret);
    TS_CHECK_STREQ(b.data, "[0]");
    ts_buf_free(&b);
  }
  ts_iv_release(ret);
  ts_graph_free(g);
}

/* A value is released right after its last use: straight line, in one
 * branch of an If, inside a loop; and not before. */
static void test_release(void) {
  probe_graph = parse("graph():\n"
                      "  %0 : int = prim::Constant[value=7]()\n"
                      "  return (%0)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  frees = 0;
  watched = counted_tensor(&ctx);
  if (!probe_graph || !watched)
    return;
  ts_iv t = ts_iv_tensor(watched), ret = ts_iv_none();

  /* the list holding t is never read: released where it is made */
  ts_graph *g = parse("graph(%t : Tensor):\n"
                      "  %u : Tensor[] = prim::ListConstruct(%t)\n"
                      "  %f : Function = prim::Constant[name=\"probe\"]()\n"
                      "  %r : int = prim::CallFunction(%f)\n"
                      "  return (%r)\n");
  if (g && TS_CHECK(run(g, &t, 1, &ret, NULL, false))) {
    TS_CHECK(ret.tag == TS_IV_INT && ret.u.i == 7);
    TS_CHECK_INTEQ(nprobes, 1);
    TS_CHECK_INTEQ(probe_seen[0], 1);
  }
  ts_graph_free(g);

  /* t is returned after the call: still held there */
  g = parse("graph(%t : Tensor):\n"
            "  %f : Function = prim::Constant[name=\"probe\"]()\n"
            "  %r : int = prim::CallFunction(%f)\n"
            "  return (%t)\n");
  if (g && TS_CHECK(run(g, &t, 1, &ret, NULL, false))) {
    TS_CHECK(ret.tag == TS_IV_TENSOR && ret.u.t == watched);
    TS_CHECK_INTEQ(probe_seen[0], 2);
    ts_iv_release(ret);
  }
  ts_graph_free(g);

  /* used in one branch only: the other branch drops it on entry */
  g = parse("graph(%c : bool, %t : Tensor):\n"
            "  %f : Function = prim::Constant[name=\"probe\"]()\n"
            "  %r : int = prim::If(%c)\n"
            "    block0():\n"
            "      %u : Tensor[] = prim::ListConstruct(%t)\n"
            "      %r1 : int = prim::CallFunction(%f)\n"
            "      -> (%r1)\n"
            "    block1():\n"
            "      %r2 : int = prim::CallFunction(%f)\n"
            "      -> (%r2)\n"
            "  return (%r)\n");
  for (int c = 0; g && c < 2; c++) {
    ts_iv args[2] = {ts_iv_bool(c), t};
    if (TS_CHECK(run(g, args, 2, &ret, NULL, false))) {
      TS_CHECK_INTEQ(nprobes, 1);
      TS_CHECK_INTEQ(probe_seen[0], 1);
    }
  }
  ts_graph_free(g);

  /* used inside a loop: kept for every iteration, dropped after it */
  g = parse("graph(%n : int, %t : Tensor):\n"
            "  %true : bool = prim::Constant[value=1]()\n"
            "  %f : Function = prim::Constant[name=\"probe\"]()\n"
            "  %e : Tensor[] = prim::ListConstruct()\n"
            "  %acc : Tensor[] = prim::Loop(%n, %true, %e)\n"
            "    block0(%i : int, %a : Tensor[]):\n"
            "      %u : Tensor[] = prim::ListConstruct(%t)\n"
            "      -> (%true, %u)\n"
            "  %r : int = prim::CallFunction(%f)\n"
            "  %o : (int, Tensor[]) = prim::TupleConstruct(%r, %acc)\n"
            "  return (%o)\n");
  for (int n = 0; g && n < 4; n += 3) {
    ts_iv args[2] = {ts_iv_int(n), t};
    if (TS_CHECK(run(g, args, 2, &ret, NULL, false))) {
      TS_CHECK_INTEQ(probe_seen[0], n ? 2 : 1); /* the returned list holds it */
      const ts_rt_list *l = ret.u.tup->items[1].u.l;
      TS_CHECK_INTEQ(l->n, n ? 1 : 0);
      if (n)
        TS_CHECK(l->items[0].tag == TS_IV_TENSOR && l->items[0].u.t == watched);
      ts_iv_release(ret);
    }
  }
  ts_graph_free(g);

  TS_CHECK_INTEQ(watched->h.refcount, 1);
  TS_CHECK_INTEQ(frees, 0);
  ts_rt_tensor_release(watched);
  TS_CHECK_INTEQ(frees, 1);
  watched = NULL;
  ts_graph_free(probe_graph);
  probe_graph = NULL;
  ts_rt_ctx_free(&ctx);
}

static void test_objects_and_methods(void) {
  ts_graph *twice = parse("graph(%self : __torch__.M, %x : int):\n"
                          "  %b : int = prim::GetAttr[name=\"b\"](%self)\n"
                          "  %r : (int, int) = prim::TupleConstruct(%x, %b)\n"
                          "  return (%r)\n");
  ts_graph *rec = parse("graph(%self : __torch__.M):\n"
                        "  %r : int = prim::CallMethod[name=\"rec\"](%self) # m.py:1:5\n"
                        "  return (%r)\n");
  method_names[0] = "twice", method_graphs[0] = twice;
  method_names[1] = "rec", method_graphs[1] = rec;
  ts_graph *g = parse("graph(%self : __torch__.M, %v : int):\n"
                      "  %a : int = prim::GetAttr[name=\"a\"](%self)\n"
                      "   = prim::SetAttr[name=\"b\"](%self, %v)\n"
                      "  %o : __torch__.M = prim::CreateObject()\n"
                      "   = prim::SetAttr[name=\"b\"](%o, %a)\n"
                      "  %t : (int, int) = prim::CallMethod[name=\"twice\"](%o, %v)\n"
                      "  return (%t)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_rt_object *self = ts_rt_object_new(&ctx, &m_class);
  if (g && twice && rec && self) {
    self->attrs[0] = ts_iv_int(11);
    ts_iv args[2] = {{.u.obj = self, .tag = TS_IV_OBJECT}, ts_iv_int(3)}, ret = ts_iv_none();
    if (TS_CHECK(run(g, args, 2, &ret, NULL, false))) {
      ts_buf b = {0};
      ts_iv_repr(&b, ret);
      TS_CHECK_STREQ(b.data, "(3, 11)");
      ts_buf_free(&b);
      TS_CHECK(self->attrs[1].tag == TS_IV_INT && self->attrs[1].u.i == 3);
    }
    ts_iv_release(ret);
    /* a method calling itself without end */
    ts_buf where = {0};
    source_text = "x = self.rec()\n";
    TS_CHECK(!run(rec, args, 1, &ret, &where, true));
    TS_CHECK_STREQ(where.data, "m.py:1:5: error: maximum recursion depth exceeded (200 nested calls)\n"
                               "x = self.rec()\n"
                               "    ^\n"
                               "|maximum recursion depth exceeded (200 nested calls)");
    ts_buf_free(&where);
    source_text = NULL;
  }
  ts_iv_release((ts_iv){.u.obj = self, .tag = TS_IV_OBJECT});
  method_names[0] = method_names[1] = NULL;
  ts_graph_free(g);
  ts_graph_free(twice);
  ts_graph_free(rec);
  ts_rt_ctx_free(&ctx);
}

/* Errors name the node's source line; code-build errors too. */
static void test_errors(void) {
  source_text = "def f(l):\n  a, b = l\n";
  ts_graph *g = parse("graph(%l : int[]):\n"
                      "  %a : int, %b : int = prim::ListUnpack(%l) # m.py:2:3\n"
                      "  return (%a)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_rt_list *l = ts_rt_list_new(&ctx, NULL, 3);
  for (int i = 0; i < 3; i++)
    ts_rt_list_append(&ctx, l, ts_iv_int(i));
  ts_iv arg = {.u.l = l, .tag = TS_IV_LIST}, ret = ts_iv_none();
  ts_buf where = {0};
  if (g) {
    TS_CHECK(!run(g, &arg, 1, &ret, &where, true));
    TS_CHECK_STREQ(where.data, "m.py:2:3: error: Expected 2 elements in a list but found 3\n"
                               "  a, b = l\n"
                               "  ^\n"
                               "|Expected 2 elements in a list but found 3");
    TS_CHECK_INTEQ(l->h.refcount, 1);
  }
  ts_graph_free(g);
  ts_buf_free(&where);

  /* an operator nothing runs: the code builds, a run that reaches it fails
   * there with PyTorch's words; a branch not taken costs nothing */
  g = parse("graph(%x : int, %c : bool):\n"
            "  %y : int = prim::If(%c)\n"
            "    block0():\n"
            "      %z : int = foo::bar(%x) # m.py:1:1\n"
            "      -> (%z)\n"
            "    block1():\n"
            "      -> (%x)\n"
            "  return (%y)\n");
  if (g) {
    ts_iv a2[2] = {ts_iv_int(5), ts_iv_bool(false)};
    TS_CHECK(run(g, a2, 2, &ret, NULL, false));
    TS_CHECK(ret.tag == TS_IV_INT && ret.u.i == 5);
    a2[1] = ts_iv_bool(true);
    TS_CHECK(!run(g, a2, 2, &ret, &where, true));
    TS_CHECK_STREQ(where.data, "m.py:1:1: error: Could not run 'foo::bar' with arguments from the 'CPU' backend: "
                               "tsaot has no kernel for this operator\n"
                               "def f(l):\n"
                               "^\n"
                               "|Could not run 'foo::bar' with arguments from the 'CPU' backend: tsaot has no kernel "
                               "for this operator");
    const ts_node *bar = ts_block_first(ts_block_first(g->block)->blocks[0]);
    TS_CHECK(ts_rt_interp_no_kernel(bar));
    TS_CHECK(!ts_rt_interp_no_kernel(ts_block_first(g->block)));
  }
  ts_graph_free(g);
  ts_buf_free(&where);

  /* an exception the program raises: PyTorch's "builtins.ValueError: bad" */
  g = parse("graph(%x : int):\n"
            "  %m : str = prim::Constant[value=\"bad\"]()\n"
            "  %c : str = prim::Constant[value=\"builtins.ValueError\"]()\n"
            "   = prim::RaiseException(%m, %c) # m.py:2:3\n"
            "  return (%x)\n");
  if (g && ts_rt_kernel_by_name("prim::RaiseException")) {
    TS_CHECK(!run(g, &arg, 1, &ret, &where, true));
    TS_CHECK_STREQ(where.data, "m.py:2:3: error: builtins.ValueError: bad\n"
                               "  a, b = l\n"
                               "  ^\n"
                               "|bad");
  }
  ts_graph_free(g);
  ts_buf_free(&where);

  /* wrong argument count */
  g = parse("graph(%x : int):\n"
            "  return (%x)\n");
  if (g) {
    TS_CHECK(!run(g, &arg, 0, &ret, &where, true));
    TS_CHECK_STREQ(where.data, "error: the graph takes 1 arguments, 0 given\n|the graph takes 1 arguments, 0 given");
  }
  ts_graph_free(g);
  ts_buf_free(&where);
  ts_iv_release(arg);
  ts_rt_ctx_free(&ctx);
  source_text = NULL;
}

static void test_tolist(void) {
  ts_graph *g = parse("graph(%t : Tensor):\n"
                      "  %two : int = prim::Constant[value=2]()\n"
                      "  %zero : int = prim::Constant[value=0]()\n"
                      "  %l : int[][] = prim::tolist(%t, %two, %zero)\n"
                      "  return (%l)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  int64_t sizes[2] = {2, 3};
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_INT64, 2, sizes, false);
  if (g && t) {
    int64_t *p = ts_rt_tensor_data(t);
    for (int i = 0; i < 6; i++)
      p[i] = i * 10;
    /* a transposed view: tolist follows the strides */
    int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
    ts_rt_tensor *v = ts_rt_tensor_view(&ctx, t, 0, 2, tsz, tst);
    ts_iv arg = ts_iv_tensor(v), ret = ts_iv_none();
    if (TS_CHECK(run(g, &arg, 1, &ret, NULL, false))) {
      ts_buf b = {0};
      ts_iv_repr(&b, ret);
      TS_CHECK_STREQ(b.data, "[[0, 30], [10, 40], [20, 50]]");
      ts_buf_free(&b);
    }
    ts_iv_release(ret);
    ts_iv_release(arg);
    /* torch: "Output annotation element type and runtime tensor element type must match for tolist()" for
     * torch.jit.annotate(List[List[float]], int_tensor.tolist()) */
    ts_graph *gf = parse("graph(%t : Tensor):\n"
                         "  %two : int = prim::Constant[value=2]()\n"
                         "  %one : int = prim::Constant[value=1]()\n"
                         "  %l : float[][] = prim::tolist(%t, %two, %one)\n"
                         "  return (%l)\n");
    ts_buf where = {0};
    arg = ts_iv_tensor(t);
    if (gf) {
      TS_CHECK(!run(gf, &arg, 1, &ret, &where, true));
      TS_CHECK(where.data &&
               strstr(where.data, "|Output annotation element type and runtime tensor element type must match"));
    }
    ts_buf_free(&where);
    ts_graph_free(gf);
  }
  ts_rt_tensor_release(t);
  ts_graph_free(g);
  ts_rt_ctx_free(&ctx);
}

/* Cases that need kernels (aten::add.int, aten::lt.int): a counted loop and
 * a while loop. */
static void test_with_kernels(void) {
  if (!ts_rt_kernel_by_name("aten::add.int") || !ts_rt_kernel_by_name("aten::lt.int")) {
    printf("note: aten::add.int / aten::lt.int have no kernels yet; kernel cases skipped\n");
    return;
  }
  /* sum(range(n)) and a while loop doubling x until it reaches 100 */
  ts_graph *g = parse("graph(%n : int):\n"
                      "  %true : bool = prim::Constant[value=1]()\n"
                      "  %zero : int = prim::Constant[value=0]()\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %big : int = prim::Constant[value=9223372036854775807]()\n"
                      "  %hundred : int = prim::Constant[value=100]()\n"
                      "  %s : int = prim::Loop(%n, %true, %zero)\n"
                      "    block0(%i : int, %acc : int):\n"
                      "      %acc2 : int = aten::add(%acc, %i)\n"
                      "      -> (%true, %acc2)\n"
                      "  %c0 : bool = aten::lt(%one, %hundred)\n"
                      "  %x : int = prim::Loop(%big, %c0, %one)\n"
                      "    block0(%j : int, %v : int):\n"
                      "      %v2 : int = aten::add(%v, %v)\n"
                      "      %c : bool = aten::lt(%v2, %hundred)\n"
                      "      -> (%c, %v2)\n"
                      "  %r : (int, int) = prim::TupleConstruct(%s, %x)\n"
                      "  return (%r)\n");
  ts_iv arg = ts_iv_int(10), ret = ts_iv_none();
  if (g && TS_CHECK(run(g, &arg, 1, &ret, NULL, false))) {
    ts_buf b = {0};
    ts_iv_repr(&b, ret);
    TS_CHECK_STREQ(b.data, "(45, 128)");
    ts_buf_free(&b);
  }
  ts_iv_release(ret);
  ts_graph_free(g);
}

/* A complex tensor reaches the kernels that take one (view_as_real, a
 * view, cat) and is refused by one written for real dtypes (sum), which
 * would otherwise read only the real parts. */
static void test_complex_inputs(void) {
  ts_graph *g = parse("graph(%z : Tensor):\n"
                      "  %m : int = prim::Constant[value=-1]()\n"
                      "  %zero : int = prim::Constant[value=0]()\n"
                      "  %l : Tensor[] = prim::ListConstruct(%z, %z)\n"
                      "  %c : Tensor = aten::cat(%l, %zero)\n"
                      "  %s : int[] = prim::ListConstruct(%m)\n"
                      "  %v : Tensor = aten::view(%c, %s)\n"
                      "  %r : Tensor = aten::view_as_real(%v)\n"
                      "  return (%r)\n");
  ts_graph *bad = parse("graph(%z : Tensor):\n"
                        "  %none : NoneType = prim::Constant()\n"
                        "  %d : int = prim::Constant[value=0]()\n"
                        "  %r : Tensor = aten::cumprod(%z, %d, %none)\n"
                        "  return (%r)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  int64_t sizes[1] = {2};
  ts_rt_tensor *z = ts_rt_tensor_new(&ctx, TS_DT_COMPLEX64, 1, sizes, false);
  if (g && bad && TS_CHECK(z)) {
    float *p = ts_rt_tensor_data(z);
    p[0] = 1, p[1] = 2, p[2] = -3, p[3] = 0.5f;
    ts_iv arg = ts_iv_tensor(z), ret = ts_iv_none();
    if (TS_CHECK(run(g, &arg, 1, &ret, NULL, false)) && TS_CHECK(ret.tag == TS_IV_TENSOR)) {
      const ts_rt_tensor *r = ret.u.t;
      TS_CHECK(r->dtype == TS_DT_FLOAT32 && r->ndim == 2 && r->sizes[0] == 4 && r->sizes[1] == 2);
      const float *q = ts_rt_tensor_data(r);
      TS_CHECK(q[0] == 1 && q[1] == 2 && q[2] == -3 && q[3] == 0.5f && q[4] == 1 && q[7] == 0.5f);
    }
    ts_iv_release(ret);
    ts_buf why = {0};
    ret = ts_iv_none();
    TS_CHECK(!run(bad, &arg, 1, &ret, &why, true));
    if (!TS_CHECK(why.data && strstr(why.data, "\"aten::cumprod\" not implemented for 'ComplexFloat'")))
      fprintf(stderr, "  got: %s\n", why.data ? why.data : "");
    ts_buf_free(&why);
  }
  if (z) ts_rt_tensor_release(z);
  ts_rt_ctx_free(&ctx);
  ts_graph_free(g);
  ts_graph_free(bad);
}

static void test_chunk(void) {
  ts_graph *g = parse("graph(%t : Tensor):\n"
                      "  %a : Tensor, %b : Tensor = prim::ConstantChunk[chunks=2, dim=0](%t)\n"
                      "  %r : (Tensor, Tensor) = prim::TupleConstruct(%b, %a)\n"
                      "  return (%r)\n");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  int64_t sizes[1] = {4};
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, sizes, true);
  if (g && t) {
    ts_iv arg = ts_iv_tensor(t), ret = ts_iv_none();
    if (TS_CHECK(run(g, &arg, 1, &ret, NULL, false))) {
      const ts_rt_tensor *b = ret.u.tup->items[0].u.t;
      TS_CHECK(b->storage == t->storage && b->offset == 2 && b->sizes[0] == 2);
    }
    ts_iv_release(ret);
  }
  ts_rt_tensor_release(t);
  ts_graph_free(g);
  ts_rt_ctx_free(&ctx);
}

/* loader/model.c: the module tree of a fixture and its forward against
 * PyTorch's output (tests/fixtures/small_mlp, made by make_fixtures.py). */
static void test_model(void) {
  const char *dir = TSAOT_SOURCE_DIR "/tests/fixtures/small_mlp/";
  char path[1024];
  snprintf(path, sizeof path, "%smodel.pt", dir);
  ts_diag d = {0};
  ts_rt_model *m = ts_rt_model_load(path, &d);
  if (!TS_CHECK(m != NULL)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return;
  }
  ts_iv root = ts_rt_model_root(m);
  TS_CHECK(root.tag == TS_IV_OBJECT);
  const ts_rt_object *o = root.u.obj;
  TS_CHECK_STREQ(o->cls->qualname, "__torch__.fixture_models.SmallMLP");
  int32_t k = ts_rt_class_attr_index(o->cls, "fc1");
  if (TS_CHECK(k >= 0) && TS_CHECK(o->attrs[k].tag == TS_IV_OBJECT)) {
    const ts_rt_object *fc1 = o->attrs[k].u.obj;
    int32_t w = ts_rt_class_attr_index(fc1->cls, "weight");
    if (TS_CHECK(w >= 0) && TS_CHECK(fc1->attrs[w].tag == TS_IV_TENSOR)) {
      TS_CHECK(fc1->attrs[w].u.t->requires_grad); /* a Parameter */
      TS_CHECK_INTEQ(fc1->attrs[w].u.t->ndim, 2);
    }
  }
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 2);
  snprintf(path, sizeof path, "%sin0.npy", dir);
  ts_rt_tensor *x = ts_rt_npy_read(&ctx, path);
  snprintf(path, sizeof path, "%sout0.npy", dir);
  ts_rt_tensor *want = ts_rt_npy_read(&ctx, path);
  ts_iv arg = ts_iv_tensor(x), ret = ts_iv_none();
  ts_buf where = {0};
  if (TS_CHECK(x && want) && TS_CHECK(ts_rt_model_run(m, &ctx, "forward", &arg, 1, &ret, &where)) &&
      TS_CHECK(ret.tag == TS_IV_TENSOR) && TS_CHECK(ts_rt_tensor_numel(ret.u.t) == ts_rt_tensor_numel(want))) {
    ts_rt_tensor *got = ts_rt_tensor_contiguous(&ctx, ret.u.t);
    const float *g = ts_rt_tensor_data(got), *w = ts_rt_tensor_data(want);
    int bad = 0;
    for (int64_t i = 0; i < ts_rt_tensor_numel(want); i++)
      bad += !(fabsf(g[i] - w[i]) <= 1e-5f + 1e-4f * fabsf(w[i]));
    TS_CHECK_INTEQ(bad, 0);
    ts_rt_tensor_release(got);
  } else
    fprintf(stderr, "%s%s\n", where.data ? where.data : "", ctx.err.data ? ctx.err.data : "");
  ts_iv_release(ret);
  /* too few arguments and no default */
  ts_buf_free(&where);
  TS_CHECK(!ts_rt_model_run(m, &ctx, "forward", NULL, 0, &ret, &where));
  TS_CHECK_STREQ(ctx.err.data, "forward() is missing value for argument 'x'");
  TS_CHECK(!ts_rt_model_run(m, &ctx, "nope", NULL, 0, &ret, &where));
  ts_buf_free(&where);
  ts_iv_release(arg);
  ts_rt_tensor_release(want);
  ts_rt_ctx_free(&ctx);
  ts_rt_model_free(m);
  ts_diag_free(&d);
}

int main(void) {
  test_constants_and_containers();
  test_if();
  test_loop();
  test_release();
  test_objects_and_methods();
  test_errors();
  test_tolist();
  test_with_kernels();
  test_complex_inputs();
  test_chunk();
  test_model();
  return ts_test_finish();
}
