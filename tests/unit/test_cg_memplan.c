/* tests/unit/test_cg_memplan.c: the activation arena's plan
 * (codegen/memplan.c) on graphs read from text: reuse along chains, in
 * place or not; views, lists, If and Loop keeping buffers alive; graph
 * outputs and escaping values left out; best fit, coalescing, 64-byte
 * alignment; and random straight-line graphs where no two buffers alive at
 * once may overlap, with lifetimes recomputed here by brute force from the
 * alias db. */
#include "codegen.h"
#include "passes.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* complete, contiguous 1-d float types of 64, 128, 256 and 512 bytes */
#define F16 "Float(16, strides=[1], requires_grad=0, device=cpu)"
#define F32 "Float(32, strides=[1], requires_grad=0, device=cpu)"
#define F64 "Float(64, strides=[1], requires_grad=0, device=cpu)"
#define F128 "Float(128, strides=[1], requires_grad=0, device=cpu)"

typedef struct fixture {
  ts_graph *g;
  ts_cg_memplan p;
  bool ok;
} fixture;

/* Plans every complete tensor but those named n* (results the tests keep
 * out of the plan). */
static bool want_not_n(void *arg, const ts_value *v) {
  (void)arg;
  return !v->name || v->name[0] != 'n';
}

typedef struct inplace_log {
  bool allow;
  uint32_t calls;
} inplace_log;

static bool inplace_cb(void *arg, const ts_node *n, const ts_value *in, const ts_value *out) {
  inplace_log *l = arg;
  l->calls++;
  /* the node's own input and output */
  bool is_in = false, is_out = false;
  for (uint32_t i = 0; i < n->ninputs; i++)
    is_in = is_in || n->inputs[i] == in;
  for (uint32_t i = 0; i < n->noutputs; i++)
    is_out = is_out || n->outputs[i] == out;
  TS_CHECK(is_in && is_out);
  return l->allow;
}

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("test", text, strlen(text), &d);
  if (g && !ts_graph_verify(g, &d)) {
    ts_graph_free(g);
    g = NULL;
  }
  if (d.text.data)
    fprintf(stderr, "%s", d.text.data);
  ts_diag_free(&d);
  TS_CHECK(g != NULL);
  return g;
}

/* Plans `text`; with `inplace` every in-place offer is taken. */
static fixture plan(const char *text, bool inplace) {
  fixture f = {0};
  f.g = parse(text);
  if (!f.g)
    return f;
  ts_diag d = {0};
  inplace_log log = {true, 0};
  f.ok = ts_cg_memplan_build(f.g, want_not_n, inplace ? inplace_cb : NULL, &log, &f.p, &d);
  if (d.text.data)
    fprintf(stderr, "%s", d.text.data);
  ts_diag_free(&d);
  TS_CHECK(f.ok);
  return f;
}

static void unplan(fixture *f) {
  ts_cg_memplan_free(&f->p);
  ts_graph_free(f->g);
}

static const ts_value *V(const fixture *f, const char *name) {
  const ts_value *v = ts_graph_find_value(f->g, name, strlen(name));
  if (!v)
    fprintf(stderr, "no value %%%s\n", name);
  return v;
}

static int64_t OFF(const fixture *f, const char *name) {
  const ts_value *v = V(f, name);
  return v && v->id < f->p.nvalues ? f->p.offset[v->id] : -2;
}

static uint64_t NB(const fixture *f, const char *name) {
  const ts_value *v = V(f, name);
  return v && v->id < f->p.nvalues ? f->p.nbytes[v->id] : 0;
}

/* ------------------------------------------------------------ type sizes */

static uint64_t nbytes_of(const char *text) {
  ts_arena a;
  ts_arena_init(&a, 0);
  ts_diag d = {0};
  const ts_type *t = ts_type_parse(&a, text, strlen(text), &d);
  if (!t)
    fprintf(stderr, "%s: %s", text, d.text.data ? d.text.data : "?\n");
  TS_CHECK(t != NULL);
  uint64_t n = ts_cg_type_nbytes(t);
  ts_diag_free(&d);
  ts_arena_release(&a);
  return n;
}

static void test_type_nbytes(void) {
  TS_CHECK_INTEQ(nbytes_of("Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"), 24);
  TS_CHECK_INTEQ(nbytes_of("Double(2, 3, strides=[3, 1])"), 48);
  TS_CHECK_INTEQ(nbytes_of("Half(5, strides=[1])"), 10);
  TS_CHECK_INTEQ(nbytes_of("Bool(7, strides=[1])"), 7);
  TS_CHECK_INTEQ(nbytes_of("Float(1, 3, 8, 8, strides=[192, 64, 8, 1], requires_grad=0, device=cpu)"), 768);
  /* a size-1 dimension's stride does not matter (ATen's is_contiguous) */
  TS_CHECK_INTEQ(nbytes_of("Float(1, 3, strides=[7, 1])"), 12);
  TS_CHECK_INTEQ(nbytes_of("Long(requires_grad=0, device=cpu)"), 8); /* 0-d */
  /* not contiguous, not complete, no elements, too large */
  TS_CHECK_INTEQ(nbytes_of("Float(2, 3, strides=[1, 2])"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(2, 3, strides=[4, 1])"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(2, 3)"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(2, *, strides=[3, 1])"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(*, *)"), 0);
  TS_CHECK_INTEQ(nbytes_of("Tensor"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(0, 3, strides=[3, 1])"), 0);
  TS_CHECK_INTEQ(nbytes_of("Float(4611686018427387904, 4, strides=[4, 1])"), 0);
  TS_CHECK_INTEQ(nbytes_of("int"), 0);
  TS_CHECK_INTEQ(ts_cg_type_nbytes(NULL), 0);
}

/* ---------------------------------------------------------------- chains */

static const char *chain_text = "graph(%x : " F32 "):\n"
                                "  %a : " F32 " = aten::relu(%x)\n"
                                "  %b : " F32 " = aten::relu(%a)\n"
                                "  %c : " F32 " = aten::relu(%b)\n"
                                "  %d : " F32 " = aten::relu(%c)\n"
                                "  %e : " F32 " = aten::relu(%d)\n"
                                "  return (%e)\n";

static void test_chain(void) {
  fixture f = plan(chain_text, false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nvalues, f.g->next_value_id);
    TS_CHECK_INTEQ(f.p.nplanned, 4);
    TS_CHECK_INTEQ(f.p.total_bytes, 4 * 128);
    TS_CHECK_INTEQ(f.p.arena_size, 2 * 128);
    TS_CHECK_INTEQ(f.p.ninplace, 0);
    TS_CHECK_INTEQ(OFF(&f, "x"), -1);
    TS_CHECK_INTEQ(OFF(&f, "e"), -1); /* the graph's output */
    TS_CHECK_INTEQ(NB(&f, "e"), 0);
    TS_CHECK_INTEQ(NB(&f, "a"), 128);
    TS_CHECK(OFF(&f, "a") != OFF(&f, "b"));
    TS_CHECK_INTEQ(OFF(&f, "c"), OFF(&f, "a"));
    TS_CHECK_INTEQ(OFF(&f, "d"), OFF(&f, "b"));
  }
  unplan(&f);

  f = plan(chain_text, true);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 4);
    TS_CHECK_INTEQ(f.p.total_bytes, 4 * 128);
    TS_CHECK_INTEQ(f.p.arena_size, 128);
    TS_CHECK_INTEQ(f.p.ninplace, 3);
    TS_CHECK_INTEQ(OFF(&f, "a"), 0);
    TS_CHECK_INTEQ(OFF(&f, "d"), 0);
  }
  unplan(&f);

  /* the callback refusing: no in-place */
  ts_graph *g = parse(chain_text);
  if (g) {
    ts_cg_memplan p;
    inplace_log log = {false, 0};
    TS_CHECK(ts_cg_memplan_build(g, NULL, inplace_cb, &log, &p, NULL));
    TS_CHECK_INTEQ(log.calls, 3);
    TS_CHECK_INTEQ(p.ninplace, 0);
    TS_CHECK_INTEQ(p.arena_size, 256);
    ts_cg_memplan_free(&p);
    ts_graph_free(g);
  }
}

/* In place only into a buffer this node is the last to read, of the same
 * size, that no other input of the node reads through a view; one output
 * per buffer. */
static void test_inplace_rules(void) {
  /* %a is read again after %b; %c is larger than %b */
  fixture f = plan("graph(%x : " F32 "):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %a : " F32 " = aten::relu(%x)\n"
                   "  %b : " F32 " = aten::relu(%a)\n"
                   "  %c : " F64 " = aten::relu(%b)\n"
                   "  %n : " F32 " = aten::add(%a, %c, %one)\n"
                   "  return (%n)\n",
                   true);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.ninplace, 0);
    TS_CHECK_INTEQ(f.p.nplanned, 3);
    TS_CHECK(OFF(&f, "a") != OFF(&f, "b"));
  }
  unplan(&f);

  /* %v, a view of %a, is read by the node that would write over %a */
  f = plan("graph(%x : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu)):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
           "  %v : Float(8, 4, strides=[1, 8], requires_grad=0, device=cpu) = aten::t(%a)\n"
           "  %b : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::add(%a, %v, %one)\n"
           "  %n : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%b)\n"
           "  return (%n)\n",
           true);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.ninplace, 0);
    TS_CHECK_INTEQ(f.p.nplanned, 2);
    TS_CHECK(OFF(&f, "a") >= 0 && OFF(&f, "b") >= 0 && OFF(&f, "a") != OFF(&f, "b"));
  }
  unplan(&f);

  /* two outputs of one node: only the first takes %a's buffer, though
   * %val (never read) ends where %a does */
  f = plan("graph(%x : Long(4, 1, strides=[1, 1], requires_grad=0, device=cpu)):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %no : bool = prim::Constant[value=0]()\n"
           "  %a : Long(4, 1, strides=[1, 1], requires_grad=0, device=cpu) = aten::neg(%x)\n"
           "  %val : Long(4, strides=[1], requires_grad=0, device=cpu), %idx : Long(4, strides=[1], "
           "requires_grad=0, device=cpu) = aten::max(%a, %one, %no)\n"
           "  %n : Long(4, strides=[1], requires_grad=0, device=cpu) = aten::add(%idx, %idx, %one)\n"
           "  return (%n)\n",
           true);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 3);
    TS_CHECK_INTEQ(f.p.ninplace, 1);
    TS_CHECK_INTEQ(OFF(&f, "val"), OFF(&f, "a"));
    TS_CHECK(OFF(&f, "idx") >= 0 && OFF(&f, "idx") != OFF(&f, "a"));
    TS_CHECK_INTEQ(f.p.arena_size, 128);
  }
  unplan(&f);
}

/* ----------------------------------------------------------------- views */

/* A view of %a read at the 4th node keeps %a's buffer until then: %b,
 * made while the view lives, does not take it; %c, made after, does. */
static void test_views(void) {
  static const char *const views[] = {
      "  %v : Float(8, 4, strides=[1, 8], requires_grad=0, device=cpu) = aten::t(%a)\n",
      "  %v : Float(32, strides=[1], requires_grad=0, device=cpu) = aten::view(%a, %shape)\n",
      "  %v : Float(8, strides=[1], requires_grad=0, device=cpu) = aten::select(%a, %zero, %one)\n",
  };
  for (size_t k = 0; k < sizeof views / sizeof *views; k++) {
    char text[2048];
    snprintf(text, sizeof text,
             "graph(%%x : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu),\n"
             "      %%shape : int[]):\n"
             "  %%zero : int = prim::Constant[value=0]()\n"
             "  %%one : int = prim::Constant[value=1]()\n"
             "  %%a : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%%x)\n"
             "%s"
             "  %%b : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%%x)\n"
             "  %%n1 : Tensor = aten::mul(%%v, %%v)\n"
             "  %%c : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%%x)\n"
             "  %%n2 : Tensor = aten::add(%%b, %%c, %%one)\n"
             "  return (%%n1, %%n2)\n",
             views[k]);
    ts_graph *g = parse(text);
    if (!g)
      continue;
    ts_cg_memplan p;
    TS_CHECK(ts_cg_memplan_build(g, NULL, NULL, NULL, &p, NULL));
    const ts_value *a = ts_graph_find_value(g, "a", 1), *b = ts_graph_find_value(g, "b", 1);
    const ts_value *c = ts_graph_find_value(g, "c", 1), *v = ts_graph_find_value(g, "v", 1);
    if (TS_CHECK(a && b && c && v)) {
      TS_CHECK(p.offset[a->id] >= 0);
      TS_CHECK(p.offset[b->id] >= 0 && p.offset[b->id] != p.offset[a->id]);
      TS_CHECK_INTEQ(p.offset[c->id], p.offset[a->id]);
      /* the view itself is %a's memory, not a buffer of its own, even
       * with a complete contiguous type (select) */
      TS_CHECK_INTEQ(p.offset[v->id], -1);
      TS_CHECK_INTEQ(p.nplanned, 3);
      TS_CHECK_INTEQ(p.arena_size, 256);
    }
    ts_cg_memplan_free(&p);
    ts_graph_free(g);
  }
}

/* --------------------------------------------------------------- escapes */

static void test_escapes(void) {
  /* returned through a view */
  fixture f = plan("graph(%x : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu)):\n"
                   "  %a : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  %v : Float(8, 4, strides=[1, 8], requires_grad=0, device=cpu) = aten::t(%a)\n"
                   "  %b : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  return (%v, %b)\n",
                   false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 0);
    TS_CHECK_INTEQ(f.p.arena_size, 0);
    TS_CHECK_INTEQ(OFF(&f, "a"), -1);
    TS_CHECK_INTEQ(OFF(&f, "b"), -1);
  }
  unplan(&f);

  /* returned through an If */
  f = plan("graph(%x : " F32 ",\n"
           "      %cond : bool):\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %b : " F32 " = aten::neg(%x)\n"
           "  %r : Tensor = prim::If(%cond)\n"
           "    block0():\n"
           "      -> (%a)\n"
           "    block1():\n"
           "      -> (%x)\n"
           "  %n : " F32 " = aten::mul(%b, %b)\n"
           "  return (%r, %n)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "a"), -1);
    TS_CHECK(OFF(&f, "b") >= 0);
    TS_CHECK_INTEQ(f.p.nplanned, 1);
  }
  unplan(&f);

  /* written in place and returned */
  f = plan("graph(%x : " F32 "):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %w : " F32 " = aten::add_(%a, %x, %one)\n"
           "  return (%w)\n",
           false);
  if (f.ok)
    TS_CHECK_INTEQ(f.p.nplanned, 0);
  unplan(&f);

  /* not a CPU tensor, or of an unknown size */
  f = plan("graph(%x : Tensor):\n"
           "  %a : Float(32, strides=[1], requires_grad=0, device=cuda:0) = aten::relu(%x)\n"
           "  %b : Float(*, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
           "  %c : Float(32, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
           "  %n : Tensor = aten::mul(%a, %b)\n"
           "  %n2 : Tensor = aten::mul(%n, %c)\n"
           "  return (%n2)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "a"), -1);
    TS_CHECK_INTEQ(OFF(&f, "b"), -1);
    TS_CHECK_INTEQ(OFF(&f, "c"), 0);
  }
  unplan(&f);
}

/* ----------------------------------------------------------------- lists */

static void test_lists(void) {
  /* a list read once by aten::cat holds its elements precisely: they are
   * planned and live until the cat */
  fixture f = plan("graph(%x : " F32 "):\n"
                   "  %zero : int = prim::Constant[value=0]()\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %p : " F32 " = aten::relu(%x)\n"
                   "  %q : " F32 " = aten::neg(%x)\n"
                   "  %l : Tensor[] = prim::ListConstruct(%p, %q)\n"
                   "  %r : " F32 " = aten::exp(%x)\n"
                   "  %n1 : " F64 " = aten::cat(%l, %zero)\n"
                   "  %s : " F32 " = aten::sin(%x)\n"
                   "  %n2 : " F32 " = aten::add(%r, %s, %one)\n"
                   "  return (%n1, %n2)\n",
                   false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 4);
    int64_t p = OFF(&f, "p"), q = OFF(&f, "q"), r = OFF(&f, "r"), s = OFF(&f, "s");
    TS_CHECK(p >= 0 && q >= 0 && r >= 0 && s >= 0);
    TS_CHECK(p != q && r != p && r != q);
    TS_CHECK(s == p || s == q);
    TS_CHECK_INTEQ(f.p.arena_size, 3 * 128);
  }
  unplan(&f);

  /* read otherwise: the elements join the wildcard set and escape */
  f = plan("graph(%x : " F32 "):\n"
           "  %zero : int = prim::Constant[value=0]()\n"
           "  %p : " F32 " = aten::relu(%x)\n"
           "  %q : " F32 " = aten::neg(%x)\n"
           "  %l : Tensor[] = prim::ListConstruct(%p, %q)\n"
           "  %n1 : int = aten::len(%l)\n"
           "  %n2 : " F64 " = aten::cat(%l, %zero)\n"
           "  %r : " F32 " = aten::exp(%x)\n"
           "  %n3 : " F32 " = aten::mul(%r, %r)\n"
           "  return (%n1, %n2, %n3)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "p"), -1);
    TS_CHECK_INTEQ(OFF(&f, "q"), -1);
    TS_CHECK_INTEQ(OFF(&f, "r"), 0);
    TS_CHECK_INTEQ(f.p.nplanned, 1);
  }
  unplan(&f);

  /* in the wildcard set though made from a planned value, not from the
   * graph's inputs */
  f = plan("graph(%x : " F32 "):\n"
           "  %c : " F32 " = aten::relu(%x)\n"
           "  %p : " F32 " = aten::relu(%c)\n"
           "  %l : Tensor[] = prim::ListConstruct(%p)\n"
           "  %n1 : int = aten::len(%l)\n"
           "  return (%n1)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "c"), 0);
    TS_CHECK_INTEQ(OFF(&f, "p"), -1);
    TS_CHECK_INTEQ(f.p.nplanned, 1);
  }
  unplan(&f);

  /* a tuple's elements are wildcards too */
  f = plan("graph(%x : " F32 "):\n"
           "  %zero : int = prim::Constant[value=0]()\n"
           "  %p : " F32 " = aten::relu(%x)\n"
           "  %q : " F32 " = aten::neg(%x)\n"
           "  %t : (Tensor, Tensor) = prim::TupleConstruct(%p, %q)\n"
           "  %n1 : Tensor = prim::TupleIndex(%t, %zero)\n"
           "  %n2 : Tensor = aten::mul(%n1, %n1)\n"
           "  return (%n2)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "p"), -1);
    TS_CHECK_INTEQ(OFF(&f, "q"), -1);
    TS_CHECK_INTEQ(f.p.nplanned, 0);
  }
  unplan(&f);
}

/* ---------------------------------------------------------- control flow */

static void test_control_flow(void) {
  /* %a is read only inside the If: alive until the If, so %b (made
   * before it) cannot take %a's buffer */
  fixture f = plan("graph(%x : " F32 ",\n"
                   "      %cond : bool):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %a : " F32 " = aten::relu(%x)\n"
                   "  %b : " F32 " = aten::neg(%x)\n"
                   "  %r : Tensor = prim::If(%cond)\n"
                   "    block0():\n"
                   "      %t : Tensor = aten::exp(%a)\n"
                   "      -> (%t)\n"
                   "    block1():\n"
                   "      -> (%x)\n"
                   "  %c : " F32 " = aten::sin(%x)\n"
                   "  %n1 : Tensor = aten::add(%r, %b, %one)\n"
                   "  %n2 : Tensor = aten::add(%n1, %c, %one)\n"
                   "  return (%n2)\n",
                   false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 3); /* %r is the If's */
    TS_CHECK(OFF(&f, "a") >= 0 && OFF(&f, "b") >= 0 && OFF(&f, "a") != OFF(&f, "b"));
    TS_CHECK_INTEQ(OFF(&f, "c"), OFF(&f, "a")); /* free after the If */
    TS_CHECK_INTEQ(OFF(&f, "r"), -1);
    TS_CHECK_INTEQ(f.p.arena_size, 256);
  }
  unplan(&f);

  /* an If's result may be %a: %a lives until the result's last use */
  f = plan("graph(%x : " F32 ",\n"
           "      %cond : bool):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %r : Tensor = prim::If(%cond)\n"
           "    block0():\n"
           "      -> (%a)\n"
           "    block1():\n"
           "      -> (%x)\n"
           "  %b : " F32 " = aten::neg(%x)\n"
           "  %n1 : Tensor = aten::add(%r, %b, %one)\n"
           "  return (%n1)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 2);
    TS_CHECK(OFF(&f, "a") >= 0 && OFF(&f, "b") >= 0 && OFF(&f, "a") != OFF(&f, "b"));
  }
  unplan(&f);

  /* the same through a Loop's body */
  f = plan("graph(%x : " F32 ",\n"
           "      %n : int):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %true : bool = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %b : " F32 " = aten::neg(%x)\n"
           "  %lo : Tensor = prim::Loop(%n, %true, %x)\n"
           "    block0(%i : int, %acc : Tensor):\n"
           "      %nx : Tensor = aten::add(%acc, %a, %one)\n"
           "      -> (%true, %nx)\n"
           "  %c : " F32 " = aten::sin(%x)\n"
           "  %n1 : Tensor = aten::add(%lo, %b, %one)\n"
           "  %n2 : Tensor = aten::add(%n1, %c, %one)\n"
           "  return (%n2)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 3);
    TS_CHECK(OFF(&f, "a") != OFF(&f, "b"));
    TS_CHECK_INTEQ(OFF(&f, "c"), OFF(&f, "a"));
  }
  unplan(&f);

  /* carried through a loop as a view: the loop's result is %a's memory,
   * read after %b is made */
  f = plan("graph(%x : " F32 ",\n"
           "      %n : int):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %true : bool = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %lo : Tensor = prim::Loop(%n, %true, %a)\n"
           "    block0(%i : int, %acc : Tensor):\n"
           "      %tv : Tensor = aten::t(%acc)\n"
           "      -> (%true, %tv)\n"
           "  %b : " F32 " = aten::neg(%x)\n"
           "  %n1 : Tensor = aten::add(%lo, %b, %one)\n"
           "  return (%n1)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 2);
    TS_CHECK(OFF(&f, "a") >= 0 && OFF(&f, "b") >= 0 && OFF(&f, "a") != OFF(&f, "b"));
  }
  unplan(&f);

  /* a loop that runs no iteration returns %a itself, though the alias db
   * (as PyTorch's) points %lo only to the body's fresh result, and the
   * body never reads %acc */
  f = plan("graph(%x : " F32 ",\n"
           "      %n : int):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %true : bool = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x)\n"
           "  %lo : Tensor = prim::Loop(%n, %true, %a)\n"
           "    block0(%i : int, %acc : Tensor):\n"
           "      %nx : Tensor = aten::neg(%x)\n"
           "      -> (%true, %nx)\n"
           "  %b : " F32 " = aten::neg(%x)\n"
           "  %n1 : Tensor = aten::add(%lo, %b, %one)\n"
           "  return (%n1)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 2);
    TS_CHECK(OFF(&f, "a") >= 0 && OFF(&f, "b") >= 0 && OFF(&f, "a") != OFF(&f, "b"));
  }
  unplan(&f);
}

/* ---------------------------------------------------------------- fitting */

static void test_best_fit(void) {
  /* free blocks of 128 (at 0), 256 (at 192) and 512 (at 512) bytes between
   * live 64-byte ones; 256 bytes go to the 256 block, then 64 to the 128
   * block (its rest stays free), then 128 to the 512 block */
  fixture f = plan("graph(%x0 : " F16 ",\n"
                   "      %x1 : " F32 ",\n"
                   "      %x2 : " F64 ",\n"
                   "      %x3 : " F128 "):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %p1 : " F32 " = aten::relu(%x1)\n"
                   "  %s1 : " F16 " = aten::relu(%x0)\n"
                   "  %p2 : " F64 " = aten::relu(%x2)\n"
                   "  %s2 : " F16 " = aten::relu(%x0)\n"
                   "  %p3 : " F128 " = aten::relu(%x3)\n"
                   "  %s3 : " F16 " = aten::relu(%x0)\n"
                   "  %n1 : " F32 " = aten::relu(%p1)\n"
                   "  %n2 : " F64 " = aten::relu(%p2)\n"
                   "  %n3 : " F128 " = aten::relu(%p3)\n"
                   "  %q : " F64 " = aten::relu(%x2)\n"
                   "  %r : " F16 " = aten::relu(%x0)\n"
                   "  %t : " F32 " = aten::relu(%x1)\n"
                   "  %n4 : " F16 " = aten::add(%s1, %s2, %one)\n"
                   "  %n5 : " F16 " = aten::add(%n4, %s3, %one)\n"
                   "  %n6 : " F64 " = aten::mul(%q, %q)\n"
                   "  %n7 : " F32 " = aten::mul(%r, %t)\n"
                   "  return (%n1, %n2, %n3, %n5, %n6, %n7)\n",
                   false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "p1"), 0);
    TS_CHECK_INTEQ(OFF(&f, "s1"), 128);
    TS_CHECK_INTEQ(OFF(&f, "p2"), 192);
    TS_CHECK_INTEQ(OFF(&f, "s2"), 448);
    TS_CHECK_INTEQ(OFF(&f, "p3"), 512);
    TS_CHECK_INTEQ(OFF(&f, "s3"), 1024);
    TS_CHECK_INTEQ(OFF(&f, "q"), 192);
    TS_CHECK_INTEQ(OFF(&f, "r"), 0);
    TS_CHECK_INTEQ(OFF(&f, "t"), 512);
    TS_CHECK_INTEQ(f.p.arena_size, 1088);
    TS_CHECK_INTEQ(f.p.nplanned, 9);
    TS_CHECK_INTEQ(f.p.total_bytes, 128 + 3 * 64 + 256 + 512 + 256 + 64 + 128);
  }
  unplan(&f);

  /* neighbours freed together coalesce into one block */
  f = plan("graph(%x0 : " F16 ",\n"
           "      %x1 : " F32 ",\n"
           "      %x2 : " F64 "):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x1)\n"
           "  %b : " F32 " = aten::relu(%x1)\n"
           "  %s : " F16 " = aten::relu(%x0)\n"
           "  %n1 : " F32 " = aten::add(%a, %b, %one)\n"
           "  %c : " F64 " = aten::relu(%x2)\n"
           "  %n2 : " F64 " = aten::add(%c, %s, %one)\n"
           "  return (%n1, %n2)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "a"), 0);
    TS_CHECK_INTEQ(OFF(&f, "b"), 128);
    TS_CHECK_INTEQ(OFF(&f, "s"), 256);
    TS_CHECK_INTEQ(OFF(&f, "c"), 0);
    TS_CHECK_INTEQ(f.p.arena_size, 320);
  }
  unplan(&f);

  /* freed in the other order: the block joins the free one after it */
  f = plan("graph(%x0 : " F16 ",\n"
           "      %x1 : " F32 ",\n"
           "      %x2 : " F64 "):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : " F32 " = aten::relu(%x1)\n"
           "  %b : " F32 " = aten::relu(%x1)\n"
           "  %s : " F16 " = aten::relu(%x0)\n"
           "  %n1 : " F32 " = aten::relu(%b)\n"
           "  %n2 : " F32 " = aten::relu(%a)\n"
           "  %c : " F64 " = aten::relu(%x2)\n"
           "  %n3 : " F64 " = aten::add(%c, %s, %one)\n"
           "  return (%n1, %n2, %n3)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "b"), 128);
    TS_CHECK_INTEQ(OFF(&f, "c"), 0);
    TS_CHECK_INTEQ(f.p.arena_size, 320);
  }
  unplan(&f);

  /* a free block at the arena's end grows instead of new space after it */
  f = plan("graph(%x0 : " F16 ",\n"
           "      %x1 : " F32 ",\n"
           "      %x2 : " F64 "):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %s : " F16 " = aten::relu(%x0)\n"
           "  %a : " F32 " = aten::relu(%x1)\n"
           "  %n1 : " F32 " = aten::relu(%a)\n"
           "  %c : " F64 " = aten::relu(%x2)\n"
           "  %n2 : " F64 " = aten::add(%c, %s, %one)\n"
           "  return (%n1, %n2)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(OFF(&f, "s"), 0);
    TS_CHECK_INTEQ(OFF(&f, "a"), 64);
    TS_CHECK_INTEQ(OFF(&f, "c"), 64);
    TS_CHECK_INTEQ(f.p.arena_size, 320);
  }
  unplan(&f);
}

static void test_alignment(void) {
  fixture f = plan("graph(%x : Tensor):\n"
                   "  %a : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  %b : Double(5, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  %c : Float(17, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  %d : Half(1, strides=[1], requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "  %e : Bool(requires_grad=0, device=cpu) = aten::relu(%x)\n"
                   "   = prim::Print(%a, %b, %c, %d, %e)\n"
                   "  return (%x)\n",
                   false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 5);
    TS_CHECK_INTEQ(NB(&f, "a"), 64);
    TS_CHECK_INTEQ(NB(&f, "b"), 64);
    TS_CHECK_INTEQ(NB(&f, "c"), 128);
    TS_CHECK_INTEQ(NB(&f, "d"), 64);
    TS_CHECK_INTEQ(NB(&f, "e"), 64);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int k = 0; k < 5; k++)
      TS_CHECK(OFF(&f, names[k]) >= 0 && OFF(&f, names[k]) % 64 == 0);
    TS_CHECK_INTEQ(f.p.arena_size, 6 * 64);
    TS_CHECK_INTEQ(f.p.total_bytes, 6 * 64);
  }
  unplan(&f);

  /* nothing to plan */
  f = plan("graph(%x : Tensor):\n"
           "  %n : Tensor = aten::relu(%x)\n"
           "  return (%n)\n",
           false);
  if (f.ok) {
    TS_CHECK_INTEQ(f.p.nplanned, 0);
    TS_CHECK_INTEQ(f.p.arena_size, 0);
    TS_CHECK_INTEQ(f.p.total_bytes, 0);
    for (uint32_t i = 0; i < f.p.nvalues; i++)
      TS_CHECK(f.p.offset[i] == -1 && f.p.nbytes[i] == 0);
  }
  unplan(&f);
  ts_cg_memplan_free(NULL);
}

/* ------------------------------------------------------- random graphs */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)((rng_state >> 33) % n);
}

/* Top-block position of every node (nested ones: their top node's). */
static void number_nodes(const ts_block *b, int64_t p, int64_t *pos) {
  pos[b->param->id] = p;
  pos[b->ret->id] = p;
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    pos[n->id] = p;
    for (uint32_t i = 0; i < n->nblocks; i++)
      number_nodes(n->blocks[i], p, pos);
  }
}

static void collect_values(const ts_block *b, const ts_value **all, uint32_t *n) {
  for (uint32_t i = 0; i < ts_block_ninputs(b); i++)
    all[(*n)++] = ts_block_input(b, i);
  for (const ts_node *m = ts_block_first(b); m != b->ret; m = m->next) {
    for (uint32_t i = 0; i < m->noutputs; i++)
      all[(*n)++] = m->outputs[i];
    for (uint32_t i = 0; i < m->nblocks; i++)
      collect_values(m->blocks[i], all, n);
  }
}

static int64_t last_use(const ts_value *v, const int64_t *pos) {
  int64_t last = pos[v->node->id];
  for (uint32_t u = 0; u < v->nuses; u++)
    if (pos[v->uses[u].user->id] > last)
      last = pos[v->uses[u].user->id];
  return last;
}

/* Checks a plan of g against lifetimes recomputed here: for each planned
 * value, the last use of every value of the graph the db says may alias
 * it. Planned values alive at once never overlap, except an output placed
 * on the input its node reads last (in place). Also: every value that
 * qualifies is planned. */
static bool check_plan(ts_graph *g, const ts_cg_memplan *p, bool inplace) {
  bool ok = true;
  ts_alias_db *db = ts_alias_db_new(g, NULL);
  int64_t *pos = malloc(g->next_node_id * sizeof *pos);
  const ts_value **all = malloc(g->next_value_id * sizeof *all);
  int64_t *start = calloc(g->next_value_id, sizeof *start), *end = calloc(g->next_value_id, sizeof *end);
  if (!TS_CHECK(db && pos && all && start && end))
    goto done;
  int64_t i = 0;
  for (const ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next, i++) {
    pos[n->id] = i;
    for (uint32_t k = 0; k < n->nblocks; k++)
      number_nodes(n->blocks[k], i, pos);
  }
  pos[g->block->param->id] = -1;
  pos[g->block->ret->id] = i;
  uint32_t nall = 0;
  collect_values(g->block, all, &nall);

  uint32_t nqual = 0, nplanned = 0;
  for (const ts_node *n = ts_block_first(g->block); n != g->block->ret; n = n->next)
    for (uint32_t k = 0; k < n->noutputs; k++) {
      const ts_value *v = n->outputs[k];
      bool qual = !n->nblocks && ts_cg_type_nbytes(v->type) > 0 && !ts_alias_escapes(db, v);
      for (uint32_t j = 0; j < n->ninputs && qual; j++)
        qual = !ts_alias_may_alias(db, v, n->inputs[j]);
      nqual += qual;
      if (p->offset[v->id] < 0)
        continue;
      nplanned++;
      ok &= TS_CHECK(qual);
      ok &= TS_CHECK(p->offset[v->id] % 64 == 0 && p->nbytes[v->id] % 64 == 0);
      ok &= TS_CHECK(p->nbytes[v->id] >= ts_cg_type_nbytes(v->type));
      ok &= TS_CHECK((uint64_t)p->offset[v->id] + p->nbytes[v->id] <= p->arena_size);
      start[v->id] = pos[n->id];
      end[v->id] = pos[n->id];
      for (uint32_t w = 0; w < nall; w++)
        if (ts_alias_may_alias(db, v, all[w]) && last_use(all[w], pos) > end[v->id])
          end[v->id] = last_use(all[w], pos);
    }
  ok &= TS_CHECK_INTEQ(nplanned, nqual);
  ok &= TS_CHECK_INTEQ(nplanned, p->nplanned);
  ok &= TS_CHECK(p->arena_size <= p->total_bytes);
  if (!inplace)
    ok &= TS_CHECK_INTEQ(p->ninplace, 0);

  for (uint32_t x = 0; x < nall; x++) {
    const ts_value *a = all[x];
    if (p->offset[a->id] < 0)
      continue;
    for (uint32_t y = x + 1; y < nall; y++) {
      const ts_value *b = all[y];
      if (p->offset[b->id] < 0)
        continue;
      bool live_together = start[a->id] <= end[b->id] && start[b->id] <= end[a->id];
      bool overlap = p->offset[a->id] < p->offset[b->id] + (int64_t)p->nbytes[b->id] &&
                     p->offset[b->id] < p->offset[a->id] + (int64_t)p->nbytes[a->id];
      if (!live_together || !overlap)
        continue;
      /* in place: b's node reads a last (or the other way round) */
      bool handed = false;
      const ts_value *first = start[a->id] <= start[b->id] ? a : b, *second = first == a ? b : a;
      if (inplace && p->offset[a->id] == p->offset[b->id] && end[first->id] == start[second->id])
        for (uint32_t j = 0; j < second->node->ninputs; j++)
          handed = handed || second->node->inputs[j] == first;
      if (!handed) {
        fprintf(stderr, "%%%s [%lld, %lld] at %lld and %%%s [%lld, %lld] at %lld overlap\n",
                a->name ? a->name : "?", (long long)start[a->id], (long long)end[a->id],
                (long long)p->offset[a->id], b->name ? b->name : "?", (long long)start[b->id],
                (long long)end[b->id], (long long)p->offset[b->id]);
        ok &= TS_CHECK(handed);
      }
    }
  }
done:
  ts_alias_db_free(db);
  free(pos);
  free(all);
  free(start);
  free(end);
  return ok;
}

/* A random straight-line graph: relu/add/mul on values of one of three
 * sizes, some transposes (views) and in-place relu_, a few outputs. */
static void random_graph(ts_buf *b, int nnodes) {
  static const int sizes[3] = {16, 32, 48};
  int cls[64 + 3];
  int nv = 0;
  ts_buf_puts(b, "graph(");
  for (int s = 0; s < 3; s++) {
    ts_buf_printf(b, "%s%%v%d : Float(%d, strides=[1], requires_grad=0, device=cpu)", s ? ",\n      " : "", nv,
                  sizes[s]);
    cls[nv++] = s;
  }
  ts_buf_puts(b, "):\n  %one : int = prim::Constant[value=1]()\n");
  for (int k = 0; k < nnodes && nv < 64 + 3; k++) {
    int s = (int)rnd(3);
    int pick[2];
    for (int j = 0; j < 2; j++) {
      int tries = 0;
      do
        pick[j] = (int)rnd((uint32_t)nv);
      while (cls[pick[j]] != s && ++tries < 100);
      if (cls[pick[j]] != s)
        pick[j] = s; /* the input of that size */
    }
    const char *ty = s == 0 ? "Float(16, strides=[1], requires_grad=0, device=cpu)"
                     : s == 1 ? "Float(32, strides=[1], requires_grad=0, device=cpu)"
                              : "Float(48, strides=[1], requires_grad=0, device=cpu)";
    uint32_t op = rnd(10);
    ts_buf_printf(b, "  %%v%d : %s = ", nv, ty);
    if (op < 3)
      ts_buf_printf(b, "aten::relu(%%v%d)\n", pick[0]);
    else if (op < 6)
      ts_buf_printf(b, "aten::add(%%v%d, %%v%d, %%one)\n", pick[0], pick[1]);
    else if (op < 8)
      ts_buf_printf(b, "aten::mul(%%v%d, %%v%d)\n", pick[0], pick[1]);
    else if (op < 9)
      ts_buf_printf(b, "aten::t(%%v%d)\n", pick[0]);
    else
      ts_buf_printf(b, "aten::relu_(%%v%d)\n", pick[0]);
    cls[nv++] = s;
  }
  int nout = 1 + (int)rnd(3);
  ts_buf_puts(b, "  return (");
  for (int k = 0; k < nout; k++)
    ts_buf_printf(b, "%s%%v%d", k ? ", " : "", 3 + (int)rnd((uint32_t)(nv - 3)));
  ts_buf_puts(b, ")\n");
}

static void test_random(void) {
  uint64_t reused = 0, total = 0;
  uint32_t inplace = 0;
  for (int k = 0; k < 200; k++) {
    rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
    ts_buf text = {0};
    random_graph(&text, 30);
    if (!TS_CHECK(!text.failed))
      break;
    ts_graph *g = parse(text.data);
    for (int mode = 0; g && mode < 2; mode++) {
      ts_cg_memplan p;
      inplace_log log = {true, 0};
      ts_diag d = {0};
      bool built = ts_cg_memplan_build(g, NULL, mode ? inplace_cb : NULL, &log, &p, &d);
      if (d.text.data)
        fprintf(stderr, "%s", d.text.data);
      ts_diag_free(&d);
      if (!TS_CHECK(built))
        continue;
      if (!check_plan(g, &p, mode == 1))
        fprintf(stderr, "random graph %d (in place %d):\n%s", k, mode, text.data);
      reused += p.total_bytes - p.arena_size;
      total += p.total_bytes;
      inplace += p.ninplace;
      ts_cg_memplan_free(&p);
    }
    ts_graph_free(g);
    ts_buf_free(&text);
  }
  /* the plans did reuse memory, and took buffers in place */
  TS_CHECK(reused > total / 4);
  TS_CHECK(inplace > 0);
}

int main(void) {
  test_type_nbytes();
  test_chain();
  test_inplace_rules();
  test_views();
  test_escapes();
  test_lists();
  test_control_flow();
  test_best_fit();
  test_alignment();
  test_random();
  return ts_test_finish();
}
