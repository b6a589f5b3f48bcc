/* tests/unit/test_limits.c: the compile-time budgets, each just under its
 * limit (it passes) and just over (it fails or holds back, with a message
 * naming the limit): the process-wide arena total (ir/arena.c, tsaot's
 * --memory-limit), the unroll pass's node budget (passes/unroll.c), the
 * pipeline's deadline (passes/pipeline.c, tsaot's --time-limit), the
 * element count of views (runtime/tensor.c). The inline
 * pass's graph-size budget is tested with the inliner in test_clone.c; the
 * archive's overlap check in test_archive.c; hostile files end to end in
 * tests/hostile_cli.py. */
#include "passes.h"
#include "runtime.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("test", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

/* Runs first, while this process's arenas hold nothing else. */
static void test_arena_total(void) {
  TS_CHECK(!ts_arena_total_limit_hit());
  ts_arena_set_total_limit(1 << 20);
  ts_arena a;
  ts_arena_init(&a, 0);
  /* two 256 KiB blocks (a chunk each, with its header) fit in 1 MiB */
  TS_CHECK(ts_arena_alloc(&a, 256 << 10) != NULL);
  TS_CHECK(ts_arena_alloc(&a, 256 << 10) != NULL);
  TS_CHECK(!ts_arena_total_limit_hit());
  /* 600 KiB more do not, in this arena or another */
  ts_arena b;
  ts_arena_init(&b, 0);
  TS_CHECK(ts_arena_alloc(&b, 600 << 10) == NULL);
  TS_CHECK(b.failed && ts_arena_total_limit_hit());
  ts_arena_release(&b);
  /* released chunks count no more */
  ts_arena_release(&a);
  ts_arena_init(&a, 0);
  TS_CHECK(ts_arena_alloc(&a, 900 << 10) != NULL);
  ts_arena_release(&a);
  ts_arena_set_total_limit(0);
  TS_CHECK(!ts_arena_total_limit_hit());
  ts_arena_init(&a, 0);
  TS_CHECK(ts_arena_alloc(&a, 4 << 20) != NULL);
  ts_arena_release(&a);
}

static const char loop3[] = "graph(%x : Tensor):\n"
                            "  %three : int = prim::Constant[value=3]()\n"
                            "  %true : bool = prim::Constant[value=1]()\n"
                            "  %y : Tensor = prim::Loop(%three, %true, %x)\n"
                            "    block0(%i : int, %a : Tensor):\n"
                            "      %b : Tensor = aten::neg(%a)\n"
                            "      -> (%true, %b)\n"
                            "  return (%y)\n";

/* Three copies of a one-node body, each with its iteration constant: six
 * new nodes. A budget of six unrolls; five leaves the loop, and is no
 * error. */
static void test_unroll_budget(void) {
  for (uint64_t budget = 5; budget <= 6; budget++) {
    ts_graph *g = parse(loop3);
    if (!g)
      return;
    ts_diag d = {0};
    TS_CHECK(ts_pass_unroll_limited(g, budget, &d));
    TS_CHECK_INTEQ(d.errors, 0);
    TS_CHECK_INTEQ(ts_graph_count_kind(g, TS_K_prim_Loop), budget == 6 ? 0 : 1);
    TS_CHECK_INTEQ(ts_graph_count_kind(g, TS_K_aten_neg), budget == 6 ? 3 : 1);
    TS_CHECK(ts_graph_verify(g, &d));
    ts_diag_free(&d);
    ts_graph_free(g);
  }
}

/* The deadline is checked after each pass of a list. */
static void test_deadline(void) {
  ts_diag d = {0};
  TS_CHECK(!ts_pass_past_deadline(0, 600, "nowhere", &d));
  TS_CHECK(!ts_pass_past_deadline(ts_pass_now() + 100, 600, "nowhere", &d));
  TS_CHECK_INTEQ(d.errors, 0);
  ts_graph *g = parse(loop3);
  if (!g)
    return;
  ts_pass_env env = {.d = &d, .deadline = ts_pass_now() + 600, .time_limit = 600};
  TS_CHECK(ts_pass_run_list(g, "dce,cse", &env));
  TS_CHECK_INTEQ(d.errors, 0);
  env.deadline = ts_pass_now() - 1;
  env.time_limit = 0.5;
  TS_CHECK(!ts_pass_run_list(g, "dce,cse", &env));
  TS_CHECK_INTEQ(d.errors, 1);
  if (!TS_CHECK(d.text.data && strcmp(d.text.data, "error: compilation passed its time limit of 0.5 s in pass 'dce' "
                                                   "(raise it with --time-limit)\n") == 0))
    fprintf(stderr, "  got: %s", d.text.data ? d.text.data : "(nothing)\n");
  ts_diag_free(&d);
  ts_graph_free(g);
}

/* Element counts: a view (expand's, which allocates nothing) whose sizes
 * multiply past int64 is refused as ATen refuses it; 2^62 elements of
 * stride 0 are fine. Sizes from .npy headers and pickles are checked in
 * test_rt_npy.c and test_pickle.c. */
static void test_view_numel(void) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  ts_rt_tensor *one = ts_rt_tensor_new(&c, TS_DT_FLOAT32, 1, (const int64_t[]){1}, true);
  if (!TS_CHECK(one != NULL))
    return;
  const int64_t zero[3] = {0, 0, 0};
  ts_rt_tensor *v = ts_rt_tensor_view(&c, one, 0, 3, (const int64_t[]){1 << 30, 1 << 30, 4}, zero);
  TS_CHECK(v != NULL && !c.failed);
  ts_rt_tensor_release(v);
  v = ts_rt_tensor_view(&c, one, 0, 3, (const int64_t[]){1 << 30, 1 << 30, 8}, zero);
  TS_CHECK(v == NULL && c.failed && c.err.data && strcmp(c.err.data, "numel: integer multiplication overflow") == 0);
  ts_rt_clear_error(&c);
  /* an overflow before a 0 size counts, as in PyTorch:
   * torch.zeros(1).expand(2**62, 2**62, 0) raises it; expand(0, 2**62, 2**62) not */
  v = ts_rt_tensor_view(&c, one, 0, 3, (const int64_t[]){(int64_t)1 << 62, (int64_t)1 << 62, 0}, zero);
  TS_CHECK(v == NULL && c.failed);
  ts_rt_clear_error(&c);
  v = ts_rt_tensor_view(&c, one, 0, 3, (const int64_t[]){0, (int64_t)1 << 62, (int64_t)1 << 62}, zero);
  TS_CHECK(v != NULL && !c.failed);
  ts_rt_tensor_release(v);
  ts_rt_tensor_release(one);
  ts_rt_ctx_free(&c);
}

int main(void) {
  test_arena_total();
  TS_CHECK(ts_ops_init(NULL));
  test_unroll_budget();
  test_deadline();
  test_view_numel();
  return ts_test_finish();
}
