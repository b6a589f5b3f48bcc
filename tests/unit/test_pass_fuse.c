/* tests/unit/test_pass_fuse.c: passes/fuse.c and prim::FusionGroup in the
 * interpreter (runtime/hosted/interp.c).
 *
 * Each graph below is run twice in the interpreter on the same inputs: as
 * read, and after ts_pass_fuse. A group runs the kernels of the ops it holds
 * in their order, so the outputs must be the same bits; the test also
 * checks how many groups the pass made (a pass that made none would compare
 * equal too). Then groups written by hand: one nested in another's subgraph,
 * and malformed ones, which the interpreter refuses with a message. */
#include "passes.h"
#include "runtime.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL) || !TS_CHECK(ts_graph_verify(g, &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

/* A float32 tensor of the given sizes with values from a small LCG in
 * [-2, 2) (`seed` picks the sequence). */
static ts_rt_tensor *make(ts_rt_ctx *ctx, int32_t ndim, const int64_t *sizes, unsigned seed) {
  ts_rt_tensor *t = ts_rt_tensor_new(ctx, TS_DT_FLOAT32, ndim, sizes, false);
  if (!t)
    return NULL;
  float *p = ts_rt_tensor_data(t);
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < ts_rt_tensor_numel(t); i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)((s >> 8) & 0xffff) / 16384.0f - 2.0f;
  }
  return t;
}

/* Whether two outputs are the same: tensors with equal sizes, dtype and
 * bytes (read in order), or equal scalars. */
static bool same_iv(ts_rt_ctx *ctx, ts_iv a, ts_iv b) {
  if (a.tag != b.tag)
    return false;
  if (a.tag != TS_IV_TENSOR)
    return ts_iv_equal(a, b);
  const ts_rt_tensor *x = a.u.t, *y = b.u.t;
  if (x->dtype != y->dtype || x->ndim != y->ndim)
    return false;
  for (int32_t i = 0; i < x->ndim; i++)
    if (x->sizes[i] != y->sizes[i])
      return false;
  ts_rt_tensor *cx = ts_rt_tensor_contiguous(ctx, (ts_rt_tensor *)x);
  ts_rt_tensor *cy = ts_rt_tensor_contiguous(ctx, (ts_rt_tensor *)y);
  bool ok = cx && cy &&
            memcmp(ts_rt_tensor_data(cx), ts_rt_tensor_data(cy),
                   (size_t)ts_rt_tensor_numel(cx) * ts_dtype_size((ts_dtype)cx->dtype)) == 0;
  ts_rt_tensor_release(cx);
  ts_rt_tensor_release(cy);
  return ok;
}

/* Runs g on args; the outputs go to ret (noutputs of them). */
static bool run(ts_rt_ctx *ctx, ts_graph *g, const ts_iv *args, uint32_t nargs, ts_iv *ret) {
  ts_rt_interp *ip = ts_rt_interp_new(NULL);
  ts_buf where = {0};
  bool ok = ip && ts_rt_interp_run(ip, ctx, g, args, nargs, ret, &where);
  if (!ok)
    fprintf(stderr, "run failed: %s\n", where.data ? where.data : ctx->err.data ? ctx->err.data : "?");
  ts_buf_free(&where);
  ts_rt_interp_free(ip);
  return ok;
}

/* The sizes of graph input i from its refined type, or {3, 4}; scalars
 * (float inputs) get 0.75. */
static ts_iv make_arg(ts_rt_ctx *ctx, const ts_value *v, unsigned seed) {
  if (v->type->kind == TS_TY_FLOAT)
    return ts_iv_double(0.75);
  int64_t sizes[8] = {3, 4};
  int32_t nd = 2;
  const ts_tensor_info *ti = v->type->tensor;
  if (ti && ti->rank >= 0 && ti->rank <= 8 && ti->sizes) {
    nd = ti->rank;
    for (int32_t i = 0; i < nd; i++)
      sizes[i] = ti->sizes[i];
  }
  ts_rt_tensor *t = make(ctx, nd, sizes, seed);
  return t ? ts_iv_tensor(t) : ts_iv_none();
}

/* Fuses a copy of the graph in `text`, expects `groups` groups, and
 * compares the runs. */
static void check_fused(const char *name, const char *text, uint32_t groups) {
  ts_graph *g = parse(text);
  ts_graph *f = g ? ts_graph_copy(g) : NULL;
  ts_diag d = {0};
  if (!TS_CHECK(f != NULL) || !TS_CHECK(ts_pass_fuse(f, &d)) || !TS_CHECK(ts_graph_verify(f, &d))) {
    fprintf(stderr, "%s: %s", name, d.text.data ? d.text.data : "\n");
    goto out;
  }
  if (!TS_CHECK_INTEQ(ts_graph_count_kind(f, TS_K_prim_FusionGroup), groups)) {
    ts_buf b = {0};
    ts_graph_print(&b, f);
    fprintf(stderr, "%s:\n%s", name, b.data ? b.data : "");
    ts_buf_free(&b);
  }
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  uint32_t nin = ts_block_ninputs(g->block), nout = ts_block_noutputs(g->block);
  ts_iv args[8], args2[8], r1[8], r2[8];
  if (!TS_CHECK(nin <= 8 && nout <= 8)) {
    ts_rt_ctx_free(&ctx);
    goto out;
  }
  /* each run gets its own inputs: a graph may write to them */
  for (uint32_t i = 0; i < nin; i++) {
    args[i] = make_arg(&ctx, ts_block_input(g->block, i), i + 1);
    args2[i] = make_arg(&ctx, ts_block_input(g->block, i), i + 1);
  }
  bool ok1 = run(&ctx, g, args, nin, r1);
  bool ok2 = ok1 && run(&ctx, f, args2, nin, r2);
  if (TS_CHECK(ok1) && TS_CHECK(ok2)) {
    for (uint32_t i = 0; i < nout; i++) {
      if (!TS_CHECK(same_iv(&ctx, r1[i], r2[i])))
        fprintf(stderr, "%s: output %u differs\n", name, (unsigned)i);
      ts_iv_release(r1[i]);
      ts_iv_release(r2[i]);
    }
  } else if (ok1) {
    for (uint32_t i = 0; i < nout; i++)
      ts_iv_release(r1[i]);
  }
  for (uint32_t i = 0; i < nin; i++) {
    ts_iv_release(args[i]);
    ts_iv_release(args2[i]);
  }
  ts_rt_ctx_free(&ctx);
out:
  ts_diag_free(&d);
  ts_graph_free(f);
  ts_graph_free(g);
}

static void test_fused_runs(void) {
  /* a chain with broadcasting, scalar constants and a float input */
  check_fused("chain",
              "graph(%x : Float(3, 4),\n"
              "      %b : Float(4),\n"
              "      %s : float):\n"
              "  %one : int = prim::Constant[value=1]()\n"
              "  %half : float = prim::Constant[value=0.5]()\n"
              "  %a : Tensor = aten::add(%x, %b, %one)\n"
              "  %c : Tensor = aten::mul(%a, %half)\n"
              "  %d : Tensor = aten::sub(%c, %s, %one)\n"
              "  %e : Tensor = aten::sigmoid(%d)\n"
              "  %f : Tensor = aten::clamp(%e, %half, %s)\n"
              "  return (%f)\n",
              1);
  /* outputs used after the group, comparisons and where */
  check_fused("multi",
              "graph(%x : Float(3, 4),\n"
              "      %y : Float(3, 4)):\n"
              "  %zero : int = prim::Constant[value=0]()\n"
              "  %a : Tensor = aten::tanh(%x)\n"
              "  %m : Tensor = aten::gt(%a, %zero)\n"
              "  %w : Tensor = aten::where(%m, %a, %y)\n"
              "  %t : Tensor = aten::t(%w)\n"
              "  %p : Tensor = aten::mm(%a, %t)\n"
              "  %q : Tensor = aten::exp(%w)\n"
              "  return (%p, %q, %m)\n",
              1);
  /* the LSTM cell of the JIT overview with its sizes: the chunk is pushed
   * up to the two mm results and the biases, one group */
  check_fused("lstm",
              "graph(%x : Float(3, 10),\n"
              "      %hx : Float(3, 8),\n"
              "      %cx : Float(3, 8),\n"
              "      %w_ih : Float(32, 10),\n"
              "      %w_hh : Float(32, 8),\n"
              "      %b_ih : Float(32),\n"
              "      %b_hh : Float(32)):\n"
              "  %four : int = prim::Constant[value=4]()\n"
              "  %one : int = prim::Constant[value=1]()\n"
              "  %10 : Float(10, 32) = aten::t(%w_ih)\n"
              "  %11 : Float(3, 32) = aten::mm(%x, %10)\n"
              "  %12 : Float(32, 8) = aten::t(%w_hh)\n"
              "  %13 : Float(3, 32) = aten::mm(%hx, %12)\n"
              "  %14 : Float(3, 32) = aten::add(%11, %13, %one)\n"
              "  %15 : Float(3, 32) = aten::add(%14, %b_ih, %one)\n"
              "  %gates : Float(3, 32) = aten::add(%15, %b_hh, %one)\n"
              "  %17 : Tensor[] = aten::chunk(%gates, %four, %one)\n"
              "  %i : Float(3, 8), %f : Float(3, 8), %g : Float(3, 8), %o : Float(3, 8) = prim::ListUnpack(%17)\n"
              "  %i0 : Float(3, 8) = aten::sigmoid(%i)\n"
              "  %f0 : Float(3, 8) = aten::sigmoid(%f)\n"
              "  %g0 : Float(3, 8) = aten::tanh(%g)\n"
              "  %o0 : Float(3, 8) = aten::sigmoid(%o)\n"
              "  %26 : Float(3, 8) = aten::mul(%f0, %cx)\n"
              "  %27 : Float(3, 8) = aten::mul(%i0, %g0)\n"
              "  %cy : Float(3, 8) = aten::add(%26, %27, %one)\n"
              "  %29 : Float(3, 8) = aten::tanh(%cy)\n"
              "  %hy : Float(3, 8) = aten::mul(%o0, %29)\n"
              "  return (%hy, %cy)\n",
              1);
  /* the same with unknown sizes: the chunk stays between two groups */
  check_fused("lstm_unsized",
              "graph(%x : Float(3, 10),\n"
              "      %hx : Float(3, 8),\n"
              "      %cx : Float(3, 8),\n"
              "      %w_ih : Float(32, 10),\n"
              "      %w_hh : Float(32, 8),\n"
              "      %b_ih : Float(32),\n"
              "      %b_hh : Float(32)):\n"
              "  %four : int = prim::Constant[value=4]()\n"
              "  %one : int = prim::Constant[value=1]()\n"
              "  %10 : Tensor = aten::t(%w_ih)\n"
              "  %11 : Tensor = aten::mm(%x, %10)\n"
              "  %12 : Tensor = aten::t(%w_hh)\n"
              "  %13 : Tensor = aten::mm(%hx, %12)\n"
              "  %14 : Tensor = aten::add(%11, %13, %one)\n"
              "  %15 : Tensor = aten::add(%14, %b_ih, %one)\n"
              "  %gates : Tensor = aten::add(%15, %b_hh, %one)\n"
              "  %17 : Tensor[] = aten::chunk(%gates, %four, %one)\n"
              "  %i : Tensor, %f : Tensor, %g : Tensor, %o : Tensor = prim::ListUnpack(%17)\n"
              "  %i0 : Tensor = aten::sigmoid(%i)\n"
              "  %f0 : Tensor = aten::sigmoid(%f)\n"
              "  %g0 : Tensor = aten::tanh(%g)\n"
              "  %o0 : Tensor = aten::sigmoid(%o)\n"
              "  %26 : Tensor = aten::mul(%f0, %cx)\n"
              "  %27 : Tensor = aten::mul(%i0, %g0)\n"
              "  %cy : Tensor = aten::add(%26, %27, %one)\n"
              "  %29 : Tensor = aten::tanh(%cy)\n"
              "  %hy : Tensor = aten::mul(%o0, %29)\n"
              "  return (%hy, %cy)\n",
              2);
  /* cat at the output, and a group reading the cat's group */
  check_fused("cat",
              "graph(%x : Float(3, 4),\n"
              "      %y : Float(3, 2)):\n"
              "  %one : int = prim::Constant[value=1]()\n"
              "  %a : Tensor = aten::relu(%x)\n"
              "  %b : Tensor = aten::neg(%y)\n"
              "  %l : Tensor[] = prim::ListConstruct(%a, %b, %y)\n"
              "  %c : Tensor = aten::cat(%l, %one)\n"
              "  %d : Tensor = aten::sin(%c)\n"
              "  %e : Tensor = aten::mul(%d, %c)\n"
              "  return (%e)\n",
              2);
  /* in-place ops between: only the pair that may move fuses */
  check_fused("inplace",
              "graph(%x : Float(3, 4),\n"
              "      %y : Float(3, 4)):\n"
              "  %one : int = prim::Constant[value=1]()\n"
              "  %a : Tensor = aten::relu(%x)\n"
              "  %w : Tensor = aten::add_(%x, %y, %one)\n"
              "  %b : Tensor = aten::sigmoid(%a)\n"
              "  %c : Tensor = aten::exp(%y)\n"
              "  %d : Tensor = aten::mul(%c, %b)\n"
              "  return (%d, %w)\n",
              1);
}

/* Hand-written groups: one nested in another's subgraph runs; a group
 * whose subgraph takes other inputs than the node gives is refused. */
static void test_interp_groups(void) {
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  int64_t sizes[2] = {2, 3};
  ts_rt_tensor *x = make(&ctx, 2, sizes, 7);
  ts_iv arg = x ? ts_iv_tensor(x) : ts_iv_none();
  ts_graph *nested = parse("graph(%a : Tensor):\n"
                           "  %b : Tensor = prim::FusionGroup_0(%a)\n"
                           "  %c : Tensor = aten::neg(%b)\n"
                           "  return (%c, %b)\n"
                           "with prim::FusionGroup_0 = graph(%x : Tensor):\n"
                           "  %y : Tensor = prim::FusionGroup_0(%x)\n"
                           "  %z : Tensor = aten::exp(%y)\n"
                           "  return (%z)\n"
                           "with prim::FusionGroup_0 = graph(%p : Tensor):\n"
                           "  %q : Tensor = aten::sigmoid(%p)\n"
                           "  return (%q)\n");
  ts_graph *flat = parse("graph(%a : Tensor):\n"
                         "  %q : Tensor = aten::sigmoid(%a)\n"
                         "  %b : Tensor = aten::exp(%q)\n"
                         "  %c : Tensor = aten::neg(%b)\n"
                         "  return (%c, %b)\n");
  ts_iv r1[2], r2[2];
  if (nested && flat && TS_CHECK(run(&ctx, nested, &arg, 1, r1))) {
    if (TS_CHECK(run(&ctx, flat, &arg, 1, r2))) {
      TS_CHECK(same_iv(&ctx, r1[0], r2[0]));
      TS_CHECK(same_iv(&ctx, r1[1], r2[1]));
      ts_iv_release(r2[0]);
      ts_iv_release(r2[1]);
    }
    ts_iv_release(r1[0]);
    ts_iv_release(r1[1]);
  }
  ts_graph *bad = parse("graph(%a : Tensor):\n"
                        "  %b : Tensor = prim::FusionGroup_0(%a)\n"
                        "  return (%b)\n"
                        "with prim::FusionGroup_0 = graph(%x : Tensor,\n"
                        "      %y : Tensor):\n"
                        "  %z : Tensor = aten::mul(%x, %y)\n"
                        "  return (%z)\n");
  ts_rt_interp *ip = ts_rt_interp_new(NULL);
  ts_buf where = {0};
  if (bad && ip && TS_CHECK(!ts_rt_interp_run(ip, &ctx, bad, &arg, 1, r1, &where)))
    TS_CHECK_STREQ(ctx.err.data,
                   "malformed prim::FusionGroup: its Subgraph does not take its inputs and give its outputs");
  ts_buf_free(&where);
  ts_rt_interp_free(ip);
  ts_iv_release(arg);
  ts_graph_free(bad);
  ts_graph_free(nested);
  ts_graph_free(flat);
  ts_rt_ctx_free(&ctx);
}

int main(void) {
  if (!TS_CHECK(ts_rt_kernels_init(NULL)))
    return ts_test_finish();
  test_fused_runs();
  test_interp_groups();
  return ts_test_finish();
}
