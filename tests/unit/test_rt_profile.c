/* tests/unit/test_rt_profile.c: runtime/profile.c's trace (tsaot-bench
 * --trace): with trace set, each outermost node run is one event, in run
 * order, with the outputs ts_rt_profile_trace_out adds; nested nodes are
 * not events; the detail names a fusion group's ops, the source line and
 * the output types; past TS_RT_PROF_MAX_EVENTS events are counted as
 * dropped; without trace no event is kept, while the per-node entries
 * (--profile) are the same either way. */
#include "runtime.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

static const char *graph_text =
    "graph(%x : Float(2, 3)):\n"
    "  %y : Float(2, 3) = aten::relu(%x) # code/__torch__/m.py:3:4\n"
    "  %z : Float(2, 3) = prim::FusionGroup_0(%y)\n"
    "  %n : int = aten::dim(%z)\n"
    "  return (%z)\n"
    "with prim::FusionGroup_0 = graph(%a : Float(2, 3)):\n"
    "  %b : Float(2, 3) = aten::neg(%a)\n"
    "  %o : Float(2, 3) = aten::sigmoid(%b) # code/__torch__/m.py:7:8\n"
    "  return (%o)\n";

/* One node run as the interpreter times it, its outputs added after. */
static void run_node(ts_rt_profile *p, const ts_node *n, const ts_iv *outs, int nout) {
  uint64_t t0 = ts_rt_now_ns();
  bool outer = ts_rt_profile_begin(p);
  ts_rt_profile_end(p, outer, n, t0, 0);
  for (int k = 0; k < nout; k++)
    ts_rt_profile_trace_out(p, &outs[k]);
}

static void detail_is(const ts_rt_profile *p, uint32_t i, const char *want) {
  ts_buf b = {0};
  ts_rt_profile_event_detail(p, i, &b);
  TS_CHECK_STREQ(b.data ? b.data : "", want);
  ts_buf_free(&b);
}

int main(void) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("profile.ir", graph_text, strlen(graph_text), &d);
  TS_CHECK(g != NULL);
  if (!g) {
    fputs(d.text.data ? d.text.data : "parse failed\n", stderr);
    return ts_test_finish();
  }
  const ts_node *relu = ts_block_first(g->block), *group = relu->next, *dim = group->next;
  TS_CHECK_STREQ(group->kind_name, "prim::FusionGroup");
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  int64_t sizes[2] = {2, 3};
  ts_rt_tensor *t = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, sizes, true);
  TS_CHECK(t != NULL);
  ts_iv tv = ts_iv_tensor(t), iv = ts_iv_int(2);

  ts_rt_profile p = {0};
  p.trace = true;
  ts_rt_profile_clear(&p);
  run_node(&p, relu, &tv, 1);
  /* the group, with a node inside it (an interpreted group): one event */
  uint64_t t0 = ts_rt_now_ns();
  bool outer = ts_rt_profile_begin(&p);
  run_node(&p, dim, &iv, 1); /* nested: neither an event nor its outputs */
  ts_rt_profile_end(&p, outer, group, t0, 3);
  ts_rt_profile_trace_out(&p, &tv);
  ts_iv two[2] = {iv, ts_iv_none()};
  run_node(&p, dim, two, 2);
  run_node(&p, relu, NULL, 0);

  TS_CHECK_INTEQ(p.nevents, 4);
  TS_CHECK_INTEQ(p.dropped, 0);
  TS_CHECK_INTEQ(p.nentries, 3); /* relu, the group, dim: per node as --profile */
  TS_CHECK_INTEQ(p.entries[0].calls, 2);
  if (p.nevents == 4) {
    TS_CHECK(p.events[0].node == relu && p.events[1].node == group && p.events[2].node == dim);
    TS_CHECK_INTEQ(p.events[1].native, 3);
    for (uint32_t i = 1; i < 4; i++)
      TS_CHECK(p.events[i].start >= p.events[i - 1].start + p.events[i - 1].ns);
    detail_is(&p, 0, "\tcode/__torch__/m.py:3\tFloat(2, 3)");
    /* the group: its ops, the first located op's line */
    detail_is(&p, 1, "neg+sigmoid\tcode/__torch__/m.py:7\tFloat(2, 3)");
    detail_is(&p, 2, "\t\tint; NoneType");
    detail_is(&p, 3, "\tcode/__torch__/m.py:3\t");
  }

  /* cleared: from nothing again; without trace, entries but no events */
  p.trace = false;
  ts_rt_profile_clear(&p);
  run_node(&p, relu, &tv, 1);
  TS_CHECK_INTEQ(p.nevents, 0);
  TS_CHECK_INTEQ(p.nentries, 1);

  /* the bound: events past it are counted, not kept */
  p.trace = true;
  ts_rt_profile_clear(&p);
  for (uint32_t i = 0; i < TS_RT_PROF_MAX_EVENTS + 5; i++)
    run_node(&p, dim, &iv, 1);
  TS_CHECK_INTEQ(p.nevents, TS_RT_PROF_MAX_EVENTS);
  TS_CHECK_INTEQ(p.dropped, 5);
  TS_CHECK_INTEQ(p.entries[0].calls, TS_RT_PROF_MAX_EVENTS + 5);
  detail_is(&p, TS_RT_PROF_MAX_EVENTS - 1, "\t\tint");

  ts_rt_profile_free(&p);
  ts_rt_tensor_release(t);
  ts_rt_ctx_free(&ctx);
  ts_graph_free(g);
  ts_diag_free(&d);
  return ts_test_finish();
}
