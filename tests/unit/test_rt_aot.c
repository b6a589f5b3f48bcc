/* tests/unit/test_rt_aot.c: the run-time half of compiled models
 * (runtime/hosted/aot.c) without the code generator: descriptors built here by
 * hand, as codegen/entry.c emits them.
 *
 *   - numbering of nodes and tensor constants, node_supported's reasons;
 *   - small_mlp (tests/fixtures/small_mlp) optimized for its input f32[4,16]
 *     by the pass pipeline, its weights copied into an aligned buffer:
 *     run and run_static without an entry function (the interpreter) and
 *     with a hand-written one that calls every node through ts_rt_aot_call
 *     with a memory plan; results against PyTorch's; f32[2,16]
 *     (tests/fixtures/aot) bails out to the fallback graph with PyTorch's
 *     result for that shape, or without one fails with TSAOT_E_INPUT and
 *     the reason; arenas too small or misaligned, wrong output tensors;
 *   - run_static keeps every tensor of the run in the arena: each tensor a
 *     node makes (header, storage and data) lies in it (the firmware
 *     example's malloc wrapping is the proof that libc is not called);
 *   - ts_rt_aot_fusion with a C kernel standing for a compiled one:
 *     contiguous, broadcast and strided inputs, an output at its arena
 *     offset, a size mismatch's error; the same group through the
 *     interpreter's one-node runner; a table of copies per x86-64 level,
 *     of which the one for ts_rt_cpu_level's level runs. */
#include "aot.h"
#include "loader.h"
#include "npy.h"
#include "passes.h"
#include "runtime.h"
#include "test.h"
#include "tsaot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX TSAOT_SOURCE_DIR "/tests/fixtures/"

static ts_graph *parse(const char *text) {
  ts_diag d = {0};
  ts_graph *g = ts_graph_parse("<test>", text, strlen(text), &d);
  if (!TS_CHECK(g != NULL))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return g;
}

static ts_rt_tensor *load(const char *path) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  ts_rt_tensor *t = ts_rt_npy_read(&c, path);
  if (!TS_CHECK(t != NULL))
    fprintf(stderr, "%s: %s\n", path, c.err.data ? c.err.data : "?");
  ts_rt_ctx_free(&c);
  return t;
}

/* Contiguous float32 data against an expected tensor (case.txt's
 * tolerances: atol 1e-5, rtol 1e-4). */
static bool close_to(const float *got, const ts_rt_tensor *want) {
  const float *w = ts_rt_tensor_data(want);
  int64_t n = ts_rt_tensor_numel(want);
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - w[i]) <= 1e-5f + 1e-4f * fabsf(w[i]))) {
      fprintf(stderr, "element %lld: got %g, expected %g\n", (long long)i, got[i], w[i]);
      return false;
    }
  return true;
}

static DLTensor dl_of(const ts_rt_tensor *t) {
  DLTensor dl;
  TS_CHECK(ts_rt_tensor_to_dl(t, &dl));
  return dl;
}

/* ------------------------------------------------------------ numbering */

static void test_numbering(void) {
  ts_graph *g = parse("graph(%x : Tensor,\n"
                      "      %c : bool):\n"
                      "  %t0 : Tensor = prim::Constant[value={1}]()\n"
                      "  %r : Tensor = prim::If(%c)\n"
                      "    block0():\n"
                      "      %t1 : Tensor = prim::Constant[value={2}]()\n"
                      "      -> (%t1)\n"
                      "    block1():\n"
                      "      -> (%t0)\n"
                      "  %g : Tensor = prim::FusionGroup_0(%x, %r)\n"
                      "  %t3 : Tensor = prim::Constant[value={4}]()\n"
                      "  return (%g, %t3)\n"
                      "with prim::FusionGroup_0 = graph(%a : Tensor,\n"
                      "      %b : Tensor):\n"
                      "  %t2 : Tensor = prim::Constant[value={3}]()\n"
                      "  %one : int = prim::Constant[value=1]()\n"
                      "  %s : Tensor = aten::add(%a, %t2, %one)\n"
                      "  %s2 : Tensor = aten::mul(%s, %b)\n"
                      "  return (%s2)\n");
  if (!g)
    return;
  ts_node *nodes[8] = {0};
  TS_CHECK_INTEQ(ts_rt_aot_number_nodes(g, NULL), 5);
  TS_CHECK_INTEQ(ts_rt_aot_number_nodes(g, nodes), 5);
  TS_CHECK(ts_node_is(nodes[0], TS_K_prim_Constant));
  TS_CHECK(ts_node_is(nodes[1], TS_K_prim_If));
  TS_CHECK(ts_node_is(nodes[2], TS_K_prim_Constant) && nodes[2]->owner != g->block);
  TS_CHECK(ts_node_is(nodes[3], TS_K_prim_FusionGroup));
  TS_CHECK(ts_node_is(nodes[4], TS_K_prim_Constant));
  /* tensor constants: the If's block, then the group's subgraph, in node order */
  TS_CHECK_INTEQ(ts_rt_aot_tensor_consts(g, NULL), 4);
  TS_CHECK_INTEQ(ts_rt_aot_tensor_consts(g, nodes), 4);
  for (int i = 0; i < 4; i++) {
    const ts_attr *a = ts_node_attr(nodes[i], "value");
    TS_CHECK(a && a->kind == TS_ATTR_TENSOR && a->u.t->data && *(const int64_t *)a->u.t->data == i + 1);
  }
  ts_diag d = {0};
  ts_rt_aot_number_nodes(g, nodes);
  if (!TS_CHECK(ts_rt_aot_node_supported(nodes[3], &d)))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_graph_free(g);

  g = parse("graph(%self : __torch__.M,\n"
            "      %x : Tensor):\n"
            "  %one : int = prim::Constant[value=1]()\n"
            "  %y : Tensor = aten::add(%x, %x, %one)\n"
            "  %l : Tensor[] = prim::ListConstruct(%x, %y)\n"
            "  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)\n"
            "  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)\n"
            "  %m : Tensor = prim::GetAttr[name=\"w\"](%self)\n"
            "  %z : Tensor = prim::CallMethod[name=\"f\"](%self, %x)\n"
            "  return (%t)\n");
  if (!g)
    return;
  uint32_t n = ts_rt_aot_number_nodes(g, nodes);
  TS_CHECK_INTEQ(n, 7);
  bool want[7] = {false, true, true, true, true, false, false};
  for (uint32_t k = 0; k < n; k++) {
    ts_diag_free(&d);
    d = (ts_diag){0};
    if (!TS_CHECK(ts_rt_aot_node_supported(nodes[k], &d) == want[k]))
      fprintf(stderr, "node %u: %s\n", k, nodes[k]->kind_name);
  }
  TS_CHECK(d.text.data && strstr(d.text.data, "prim::CallMethod is not supported in compiled code"));
  ts_diag_free(&d);
  d = (ts_diag){0};
  ts_rt_aot_node_supported(nodes[5], &d);
  TS_CHECK(d.text.data && strstr(d.text.data, "prim::GetAttr is not supported in compiled code"));
  ts_diag_free(&d);
  ts_graph_free(g);
}

/* ------------------------------------------------- a hand-written entry */

/* An entry function for tests: walks its own copy of the compiled graph
 * (parsed from the same text, so numbered the same) and runs every node
 * through the helpers, as generated code does; with `plan`, each value
 * whose nbytes[] is set is placed at its offset. It checks where tensors
 * land: at their planned offset, and under run_static inside the arena. */
static struct {
  ts_graph *g;
  uint32_t *num;      /* by node id */
  int64_t *plan_off;  /* by value id, -1 not planned */
  uint64_t *plan_nb;
  size_t arena_size;  /* > 0: every tensor a node makes must lie in the arena */
  int misplaced, outside, calls;
} E;

static bool in_arena(const uint8_t *a, const void *p) {
  return (const uint8_t *)p >= a && (const uint8_t *)p < a + E.arena_size;
}

static void check_value(const uint8_t *arena, const ts_value *v, const ts_iv *slot) {
  if (slot->tag != TS_IV_TENSOR)
    return;
  const ts_rt_tensor *t = slot->u.t;
  if (E.plan_off && E.plan_off[v->id] >= 0 && ts_rt_tensor_data(t) != arena + E.plan_off[v->id])
    E.misplaced++;
  if (E.arena_size && (!in_arena(arena, t) || !in_arena(arena, t->storage) || !in_arena(arena, ts_rt_tensor_data(t))))
    E.outside++;
}

enum { MAX_SLOTS = 256, MAX_OPS = 32 };

static bool entry_block(ts_rt_aot_state *st, ts_rt_ctx *ctx, const ts_block *b, ts_iv *slots) {
  const uint8_t *arena = ((const ts_rt_aot_state_head *)st)->arena;
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    uint32_t k = E.num[n->id];
    if (ts_node_is(n, TS_K_prim_Constant)) {
      ts_rt_aot_const(st, k, &slots[n->outputs[0]->id]);
      continue;
    }
    if (ts_node_is(n, TS_K_prim_If)) {
      bool c;
      if (!ts_rt_aot_get_bool(st, ctx, k, &slots[n->inputs[0]->id], &c))
        return false;
      const ts_block *blk = n->blocks[c ? 0 : 1];
      if (!entry_block(st, ctx, blk, slots))
        return false;
      for (uint32_t i = 0; i < n->noutputs; i++)
        ts_rt_aot_copy_slot(&slots[n->outputs[i]->id], &slots[ts_block_output(blk, i)->id]);
      continue;
    }
    ts_iv *ins[MAX_OPS], *outs[MAX_OPS];
    for (uint32_t i = 0; i < n->ninputs; i++)
      ins[i] = &slots[n->inputs[i]->id];
    for (uint32_t i = 0; i < n->noutputs; i++)
      outs[i] = &slots[n->outputs[i]->id];
    uint32_t o0 = n->noutputs ? n->outputs[0]->id : 0;
    int64_t off = E.plan_off && n->noutputs ? E.plan_off[o0] : -1;
    E.calls++;
    if (!ts_rt_aot_call(st, ctx, k, ins, n->ninputs, outs, n->noutputs, off, off >= 0 ? E.plan_nb[o0] : 0))
      return false;
    for (uint32_t i = 0; i < n->noutputs; i++)
      check_value(arena, n->outputs[i], outs[i]);
  }
  return true;
}

static bool test_entry(ts_rt_aot_state *st, ts_rt_ctx *ctx, ts_iv *args, ts_iv *rets) {
  ts_iv slots[MAX_SLOTS] = {0};
  const ts_block *top = E.g->block;
  if (E.g->next_value_id > MAX_SLOTS)
    return ts_rt_fail(ctx, "test entry: too many values");
  for (uint32_t i = 0; i < ts_block_ninputs(top); i++)
    ts_rt_aot_copy_slot(&slots[ts_block_input(top, i)->id], &args[i]);
  bool ok = entry_block(st, ctx, top, slots);
  for (uint32_t i = 0; ok && i < ts_block_noutputs(top); i++) {
    rets[i] = ts_iv_none();
    ts_rt_aot_copy_slot(&rets[i], &slots[ts_block_output(top, i)->id]);
  }
  for (uint32_t i = 0; i < MAX_SLOTS; i++)
    ts_rt_aot_release_slot(&slots[i]);
  return ok;
}

static void entry_setup(const char *text) {
  E.g = parse(text);
  if (!E.g)
    return;
  uint32_t n = ts_rt_aot_number_nodes(E.g, NULL);
  ts_node **order = calloc(n + 1, sizeof *order);
  E.num = calloc(E.g->next_node_id + 1, sizeof *E.num);
  ts_rt_aot_number_nodes(E.g, order);
  for (uint32_t k = 0; k < n; k++)
    E.num[order[k]->id] = k;
  free(order);
  E.plan_off = NULL;
  E.plan_nb = NULL;
}

static void entry_teardown(void) {
  ts_graph_free(E.g);
  free(E.num);
  free(E.plan_off);
  free(E.plan_nb);
  memset(&E, 0, sizeof E);
}

/* ------------------------------------------------------------ small_mlp */

typedef struct mlp {
  ts_rt_model *m;
  ts_graph *opt, *fb; /* the pipeline's outputs (their constants hold data) */
  ts_buf text, fbtext;
  uint8_t *weights;
  ts_rt_aot_tconst tc[32];
  int64_t in_sizes[2], out_sizes[2];
  ts_rt_aot_spec in_spec, out_spec;
  ts_rt_aot_desc desc;
} mlp;

/* The default pipeline on a copy of forward, specialised to `spec` (NULL:
 * not specialised). */
static ts_graph *optimize(mlp *M, const char *spec) {
  ts_diag d = {0};
  ts_graph *g = ts_rt_model_graph(M->m, "forward", &d);
  ts_graph *og = g ? ts_graph_copy(g) : NULL;
  if (!TS_CHECK(og != NULL)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return NULL;
  }
  const ts_type *types[2] = {NULL, spec ? ts_pass_spec_parse(ts_graph_arena(og), spec, strlen(spec), &d) : NULL};
  ts_iv root = ts_rt_model_root(M->m);
  ts_pass_env env = {.d = &d, .module = &root, .input_types = spec ? types : NULL, .ninput_types = spec ? 2 : 0};
  if (!TS_CHECK(ts_pass_run_list(og, "default", &env))) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_graph_free(og);
    og = NULL;
  }
  ts_diag_free(&d);
  return og;
}

static uint64_t extent(const ts_tconst *t) {
  uint64_t last = 0;
  for (int32_t i = 0; i < t->rank; i++) {
    if (!t->sizes[i])
      return 0;
    last += (uint64_t)(t->sizes[i] - 1) * (uint64_t)t->strides[i];
  }
  return (last + 1) * ts_dtype_size((ts_dtype)t->dtype);
}

/* Copies g's tensor constants into the weights from *off on; fills tc. */
static uint32_t add_weights(ts_graph *g, ts_rt_aot_tconst *tc, uint8_t *w, uint64_t *off) {
  ts_node *nodes[32];
  uint32_t n = ts_rt_aot_tensor_consts(g, NULL);
  if (!TS_CHECK(n <= 16))
    return 0;
  ts_rt_aot_tensor_consts(g, nodes);
  for (uint32_t i = 0; i < n; i++) {
    const ts_tconst *t = ts_node_attr(nodes[i], "value")->u.t;
    uint64_t ext = extent(t);
    *off = (*off + 63) & ~(uint64_t)63;
    if (w)
      memcpy(w + *off, t->data, ext);
    tc[i] = (ts_rt_aot_tconst){.offset = *off, .nbytes = ext, .dtype = t->dtype, .rank = t->rank,
                               .sizes = t->sizes, .strides = t->strides};
    *off += ext;
  }
  return n;
}

static bool mlp_build(mlp *M) {
  memset(M, 0, sizeof *M);
  ts_diag d = {0};
  M->m = ts_rt_model_load(FIX "small_mlp/model.pt", &d);
  if (!TS_CHECK(M->m != NULL)) {
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    return false;
  }
  ts_diag_free(&d);
  M->opt = optimize(M, "f32[4,16]");
  M->fb = optimize(M, NULL);
  if (!M->opt || !M->fb)
    return false;
  ts_graph_print(&M->text, M->opt);
  ts_graph_print(&M->fbtext, M->fb);
  uint64_t size = 0;
  uint32_t ng = add_weights(M->opt, M->tc, NULL, &size);
  uint32_t nf = add_weights(M->fb, M->tc + ng, NULL, &size);
  M->weights = aligned_alloc(64, (size_t)((size + 63) & ~(uint64_t)63) + 64);
  size = 0;
  add_weights(M->opt, M->tc, M->weights, &size);
  add_weights(M->fb, M->tc + ng, M->weights, &size);
  TS_CHECK_INTEQ(ng, 6);
  TS_CHECK_INTEQ(nf, 6);
  M->in_sizes[0] = 4, M->in_sizes[1] = 16;
  M->out_sizes[0] = 4, M->out_sizes[1] = 8;
  M->in_spec = (ts_rt_aot_spec){.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = 2, .sizes = M->in_sizes};
  M->out_spec = (ts_rt_aot_spec){.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = 2, .sizes = M->out_sizes};
  M->desc = (ts_rt_aot_desc){.abi = TS_RT_AOT_ABI,
                             .name = "mlp",
                             .graph = M->text.data,
                             .graph_len = M->text.len,
                             .fallback = M->fbtext.data,
                             .fallback_len = M->fbtext.len,
                             .weights = M->weights,
                             .weights_len = size,
                             .tconsts = M->tc,
                             .ntconsts_graph = ng,
                             .ntconsts_fallback = nf,
                             .nnodes = ts_rt_aot_number_nodes(M->opt, NULL),
                             .entry = NULL,
                             .ninputs = 1,
                             .inputs = &M->in_spec,
                             .noutputs = 1,
                             .outputs = &M->out_spec,
                             .arena_plan = 0,
                             .arena_heap = 1 << 20};
  return true;
}

static void mlp_free(mlp *M) {
  ts_rt_aot_release(&M->desc);
  ts_buf_free(&M->text);
  ts_buf_free(&M->fbtext);
  free(M->weights);
  ts_graph_free(M->opt);
  ts_graph_free(M->fb);
  ts_rt_model_free(M->m);
}

/* One run through ts_rt_aot_run: the single output compared with want. */
static void check_run(ts_rt_aot_desc *desc, const ts_rt_tensor *in, const ts_rt_tensor *want, int bailout) {
  DLTensor x = dl_of(in);
  DLManagedTensor *outs[4] = {0};
  int nout = -1;
  int rc = ts_rt_aot_run(desc, &x, 1, outs, 4, &nout);
  if (!TS_CHECK_INTEQ(rc, TSAOT_OK)) {
    fprintf(stderr, "run: %s\n", ts_rt_aot_last_error(desc));
    return;
  }
  TS_CHECK_INTEQ(ts_rt_aot_last_bailout(desc), bailout);
  if (!bailout)
    TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "");
  if (!TS_CHECK_INTEQ(nout, 1))
    return;
  DLTensor *o = &outs[0]->dl_tensor;
  TS_CHECK(o->dtype.code == kDLFloat && o->dtype.bits == 32 && o->ndim == 2);
  TS_CHECK(o->shape[0] == want->sizes[0] && o->shape[1] == want->sizes[1]);
  TS_CHECK(close_to((const float *)o->data + o->byte_offset / 4, want));
  outs[0]->deleter(outs[0]);
}

/* One run through ts_rt_aot_run_static into an output buffer. */
static int check_static(ts_rt_aot_desc *desc, const ts_rt_tensor *in, const ts_rt_tensor *want, uint8_t *arena,
                        size_t size) {
  DLTensor x = dl_of(in);
  float out[64] = {0};
  int64_t shape[2] = {want->sizes[0], want->sizes[1]};
  DLTensor o = {.data = out, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  int rc = ts_rt_aot_run_static(desc, &x, 1, &o, 1, arena, size);
  if (rc == TSAOT_OK)
    TS_CHECK(close_to(out, want));
  return rc;
}

static void test_mlp(void) {
  mlp M;
  if (!mlp_build(&M)) {
    mlp_free(&M);
    return;
  }
  ts_rt_tensor *in = load(FIX "small_mlp/in0.npy"), *want = load(FIX "small_mlp/out0.npy");
  ts_rt_tensor *in2 = load(FIX "aot/small_mlp_b2_in0.npy"), *want2 = load(FIX "aot/small_mlp_b2_out0.npy");
  if (!in || !want || !in2 || !want2)
    goto out;
  ts_rt_aot_desc *desc = &M.desc;
  if (!TS_CHECK_INTEQ(ts_rt_aot_init(desc), TSAOT_OK)) {
    fprintf(stderr, "init: %s\n", ts_rt_aot_last_error(desc));
    goto out;
  }
  TS_CHECK_INTEQ(ts_rt_aot_num_inputs(desc), 1);
  TS_CHECK_INTEQ(ts_rt_aot_num_outputs(desc), 1);
  tsaot_spec sp;
  TS_CHECK_INTEQ(ts_rt_aot_input_spec(desc, 0, &sp), TSAOT_OK);
  TS_CHECK(sp.kind == TSAOT_SPEC_TENSOR && sp.dtype.code == kDLFloat && sp.dtype.bits == 32 && sp.ndim == 2 &&
           sp.shape[0] == 4 && sp.shape[1] == 16);
  TS_CHECK_INTEQ(ts_rt_aot_input_spec(desc, 1, &sp), TSAOT_E_INPUT);
  TS_CHECK_INTEQ(ts_rt_aot_output_spec(desc, 0, &sp), TSAOT_OK);
  TS_CHECK(sp.ndim == 2 && sp.shape[1] == 8);

  /* the interpreter runs the compiled graph (no entry function) */
  check_run(desc, in, want, 0);
  check_run(desc, in, want, 0); /* the same state again */
  size_t asize = ts_rt_aot_arena_size(desc);
  TS_CHECK_INTEQ(asize, 1 << 20);
  uint8_t *arena = aligned_alloc(64, asize + 128);
  for (int r = 0; r < 3; r++)
    if (!TS_CHECK_INTEQ(check_static(desc, in, want, arena, asize), TSAOT_OK))
      fprintf(stderr, "run_static: %s\n", ts_rt_aot_last_error(desc));

  /* another batch size: the fallback graph, PyTorch's result for it */
  check_run(desc, in2, want2, 1);
  TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "input 0: expected f32[4,16], got f32[2,16]");
  TS_CHECK_INTEQ(check_static(desc, in2, want2, arena, asize), TSAOT_OK);
  TS_CHECK_INTEQ(ts_rt_aot_last_bailout(desc), 1);
  /* back on the specialisation */
  check_run(desc, in, want, 0);

  /* arena checks */
  TS_CHECK_INTEQ(check_static(desc, in, want, arena, asize - 1), TSAOT_E_ARENA);
  TS_CHECK(strstr(ts_rt_aot_last_error(desc), "the model needs") != NULL);
  TS_CHECK_INTEQ(check_static(desc, in, want, arena + 16, asize), TSAOT_E_ARENA);
  TS_CHECK(strstr(ts_rt_aot_last_error(desc), "aligned") != NULL);
  /* the caller's output tensor of another shape */
  TS_CHECK_INTEQ(check_static(desc, in, want2, arena, asize), TSAOT_E_OUTPUT);
  TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "output 0: the result is f32[4,8], the caller's tensor f32[2,8]");
  /* input count; a 0-d tensor for the tensor argument is a mismatch */
  DLTensor x = dl_of(in);
  DLManagedTensor *outs[2];
  int nout;
  TS_CHECK_INTEQ(ts_rt_aot_run(desc, &x, 2, outs, 2, &nout), TSAOT_E_INPUT);
  TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "the model takes 1 inputs, 2 given");
  TS_CHECK_INTEQ(ts_rt_aot_run(desc, &x, 1, outs, 0, &nout), TSAOT_E_OUTPUT);
  int64_t bad_strides[2] = {-16, 1};
  DLTensor xb = x;
  xb.strides = bad_strides;
  TS_CHECK_INTEQ(ts_rt_aot_run(desc, &xb, 1, outs, 2, &nout), TSAOT_E_INPUT);
  TS_CHECK(strstr(ts_rt_aot_last_error(desc), "input 0: ") == ts_rt_aot_last_error(desc));

  /* threads: the same results */
  ts_rt_aot_set_threads(desc, 2);
  check_run(desc, in, want, 0);
  TS_CHECK_INTEQ(check_static(desc, in, want, arena, asize), TSAOT_OK);
  ts_rt_aot_set_threads(desc, 1);

  /* without a fallback: the reason, and TSAOT_E_INPUT */
  ts_rt_aot_release(desc);
  desc->fallback = NULL;
  desc->ntconsts_fallback = 0;
  TS_CHECK_INTEQ(ts_rt_aot_run(desc, &(DLTensor){0}, 0, outs, 2, &nout), TSAOT_E_INPUT);
  DLTensor x2 = dl_of(in2);
  TS_CHECK_INTEQ(ts_rt_aot_run(desc, &x2, 1, outs, 2, &nout), TSAOT_E_INPUT);
  TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "input 0: expected f32[4,16], got f32[2,16]");
  TS_CHECK_INTEQ(ts_rt_aot_last_bailout(desc), 0);
  TS_CHECK_INTEQ(check_static(desc, in2, want2, arena, asize), TSAOT_E_INPUT);
  check_run(desc, in, want, 0);

  /* a malformed descriptor fails init with the reason */
  ts_rt_aot_release(desc);
  desc->ntconsts_graph--;
  TS_CHECK_INTEQ(ts_rt_aot_init(desc), TSAOT_E_INIT);
  TS_CHECK_STREQ(ts_rt_aot_last_error(desc), "the compiled graph has 6 tensor constants, the weights table 5");
  desc->ntconsts_graph++;
  TS_CHECK_INTEQ(ts_rt_aot_init(desc), TSAOT_OK);

  /* the entry function: every node through ts_rt_aot_call, the three
   * intermediate tensors planned at distinct offsets */
  ts_rt_aot_release(desc);
  desc->fallback = M.fbtext.data;
  desc->ntconsts_fallback = 6;
  entry_setup(M.text.data);
  if (E.g) {
    uint32_t nv = E.g->next_value_id;
    E.plan_off = malloc(nv * sizeof *E.plan_off);
    E.plan_nb = calloc(nv, sizeof *E.plan_nb);
    uint64_t off = 0;
    for (uint32_t i = 0; i < nv; i++)
      E.plan_off[i] = -1;
    const ts_value *ret = ts_block_output(E.g->block, 0);
    for (const ts_node *n = ts_block_first(E.g->block); n != E.g->block->ret; n = n->next)
      if (!ts_node_is(n, TS_K_prim_Constant) && n->outputs[0] != ret) {
        E.plan_off[n->outputs[0]->id] = (int64_t)off;
        E.plan_nb[n->outputs[0]->id] = 4 * 32 * sizeof(float);
        off += 4 * 32 * sizeof(float);
      }
    TS_CHECK_INTEQ(off, 3 * 512);
    desc->entry = test_entry;
    desc->arena_plan = off;
    desc->arena_heap = 256 << 10;
    TS_CHECK_INTEQ(ts_rt_aot_init(desc), TSAOT_OK);
    check_run(desc, in, want, 0);
    TS_CHECK_INTEQ(E.calls, 4);
    TS_CHECK_INTEQ(E.misplaced, 0);
    asize = ts_rt_aot_arena_size(desc);
    TS_CHECK_INTEQ(asize, 3 * 512 + (256 << 10));
    E.arena_size = asize;
    for (int r = 0; r < 2; r++)
      TS_CHECK_INTEQ(check_static(desc, in, want, arena, asize), TSAOT_OK);
    TS_CHECK_INTEQ(E.calls, 12);
    TS_CHECK_INTEQ(E.misplaced, 0);
    TS_CHECK_INTEQ(E.outside, 0);
    /* the other shape still bails out to the fallback graph */
    check_run(desc, in2, want2, 1);
    TS_CHECK_INTEQ(check_static(desc, in2, want2, arena, asize), TSAOT_OK);
    TS_CHECK_INTEQ(E.calls, 12);
  }
  entry_teardown();
  free(arena);
out:
  if (in)
    ts_rt_tensor_release(in);
  if (want)
    ts_rt_tensor_release(want);
  if (in2)
    ts_rt_tensor_release(in2);
  if (want2)
    ts_rt_tensor_release(want2);
  mlp_free(&M);
}

/* ---------------------------------------------------- fusion and errors */

/* The graph of the fusion tests: relu(x + y) * x, the group either as a
 * "compiled" kernel (add_relu below) or through the interpreter. */
static const char *fusion_text = "graph(%self : NoneType,\n"
                                 "      %x : Float(2, 3, strides=[3, 1]),\n"
                                 "      %y : Tensor,\n"
                                 "      %c : bool):\n"
                                 "  %z : Float(2, 3, strides=[3, 1]) = prim::FusionGroup_0(%x, %y)\n"
                                 "  %w : Float(2, 3, strides=[3, 1]) = aten::mul(%z, %x)\n"
                                 "  %r : Tensor = prim::If(%c)\n"
                                 "    block0():\n"
                                 "      -> (%w)\n"
                                 "    block1():\n"
                                 "      %one : int = prim::Constant[value=1]()\n"
                                 "      %v : Tensor = aten::add(%w, %y, %one)\n"
                                 "      -> (%v)\n"
                                 "  return (%r)\n"
                                 "with prim::FusionGroup_0 = graph(%x : Float(2, 3, strides=[3, 1]),\n"
                                 "      %y : Tensor):\n"
                                 "  %one : int = prim::Constant[value=1]()\n"
                                 "  %a : Float(2, 3, strides=[3, 1]) = aten::add(%x, %y, %one)\n"
                                 "  %b : Float(2, 3, strides=[3, 1]) = aten::relu(%a)\n"
                                 "  return (%b)\n";

/* codegen/codegen.h's ts_cg_kargs */
typedef struct kargs {
  void **ptrs;
  const int64_t *strides;
  int64_t contig;
} kargs;

static int seen_contig, seen_strided;

/* A stand-in for a compiled kernel of the group, for 2-d outputs. */
static void add_relu(const void *p, int64_t begin, int64_t end) {
  const kargs *a = p;
  const float *x = a->ptrs[0], *y = a->ptrs[1];
  float *o = a->ptrs[2];
  if (a->contig) {
    seen_contig++;
    for (int64_t i = begin; i < end; i++)
      o[i] = fmaxf(x[i] + y[i], 0.f);
    return;
  }
  seen_strided++;
  const int64_t *s = a->strides; /* [operand * 2 + dim] */
  for (int64_t r = begin; r < end; r++)
    for (int64_t j = 0; j < 3; j++) {
      float v = x[r * s[0] + j * s[1]] + y[r * s[2] + j * s[3]];
      o[r * s[4] + j * s[5]] = fmaxf(v, 0.f);
    }
}

/* Stand-ins for a kernel's copies per x86-64 level: each says it ran. */
static int seen_level;
static void add_relu_v2(const void *p, int64_t begin, int64_t end) {
  seen_level = 2;
  add_relu(p, begin, end);
}
static void add_relu_v3(const void *p, int64_t begin, int64_t end) {
  seen_level = 3;
  add_relu(p, begin, end);
}
static void add_relu_v4(const void *p, int64_t begin, int64_t end) {
  seen_level = 4;
  add_relu(p, begin, end);
}

/* 0: the entry runs the group in the interpreter; 1: as one compiled
 * kernel; 2: as a table of copies for x86-64-v2, v3, v4 */
static int fusion_compiled;

static bool fusion_entry(ts_rt_aot_state *st, ts_rt_ctx *ctx, ts_iv *args, ts_iv *rets) {
  /* nodes: 0 FusionGroup, 1 mul, 2 If, 3 Constant, 4 add */
  ts_iv z = {0}, w = {0}, one = {0}, v = {0};
  ts_iv *x = &args[1], *y = &args[2];
  bool ok, c;
  if (fusion_compiled) {
    static const int64_t sizes[2] = {2, 3}, offs[1] = {0};
    static const int32_t dts[1] = {TS_DT_FLOAT32};
    ts_iv *ops[3] = {x, y, &z};
    static const ts_rt_aot_kernel_fn one[1] = {add_relu};
    static const ts_rt_aot_kernel_fn levels[TS_RT_AOT_KERNEL_LEVELS] = {add_relu_v2, add_relu_v3, add_relu_v4};
    bool lv = fusion_compiled == 2;
    ok = ts_rt_aot_fusion(st, ctx, 0, lv ? levels : one, lv ? TS_RT_AOT_KERNEL_LEVELS : 1, ops, 2, 1, 2, sizes, dts,
                          offs);
    if (ok && ts_rt_tensor_data(z.u.t) != ((ts_rt_aot_state_head *)st)->arena)
      ok = ts_rt_fail(ctx, "the group's output is not at its arena offset");
  } else {
    ts_iv *ins[2] = {x, y}, *outs[1] = {&z};
    ok = ts_rt_aot_call(st, ctx, 0, ins, 2, outs, 1, -1, 0);
  }
  ts_iv *ins[3] = {&z, x, NULL}, *outs[1] = {&w};
  ok = ok && ts_rt_aot_call(st, ctx, 1, ins, 2, outs, 1, -1, 0);
  ok = ok && ts_rt_aot_get_bool(st, ctx, 2, &args[3], &c);
  if (ok && c) {
    ts_rt_aot_copy_slot(&rets[0], &w);
  } else if (ok) {
    ts_rt_aot_const(st, 3, &one);
    ts_iv *ins2[3] = {&w, y, &one}, *outs2[1] = {&v};
    ok = ts_rt_aot_call(st, ctx, 4, ins2, 3, outs2, 1, -1, 0);
    if (ok)
      ts_rt_aot_copy_slot(&rets[0], &v);
  }
  ts_rt_aot_release_slot(&z);
  ts_rt_aot_release_slot(&w);
  ts_rt_aot_release_slot(&one);
  ts_rt_aot_release_slot(&v);
  return ok;
}

/* x (2x3, optionally a transposed view of a 3x2 buffer), y, c -> result. */
static int fusion_run(ts_rt_aot_desc *desc, bool transposed, const int64_t *yshape, int yndim, bool c, float *res) {
  static float xbuf[6] = {1, -2, 3, -4, 5, -6}, ybuf[6] = {0.5f, 0.25f, -10, 1, 2, 3};
  int64_t xs[2] = {2, 3}, xst[2] = {1, 2};
  DLTensor in[3] = {
      {.data = xbuf, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = xs,
       .strides = transposed ? xst : NULL},
      {.data = ybuf, .device = {kDLCPU, 0}, .ndim = yndim, .dtype = {kDLFloat, 32, 1}, .shape = (int64_t *)yshape},
      {.data = &(uint8_t){c}, .device = {kDLCPU, 0}, .ndim = 0, .dtype = {6, 8, 1}, .shape = NULL},
  };
  DLManagedTensor *outs[2] = {0};
  int nout = 0;
  int rc = ts_rt_aot_run(desc, in, 3, outs, 2, &nout);
  if (rc == TSAOT_OK) {
    TS_CHECK_INTEQ(nout, 1);
    memcpy(res, outs[0]->dl_tensor.data, 6 * sizeof(float));
    outs[0]->deleter(outs[0]);
  }
  return rc;
}

/* relu(x + y) * x (+ y unless c), computed here. */
static void fusion_want(bool transposed, const int64_t *yshape, int yndim, bool c, float *want) {
  static const float xbuf[6] = {1, -2, 3, -4, 5, -6}, ybuf[6] = {0.5f, 0.25f, -10, 1, 2, 3};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      float x = transposed ? xbuf[j * 2 + i] : xbuf[i * 3 + j];
      float y = yndim == 1 ? ybuf[j] : yshape[0] == 1 ? ybuf[j] : ybuf[i * 3 + j];
      float v = fmaxf(x + y, 0.f) * x;
      want[i * 3 + j] = c ? v : v + y;
    }
}

static void test_fusion(void) {
  entry_setup(fusion_text);
  if (!E.g)
    return;
  ts_rt_aot_spec specs[3] = {
      {.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = 2, .sizes = (const int64_t[]){2, 3}},
      {.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = -1},
      {.kind = TSAOT_SPEC_BOOL, .dtype = TS_DT_BOOL, .ndim = 0},
  };
  ts_rt_aot_desc desc = {.abi = TS_RT_AOT_ABI,
                         .name = "fusion",
                         .graph = fusion_text,
                         .graph_len = strlen(fusion_text),
                         .nnodes = 5,
                         .entry = fusion_entry,
                         .ninputs = 3,
                         .inputs = specs,
                         .noutputs = 1,
                         .arena_plan = 24,
                         .arena_heap = 64 << 10};
  if (!TS_CHECK_INTEQ(ts_rt_aot_init(&desc), TSAOT_OK)) {
    fprintf(stderr, "init: %s\n", ts_rt_aot_last_error(&desc));
    entry_teardown();
    return;
  }
  static const int64_t row[1] = {3}, full[2] = {2, 3}, bcast[2] = {1, 3}, bad[1] = {4};
  struct {
    bool transposed;
    const int64_t *y;
    int yndim;
    bool c;
    int contig, strided; /* the kernel's path, when compiled */
  } cases[] = {
      {false, full, 2, true, 1, 0},  {false, row, 1, true, 0, 1}, {true, full, 2, false, 0, 1},
      {false, bcast, 2, false, 0, 1}, {true, row, 1, true, 0, 1},
  };
  /* the copy a CPU of this level runs: v2 below v3 too (the library's
   * baseline; nothing older runs it at all) */
  int level = ts_rt_cpu_level(), want_level = level >= 4 ? 4 : level == 3 ? 3 : 2;
  for (int compiled = 0; compiled < 3; compiled++) {
    fusion_compiled = compiled;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      float got[6] = {0}, want[6];
      seen_contig = seen_strided = seen_level = 0;
      int rc = fusion_run(&desc, cases[i].transposed, cases[i].y, cases[i].yndim, cases[i].c, got);
      if (!TS_CHECK_INTEQ(rc, TSAOT_OK)) {
        fprintf(stderr, "fusion case %zu (compiled %d): %s\n", i, compiled, ts_rt_aot_last_error(&desc));
        continue;
      }
      fusion_want(cases[i].transposed, cases[i].y, cases[i].yndim, cases[i].c, want);
      for (int j = 0; j < 6; j++)
        if (!TS_CHECK(fabsf(got[j] - want[j]) <= 1e-6f))
          fprintf(stderr, "fusion case %zu (compiled %d) element %d: got %g, expected %g\n", i, compiled, j, got[j],
                  want[j]);
      if (compiled) {
        TS_CHECK_INTEQ(seen_contig, cases[i].contig);
        TS_CHECK_INTEQ(seen_strided, cases[i].strided);
      }
      TS_CHECK_INTEQ(seen_level, compiled == 2 ? want_level : 0);
    }
    /* y of 4 elements does not broadcast to (2, 3) */
    float got[6];
    TS_CHECK_INTEQ(fusion_run(&desc, false, bad, 1, true, got), TSAOT_E_RUN);
    const char *e = ts_rt_aot_last_error(&desc);
    TS_CHECK(strncmp(e, "prim::FusionGroup: ", 19) == 0);
    if (!TS_CHECK(strstr(e, "tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1")))
      fprintf(stderr, "%s\n", e);
  }
  ts_rt_aot_release(&desc);
  entry_teardown();
}

/* An int for the bool condition: ts_rt_aot_get_bool's error names prim::If. */
static bool cond_entry(ts_rt_aot_state *st, ts_rt_ctx *ctx, ts_iv *args, ts_iv *rets) {
  bool c;
  if (!ts_rt_aot_get_bool(st, ctx, 0, &args[1], &c))
    return false;
  ts_rt_aot_set_int(&rets[0], c ? 1 : 2);
  return true;
}

static void test_errors(void) {
  static const char *text = "graph(%self : NoneType,\n"
                            "      %n : int):\n"
                            "  %r : int = prim::If(%n)\n"
                            "    block0():\n"
                            "      %a : int = prim::Constant[value=1]()\n"
                            "      -> (%a)\n"
                            "    block1():\n"
                            "      %b : int = prim::Constant[value=2]()\n"
                            "      -> (%b)\n"
                            "  return (%r)\n";
  ts_rt_aot_spec spec = {.kind = TSAOT_SPEC_INT, .dtype = TS_DT_INT64, .ndim = 0};
  ts_rt_aot_desc desc = {.abi = TS_RT_AOT_ABI, .name = "cond", .graph = text, .graph_len = strlen(text), .nnodes = 3,
                         .entry = cond_entry, .ninputs = 1, .inputs = &spec, .noutputs = 1};
  int64_t v = 5;
  DLTensor n = {.data = &v, .device = {kDLCPU, 0}, .ndim = 0, .dtype = {kDLInt, 64, 1}};
  DLManagedTensor *outs[1];
  int nout;
  TS_CHECK_INTEQ(ts_rt_aot_run(&desc, &n, 1, outs, 1, &nout), TSAOT_E_RUN);
  TS_CHECK_STREQ(ts_rt_aot_last_error(&desc), "prim::If: prim::If condition is a int, not a bool");
  /* a float tensor for the int argument: the conversion's reason */
  float f = 1;
  DLTensor ff = {.data = &f, .device = {kDLCPU, 0}, .ndim = 0, .dtype = {kDLFloat, 32, 1}};
  TS_CHECK_INTEQ(ts_rt_aot_run(&desc, &ff, 1, outs, 1, &nout), TSAOT_E_INPUT);
  TS_CHECK_STREQ(ts_rt_aot_last_error(&desc), "input 0: expected an int (a 0-d int64 array), got a 0-d float32 array");
  /* a wrong ABI */
  ts_rt_aot_release(&desc);
  desc.abi = 99;
  TS_CHECK_INTEQ(ts_rt_aot_init(&desc), TSAOT_E_INIT);
  TS_CHECK(strstr(ts_rt_aot_last_error(&desc), "ABI 99") != NULL);
  ts_rt_aot_release(&desc);
  /* a graph text that does not parse */
  desc.abi = TS_RT_AOT_ABI;
  desc.graph = "graph(";
  desc.graph_len = 6;
  TS_CHECK_INTEQ(ts_rt_aot_init(&desc), TSAOT_E_INIT);
  TS_CHECK(strncmp(ts_rt_aot_last_error(&desc), "cannot read the compiled graph: <cond: compiled graph>", 53) == 0);
  ts_rt_aot_release(&desc);

  /* a kernel's error names its node */
  static const char *add_text = "graph(%self : NoneType,\n"
                                "      %a : Tensor,\n"
                                "      %b : Tensor):\n"
                                "  %one : int = prim::Constant[value=1]()\n"
                                "  %s : Tensor = aten::add(%a, %b, %one)\n"
                                "  return (%s)\n";
  entry_setup(add_text);
  if (!E.g)
    return;
  ts_rt_aot_spec any[2] = {{.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = -1},
                           {.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = -1}};
  ts_rt_aot_desc add = {.abi = TS_RT_AOT_ABI, .name = "add", .graph = add_text, .graph_len = strlen(add_text),
                        .nnodes = 2, .entry = test_entry, .ninputs = 2, .inputs = any, .noutputs = 1};
  float a[6] = {0}, b[4] = {0};
  int64_t as[2] = {2, 3}, bs[1] = {4};
  DLTensor ab[2] = {{.data = a, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = as},
                    {.data = b, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = bs}};
  TS_CHECK_INTEQ(ts_rt_aot_run(&add, ab, 2, outs, 1, &nout), TSAOT_E_RUN);
  TS_CHECK_STREQ(ts_rt_aot_last_error(&add), "aten::add: The size of tensor a (3) must match the size of tensor b (4) "
                                             "at non-singleton dimension 1");
  bs[0] = 3;
  TS_CHECK_INTEQ(ts_rt_aot_run(&add, ab, 2, outs, 1, &nout), TSAOT_OK);
  TS_CHECK_STREQ(ts_rt_aot_last_error(&add), "");
  if (nout == 1)
    outs[0]->deleter(outs[0]);
  ts_rt_aot_release(&add);
  entry_teardown();
}

/* A constant the graph writes in place gets a writable copy: the embedded
 * weights stay as they were and the update persists from run to run (as a
 * module buffer's does in PyTorch), with and without an entry function. */
static void test_written_constant(void) {
  static const char *text = "graph(%self : NoneType,\n"
                            "      %x : Float(2, strides=[1])):\n"
                            "  %c : Float(2, strides=[1]) = prim::Constant[value=<Tensor>]()\n"
                            "  %k : Float(2, strides=[1]) = prim::Constant[value=<Tensor>]()\n"
                            "  %one : int = prim::Constant[value=1]()\n"
                            "  %y : Float(2, strides=[1]) = aten::add_(%c, %x, %one)\n"
                            "  %z : Float(2, strides=[1]) = aten::mul(%y, %k)\n"
                            "  return (%z)\n";
  static _Alignas(64) float weights[32] = {1, 2, [16] = 10, 100};
  static const int64_t sz[1] = {2}, st[1] = {1};
  ts_rt_aot_tconst tc[2] = {{.offset = 0, .nbytes = 8, .dtype = TS_DT_FLOAT32, .rank = 1, .sizes = sz, .strides = st},
                            {.offset = 64, .nbytes = 8, .dtype = TS_DT_FLOAT32, .rank = 1, .sizes = sz, .strides = st}};
  ts_rt_aot_spec spec = {.kind = TSAOT_SPEC_TENSOR, .dtype = TS_DT_FLOAT32, .ndim = 1, .sizes = sz};
  for (int with_entry = 0; with_entry < 2; with_entry++) {
    if (with_entry) {
      entry_setup(text);
      if (!E.g)
        return;
    }
    ts_rt_aot_desc desc = {.abi = TS_RT_AOT_ABI, .name = "wc", .graph = text, .graph_len = strlen(text),
                           .weights = (const uint8_t *)weights, .weights_len = sizeof weights, .tconsts = tc,
                           .ntconsts_graph = 2, .nnodes = 5, .entry = with_entry ? test_entry : NULL,
                           .ninputs = 1, .inputs = &spec, .noutputs = 1, .arena_heap = 16 << 10};
    float x[2] = {0.5f, 0.25f};
    DLTensor in = {.data = x, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = (int64_t *)sz};
    for (int r = 1; r <= 3; r++) {
      DLManagedTensor *outs[1];
      int nout = 0;
      if (!TS_CHECK_INTEQ(ts_rt_aot_run(&desc, &in, 1, outs, 1, &nout), TSAOT_OK)) {
        fprintf(stderr, "%s\n", ts_rt_aot_last_error(&desc));
        break;
      }
      const float *o = outs[0]->dl_tensor.data;
      TS_CHECK(o[0] == (1 + r * 0.5f) * 10 && o[1] == (2 + r * 0.25f) * 100);
      outs[0]->deleter(outs[0]);
    }
    TS_CHECK(weights[0] == 1 && weights[1] == 2 && weights[16] == 10);
    ts_rt_aot_release(&desc);
    if (with_entry)
      entry_teardown();
  }
}

int main(void) {
  test_numbering();
  test_mlp();
  test_fusion();
  test_errors();
  test_written_constant();
  return ts_test_finish();
}
