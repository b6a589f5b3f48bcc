/* tests/unit/test_pass_alias.c: the alias db (passes/alias_analysis.c) on
 * graphs read from text: views, in-place writes, lists, If, Loop, the
 * wildcard set, escaping values and ts_alias_can_move_before. The answers
 * are the ones PyTorch's AliasDb gives for the same graphs, except where the
 * file comment of alias_analysis.c says it is more conservative. */
#include "passes.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

typedef struct fixture {
  ts_graph *g;
  ts_alias_db *db;
} fixture;

static fixture load(const char *text) {
  fixture f = {0};
  ts_diag d = {0};
  f.g = ts_graph_parse("test", text, strlen(text), &d);
  if (f.g && !ts_graph_verify(f.g, &d)) {
    ts_graph_free(f.g);
    f.g = NULL;
  }
  if (f.g)
    f.db = ts_alias_db_new(f.g, &d);
  if (d.text.data)
    fprintf(stderr, "%s", d.text.data);
  ts_diag_free(&d);
  TS_CHECK(f.g && f.db);
  return f;
}

static void unload(fixture *f) {
  ts_alias_db_free(f->db);
  ts_graph_free(f->g);
}

static const ts_value *V(const fixture *f, const char *name) {
  const ts_value *v = ts_graph_find_value(f->g, name, strlen(name));
  if (!v)
    fprintf(stderr, "no value %%%s\n", name);
  return v;
}

static const ts_node *N(const fixture *f, const char *name) {
  const ts_value *v = V(f, name);
  return v ? v->node : NULL;
}

#define ALIAS(f, a, b) ts_alias_may_alias((f)->db, V(f, a), V(f, b))

/* Views point to their base; fresh results alias nothing; in-place ops write
 * their self and return it. */
static void test_views_and_writes(void) {
  fixture f = load("graph(%x : Tensor,\n"
                   "      %s : int[]):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %a : Tensor = aten::relu(%x)\n"
                   "  %b : Tensor = aten::neg(%x)\n"
                   "  %v : Tensor = aten::view(%a, %s)\n"
                   "  %t : Tensor = aten::t(%v)\n"
                   "  %w : Tensor = aten::add_(%b, %a, %one)\n"
                   "  %c : Tensor = aten::mul(%a, %b)\n"
                   "  %sz : int = aten::dim(%c)\n"
                   "  return (%c, %t, %w)\n");
  if (!f.db)
    return;
  TS_CHECK(ALIAS(&f, "v", "a"));
  TS_CHECK(ALIAS(&f, "t", "a"));
  TS_CHECK(ALIAS(&f, "t", "v"));
  TS_CHECK(!ALIAS(&f, "a", "b"));
  TS_CHECK(!ALIAS(&f, "c", "a"));
  TS_CHECK(ALIAS(&f, "w", "b"));
  TS_CHECK(!ALIAS(&f, "w", "a"));
  TS_CHECK(!ALIAS(&f, "a", "x")); /* relu's result is fresh */
  TS_CHECK(ALIAS(&f, "a", "a"));
  /* immutable values never alias */
  TS_CHECK(!ALIAS(&f, "sz", "sz"));
  TS_CHECK(!ALIAS(&f, "one", "a"));

  const ts_node *add = N(&f, "w");
  TS_CHECK(ts_alias_node_writes_to(f.db, add, V(&f, "b")));
  TS_CHECK(ts_alias_node_writes_to(f.db, add, V(&f, "w")));
  TS_CHECK(!ts_alias_node_writes_to(f.db, add, V(&f, "a")));
  TS_CHECK(!ts_alias_node_writes_to(f.db, add, V(&f, "one")));
  TS_CHECK(ts_alias_node_has_writes(f.db, add));
  TS_CHECK(!ts_alias_node_has_writes(f.db, N(&f, "a")));
  TS_CHECK(!ts_alias_node_has_writes(f.db, N(&f, "v")));

  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "b")));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "w")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "a")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "v")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "c")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "x")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "one")));

  /* graph inputs and outputs escape, and their views; fresh locals not */
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "x")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "s")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "c")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "a"))); /* %t, a view of it, is returned */
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "v")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "b"))); /* %w is %b */
  TS_CHECK(!ts_alias_escapes(f.db, V(&f, "one")));
  unload(&f);

  f = load("graph(%x : Tensor):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %a : Tensor = aten::relu(%x)\n"
           "  %b : Tensor = aten::sigmoid(%a)\n"
           "  return (%b)\n");
  if (!f.db)
    return;
  TS_CHECK(!ts_alias_escapes(f.db, V(&f, "a")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "b")));
  unload(&f);
}

/* Graph inputs are wildcards: they may alias each other, and writing one
 * may write the others. Lists put their elements in the wildcard set;
 * extracted elements are wildcards. */
static void test_wildcards_and_lists(void) {
  fixture f = load("graph(%x : Tensor,\n"
           "      %y : Tensor):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %zero : int = prim::Constant[value=0]()\n"
           "  %a : Tensor = aten::relu(%x)\n"
           "  %b : Tensor = aten::neg(%x)\n"
           "  %e : Tensor = aten::exp(%x)\n"
           "  %p : Tensor = aten::sin(%x)\n"
           "  %q : Tensor = aten::cos(%x)\n"
           "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
           "  %g : Tensor = aten::__getitem__(%l, %zero)\n"
           "  %w : Tensor = aten::add_(%y, %one, %one)\n"
           "  %len : int = aten::len(%l)\n"
           "  %l2 : Tensor[] = prim::ListConstruct(%p, %q)\n"
           "  %c : Tensor = aten::cat(%l2, %zero)\n"
           "  return (%g, %len, %e, %c)\n");
  if (!f.db)
    return;
  TS_CHECK(ALIAS(&f, "x", "y"));
  TS_CHECK(ts_alias_node_writes_to(f.db, N(&f, "w"), V(&f, "x")));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "x")));
  /* list elements joined the wildcard set */
  TS_CHECK(ALIAS(&f, "a", "x"));
  TS_CHECK(ALIAS(&f, "a", "b"));
  TS_CHECK(ALIAS(&f, "g", "a"));
  TS_CHECK(ALIAS(&f, "l", "a")); /* the list holds %a */
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "a")));
  TS_CHECK(ts_alias_escapes(f.db, V(&f, "a")));
  /* %e is fresh and stays out of it */
  TS_CHECK(!ALIAS(&f, "e", "x"));
  TS_CHECK(!ALIAS(&f, "e", "a"));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "e")));
  /* a list read once by aten::cat keeps its elements precise */
  TS_CHECK(ALIAS(&f, "l2", "p"));
  TS_CHECK(!ALIAS(&f, "p", "q"));
  TS_CHECK(!ALIAS(&f, "p", "x"));
  TS_CHECK(!ts_alias_escapes(f.db, V(&f, "p")));
  TS_CHECK(!ALIAS(&f, "c", "p"));
  unload(&f);

  /* append writes the list; the appended value joins the wildcard set */
  f = load("graph(%x : Tensor):\n"
           "  %a : Tensor = aten::relu(%x)\n"
           "  %b : Tensor = aten::neg(%x)\n"
           "  %l : Tensor[] = prim::ListConstruct()\n"
           "  %l1 : Tensor[] = aten::append(%l, %a)\n"
           "  %n : int = aten::len(%l)\n"
           "  return (%n, %b)\n");
  if (!f.db)
    return;
  TS_CHECK(ts_alias_node_writes_to(f.db, N(&f, "l1"), V(&f, "l")));
  TS_CHECK(ALIAS(&f, "l1", "l"));
  TS_CHECK(ALIAS(&f, "a", "x"));
  TS_CHECK(!ALIAS(&f, "b", "x"));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "l")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "b")));
  unload(&f);
}

/* If outputs may be either branch's value; loop-carried values may be the
 * initial value or any iteration's. Unknown ops are conservative. */
static void test_control_flow(void) {
  fixture f = load("graph(%x : Tensor,\n"
                   "      %c : bool,\n"
                   "      %n : int):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %a : Tensor = aten::relu(%x)\n"
                   "  %b : Tensor = aten::neg(%x)\n"
                   "  %d : Tensor = aten::exp(%x)\n"
                   "  %r : Tensor = prim::If(%c)\n"
                   "    block0():\n"
                   "      -> (%a)\n"
                   "    block1():\n"
                   "      %bv : Tensor = aten::t(%b)\n"
                   "      -> (%bv)\n"
                   "  %s : Tensor = prim::If(%c)\n"
                   "    block0():\n"
                   "      %w : Tensor = aten::mul_(%d, %one)\n"
                   "      -> (%a)\n"
                   "    block1():\n"
                   "      -> (%a)\n"
                   "  %i0 : Tensor = aten::sigmoid(%x)\n"
                   "  %f : Tensor = aten::tanh(%x)\n"
                   "  %lo : Tensor = prim::Loop(%n, %c, %i0)\n"
                   "    block0(%it : int, %acc : Tensor):\n"
                   "      %nxt : Tensor = aten::mul(%acc, %f)\n"
                   "      -> (%c, %nxt)\n"
                   "  %u : Tensor = my::op(%f)\n"
                   "  return (%r, %s, %lo, %u)\n");
  if (!f.db)
    return;
  TS_CHECK(ALIAS(&f, "r", "a"));
  TS_CHECK(ALIAS(&f, "r", "b"));
  TS_CHECK(!ALIAS(&f, "a", "b"));
  TS_CHECK(!ALIAS(&f, "r", "d"));
  /* a write in a nested block belongs to the node holding it */
  const ts_node *s = N(&f, "s");
  TS_CHECK(ts_alias_node_writes_to(f.db, s, V(&f, "d")));
  TS_CHECK(!ts_alias_node_writes_to(f.db, s, V(&f, "a")));
  TS_CHECK(ts_alias_node_has_writes(f.db, s));
  TS_CHECK(!ts_alias_node_has_writes(f.db, N(&f, "r")));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "d")));
  /* the carried value is the initial one or the body's result */
  TS_CHECK(ALIAS(&f, "acc", "i0"));
  TS_CHECK(ALIAS(&f, "acc", "nxt"));
  TS_CHECK(ALIAS(&f, "lo", "nxt"));
  TS_CHECK(!ALIAS(&f, "lo", "i0"));
  TS_CHECK(!ALIAS(&f, "nxt", "f"));
  /* my::op is unknown: it may write %f, which joins the wildcard set */
  TS_CHECK(ts_alias_node_writes_to(f.db, N(&f, "u"), V(&f, "f")));
  TS_CHECK(ALIAS(&f, "f", "x"));
  TS_CHECK(ALIAS(&f, "u", "x"));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "x")));
  unload(&f);

  /* a carried value whose body result aliases it: a cycle of pointers */
  f = load("graph(%x : Tensor,\n"
           "      %c : bool,\n"
           "      %n : int):\n"
           "  %one : int = prim::Constant[value=1]()\n"
           "  %i0 : Tensor = aten::sigmoid(%x)\n"
           "  %other : Tensor = aten::tanh(%x)\n"
           "  %lo : Tensor = prim::Loop(%n, %c, %i0)\n"
           "    block0(%it : int, %acc : Tensor):\n"
           "      %nxt : Tensor = aten::add_(%acc, %one, %one)\n"
           "      -> (%c, %nxt)\n"
           "  return (%lo, %other)\n");
  if (!f.db)
    return;
  TS_CHECK(ALIAS(&f, "lo", "i0"));
  TS_CHECK(ALIAS(&f, "acc", "nxt"));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "i0")));
  TS_CHECK(ts_alias_node_has_writes(f.db, N(&f, "lo")));
  TS_CHECK(!ALIAS(&f, "lo", "other"));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "other")));
  unload(&f);
}

/* Reordering: data dependencies, read/write conflicts, side effects. */
static void test_can_move(void) {
  fixture f = load("graph(%x : Tensor):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %a : Tensor = aten::relu(%x)\n"
                   "  %b : Tensor = aten::neg(%x)\n"
                   "  %ra : Tensor = aten::sigmoid(%a)\n"
                   "  %wb : Tensor = aten::add_(%b, %one, %one)\n"
                   "  %rb : Tensor = aten::exp(%b)\n"
                   "  %s : str = prim::Constant[value=\"hi\"]()\n"
                   "   = prim::Print(%s)\n"
                   "  %z : Tensor = aten::tanh(%a)\n"
                   "  return (%ra, %rb, %z, %wb)\n");
  if (!f.db)
    return;
  const ts_node *a = N(&f, "a"), *b = N(&f, "b"), *ra = N(&f, "ra"), *wb = N(&f, "wb"), *rb = N(&f, "rb"),
                *z = N(&f, "z"), *print = N(&f, "s")->next;
  TS_CHECK(ts_node_is(print, TS_K_prim_Print));
  /* up: past nodes it does not depend on */
  TS_CHECK(ts_alias_can_move_before(f.db, b, a));
  TS_CHECK(ts_alias_can_move_before(f.db, a, a));
  TS_CHECK(ts_alias_can_move_before(f.db, ra, b));
  /* not before its input's definition */
  TS_CHECK(!ts_alias_can_move_before(f.db, ra, a));
  /* not a read of %b before the write to it, nor the write before a read */
  TS_CHECK(!ts_alias_can_move_before(f.db, rb, wb));
  TS_CHECK(!ts_alias_can_move_before(f.db, rb, ra));
  /* a read of unrelated memory passes the write */
  TS_CHECK(ts_alias_can_move_before(f.db, wb, ra));
  /* down: a node whose output is used in between cannot pass the use */
  TS_CHECK(!ts_alias_can_move_before(f.db, b, rb));
  TS_CHECK(ts_alias_can_move_before(f.db, ra, rb));
  TS_CHECK(!ts_alias_can_move_before(f.db, wb, z)); /* %rb reads what it writes */
  /* never across a side effect, and a side effect never moves */
  TS_CHECK(!ts_alias_can_move_before(f.db, z, print));
  TS_CHECK(ts_alias_can_move_before(f.db, z, print->next));
  TS_CHECK(!ts_alias_can_move_before(f.db, z, N(&f, "s")));
  TS_CHECK(!ts_alias_can_move_before(f.db, print, N(&f, "s")));
  /* to the end of the block */
  TS_CHECK(ts_alias_can_move_before(f.db, z, f.g->block->ret));
  TS_CHECK(!ts_alias_can_move_before(f.db, ra, f.g->block->ret));
  unload(&f);

  /* different blocks never */
  f = load("graph(%x : Tensor,\n"
           "      %c : bool):\n"
           "  %a : Tensor = aten::relu(%x)\n"
           "  %r : Tensor = prim::If(%c)\n"
           "    block0():\n"
           "      %in : Tensor = aten::neg(%x)\n"
           "      -> (%in)\n"
           "    block1():\n"
           "      -> (%a)\n"
           "  return (%r)\n");
  if (!f.db)
    return;
  TS_CHECK(!ts_alias_can_move_before(f.db, N(&f, "in"), N(&f, "a")));
  TS_CHECK(!ts_alias_can_move_before(f.db, N(&f, "r"), N(&f, "a")));
  TS_CHECK(ts_alias_can_move_before(f.db, N(&f, "a"), N(&f, "r")));
  unload(&f);
}

/* batch_norm writes its running stats only in training; SetAttr writes the
 * object; GetAttr gives wildcards; CallMethod is conservative. */
static void test_special_cases(void) {
  fixture f = load("graph(%self : __torch__.M,\n"
                   "      %x : Tensor):\n"
                   "  %f : bool = prim::Constant[value=0]()\n"
                   "  %t : bool = prim::Constant[value=1]()\n"
                   "  %m : float = prim::Constant[value=0.1]()\n"
                   "  %e : float = prim::Constant[value=1e-05]()\n"
                   "  %w : Tensor = prim::GetAttr[name=\"w\"](%self)\n"
                   "  %rm : Tensor = aten::relu(%x)\n"
                   "  %rv : Tensor = aten::exp(%x)\n"
                   "  %rm2 : Tensor = aten::neg(%x)\n"
                   "  %rv2 : Tensor = aten::sin(%x)\n"
                   "  %y : Tensor = aten::batch_norm(%x, %w, %w, %rm, %rv, %f, %m, %e, %t)\n"
                   "  %z : Tensor = aten::batch_norm(%x, %w, %w, %rm2, %rv2, %t, %m, %e, %t)\n"
                   "   = prim::SetAttr[name=\"w\"](%self, %y)\n"
                   "  return (%z)\n");
  if (!f.db)
    return;
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "rm")));
  TS_CHECK(!ts_alias_has_writers(f.db, V(&f, "rv")));
  TS_CHECK(ts_alias_has_writers(f.db, V(&f, "rm2")));
  TS_CHECK(ts_alias_node_writes_to(f.db, N(&f, "z"), V(&f, "rv2")));
  TS_CHECK(!ts_alias_node_writes_to(f.db, N(&f, "z"), V(&f, "z")));
  TS_CHECK(ALIAS(&f, "w", "x"));
  TS_CHECK(ALIAS(&f, "y", "x")); /* set as an attribute: a wildcard */
  TS_CHECK(!ALIAS(&f, "z", "x"));
  TS_CHECK(ts_alias_node_writes_to(f.db, N(&f, "z")->next, V(&f, "self")));
  unload(&f);
}

/* A fusion group's outputs are what its subgraph returns: here a fresh sum
 * and its first input passed through. */
static void test_fusion_group(void) {
  fixture f = load("graph(%x : Tensor,\n"
                   "      %y : Tensor):\n"
                   "  %a : Tensor = aten::neg(%x)\n"
                   "  %f : Tensor, %g : Tensor = prim::FusionGroup_0(%a, %y)\n"
                   "  %h : Tensor = aten::relu(%g)\n"
                   "  return (%h, %f)\n"
                   "with prim::FusionGroup_0 = graph(%p : Tensor,\n"
                   "      %q : Tensor):\n"
                   "  %one : int = prim::Constant[value=1]()\n"
                   "  %r : Tensor = aten::add(%p, %q, %one)\n"
                   "  return (%r, %p)\n");
  if (!f.db)
    return;
  TS_CHECK(ALIAS(&f, "g", "a"));
  TS_CHECK(!ALIAS(&f, "f", "a"));
  TS_CHECK(!ALIAS(&f, "f", "y"));
  TS_CHECK(!ts_alias_node_has_writes(f.db, N(&f, "f")));
  TS_CHECK(!ts_alias_can_move_before(f.db, N(&f, "h"), N(&f, "f")));
  unload(&f);
}

int main(void) {
  if (!TS_CHECK(ts_ops_init(NULL)))
    return ts_test_finish();
  test_views_and_writes();
  test_wildcards_and_lists();
  test_control_flow();
  test_can_move();
  test_special_cases();
  test_fusion_group();
  return ts_test_finish();
}
