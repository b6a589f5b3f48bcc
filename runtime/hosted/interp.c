/* runtime/hosted/interp.c: the reference interpreter (../shared/reference,
 * "Interpreter").
 *
 * A graph is linearised once into register-machine code: one register per
 * value, each instruction gathers its inputs from registers, runs (a kernel
 * found from the node's schema, or one of the structural operations the
 * interpreter does itself) and stores its outputs. prim::If and prim::Loop
 * become jumps; a prim::FusionGroup runs the code of its Subgraph as a call
 * does (the fusion pass's groups, before code generation). A liveness
 * analysis over the code marks the last use of each value so the register's
 * reference is moved into the operation (a tensor is released right after
 * its last use); values whose last use depends on the branch taken are
 * dropped by DROP instructions at the start of each branch and after each
 * loop; outputs nobody reads are released when stored.
 *
 * An interpreter is used by one thread at a time: code is built lazily (or
 * ahead, ts_rt_interp_prepare) and instructions keep small run-time caches
 * (attribute slots, callees). Once every graph and node it runs is prepared,
 * runs of code without object or call instructions only read it, and may
 * go on on several threads (runtime/hosted/aot.c relies on this). Compiled code (runtime/hosted/aot.c) runs the nodes
 * it does not compile one at a time (ts_rt_interp_node): a node becomes the
 * one instruction the code builder makes for it, kept by node address, run
 * through the same dispatch. Memory comes from ts_rt_malloc (a compiled
 * model's arena during run_static).
 */
#include "runtime.h"
#include "tensor_ops.h"

#include <stdint.h>
#include <string.h>

/* Nested prim::CallMethod / prim::CallFunction runs before it is an error. */
enum { TS_IP_MAX_DEPTH = 200 };

/* Operand encoding: the register number, and in the top bit MOVE for an
 * input (its last use: the instruction takes the reference) or DEAD for an
 * output (never read: released when stored). */
#define TS_IP_FLAG 0x80000000u
#define TS_IP_REG(o) ((o) & ~TS_IP_FLAG)

typedef enum ts_ip_op {
  TS_IP_KERNEL,
  TS_IP_PARAMS,        /* defines the graph's inputs */
  TS_IP_RET,           /* the graph's outputs */
  TS_IP_CONST,         /* out0 = consts[aux] */
  TS_IP_MOVES,         /* parallel assignment out[k] = in[k] */
  TS_IP_DROP,          /* release in[]; `target` is the branch that leads here */
  TS_IP_JUMP,          /* pc = target */
  TS_IP_JUMP_IF_FALSE, /* in0: bool */
  TS_IP_LOOP_TEST,     /* in: counter, max trip count, condition; out0: the iteration number */
  TS_IP_LOOP_INC,      /* in0: counter */
  TS_IP_LIST_CONSTRUCT,
  TS_IP_LIST_UNPACK,
  TS_IP_TUPLE_CONSTRUCT,
  TS_IP_TUPLE_UNPACK,
  TS_IP_TUPLE_INDEX,
  TS_IP_TUPLE_SLICE,
  TS_IP_DICT_CONSTRUCT,
  TS_IP_GETATTR,
  TS_IP_SETATTR,
  TS_IP_CREATE_OBJECT,
  TS_IP_CALL_METHOD,
  TS_IP_CALL_FUNCTION,
  TS_IP_ENTER,
  TS_IP_EXIT,
  TS_IP_UNINIT,
  TS_IP_IDENTITY, /* unchecked_cast and friends when no kernel does them */
  TS_IP_TOLIST,
  TS_IP_ISINSTANCE, /* type: the type prim::isinstance tests */
  TS_IP_CHUNK, /* prim::ConstantChunk: beg chunks along dim end */
  TS_IP_FUSION, /* prim::FusionGroup: runs cache_code, its Subgraph's code */
  TS_IP_NO_KERNEL, /* an operator without a kernel: fails when it runs; name: the op (overload) */
} ts_ip_op;

typedef struct ts_ip_code ts_ip_code;

typedef struct ts_ip_insn {
  uint8_t op;          /* ts_ip_op */
  uint32_t nin, nout;
  uint32_t in, out;    /* offsets of the operand lists in code->opnds */
  uint32_t target;     /* jumps: where to; DROP: the branch before it */
  uint32_t aux;        /* CONST: index in code->consts */
  int64_t beg, end;    /* TupleSlice */
  const ts_node *node; /* for kernels (attributes) and error locations */
  const char *name;    /* GetAttr / SetAttr attribute, CallMethod method */
  const ts_type *type; /* list element / named tuple / dict / tolist type */
  ts_rt_kernel_fn fn;
  bool complex_ok; /* fn takes complex tensors (else refused: ts_rt_call_complex_check) */
  /* run-time caches */
  const ts_rt_class *cache_cls;
  int32_t cache_slot;
  ts_ip_code *cache_code;
  const char *cache_fn;
} ts_ip_insn;

struct ts_ip_code {
  ts_graph *g;
  ts_ip_insn *insns;
  uint32_t ninsns, cap_insns;
  uint32_t *opnds;
  uint32_t nopnds, cap_opnds;
  ts_iv *consts; /* owned */
  uint32_t nconsts, cap_consts;
  uint32_t nregs;
  uint32_t max_in, max_out; /* scratch for one instruction's operands */
  uint32_t nparams, nrets;
};

/* A node prepared to run on its own (ts_rt_interp_node): its one
 * instruction, whose operand lists are unused (the caller passes values). */
typedef struct ts_ip_nodeop {
  const ts_node *n;
  ts_ip_insn insn;
} ts_ip_nodeop;

struct ts_rt_interp {
  ts_rt_resolver r;
  ts_ip_code **codes;
  uint32_t ncodes, cap_codes;
  ts_ip_nodeop *nops;
  uint32_t nnops, cap_nops;
  uint32_t *nidx;    /* open addressing over nops by node address: position + 1, 0 empty */
  uint32_t nidx_cap; /* 0 or a power of two */
  ts_rt_const_fn const_fn; /* NULL: ts_rt_iv_from_constant */
  void *const_arg;
};

/* One top-level run (or code build): where errors go. */
typedef struct ts_ip_sess {
  ts_rt_interp *ip;
  ts_rt_ctx *ctx;
  ts_buf *where;
  bool where_set;
  int depth;
} ts_ip_sess;

static inline ts_iv ts_ip_ref(ts_iv_tag tag, void *o) {
  ts_iv v = {.u.o = o, .tag = tag};
  return v;
}

/* ------------------------------------------------------------- errors */

/* Writes the failing node's location and ctx->err as a compiler diagnostic
 * into the session's `where`, once (the innermost node of nested calls). */
static void ts_ip_locate(ts_ip_sess *s, const ts_node *n) {
  if (!s->where || s->where_set)
    return;
  s->where_set = true;
  ts_buf msg = {0};
  if (s->ctx->exc_class)
    ts_buf_printf(&msg, "%s: ", s->ctx->exc_class); /* as PyTorch: "builtins.ValueError: ..." */
  ts_buf_puts(&msg, s->ctx->err.data && s->ctx->err.len ? s->ctx->err.data : "unknown error");
  ts_diag d = {0};
  if (n && n->loc.file) {
    size_t len = 0;
    const char *src = s->ip->r.source ? s->ip->r.source(s->ip->r.ctx, n->loc.file, &len) : NULL;
    ts_diag_error_at(&d, n->loc.file, src, len, n->loc.line, n->loc.col, "%s", msg.data ? msg.data : "");
  } else
    ts_diag_error(&d, "%s", msg.data ? msg.data : "");
  if (d.text.data)
    ts_buf_puts(s->where, d.text.data);
  ts_diag_free(&d);
  ts_buf_free(&msg);
}

/* Records an error at node n (ctx keeps the bare message). Returns false. */
static bool ts_ip_fail_at(ts_ip_sess *s, const ts_node *n, const char *fmt, ...) TS_PRINTF(3, 4);
static bool ts_ip_fail_at(ts_ip_sess *s, const ts_node *n, const char *fmt, ...) {
  ts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  if (b.failed)
    ts_rt_oom(s->ctx);
  else
    ts_rt_fail(s->ctx, "%s", b.data ? b.data : "");
  ts_buf_free(&b);
  ts_ip_locate(s, n);
  return false;
}

/* Fails with a resolver's diagnostic. "error: msg" lines become the bare
 * message, located at n; a diagnostic with its own location (a compile error
 * in the callee's source) is kept whole as `where`, its first message in ctx. */
static bool ts_ip_fail_diag(ts_ip_sess *s, const ts_node *n, ts_diag *d, const char *fallback) {
  const char *t = d->text.data && d->text.len ? d->text.data : fallback;
  const char *at = strstr(t, ": error: ");
  if (t == fallback || strncmp(t, "error: ", 7) == 0 || !at) {
    ts_ip_fail_at(s, n, "%s", strncmp(t, "error: ", 7) == 0 ? t + 7 : t);
  } else {
    at += 9;
    const char *nl = strchr(at, '\n');
    ts_rt_fail(s->ctx, "%.*s", (int)(nl ? nl - at : (ptrdiff_t)strlen(at)), at);
    if (s->where && !s->where_set) {
      ts_buf_puts(s->where, t);
      s->where_set = true;
    }
  }
  ts_diag_free(d);
  return false;
}

/* ------------------------------------------------------------ code build */

typedef struct ts_ip_build {
  ts_ip_sess *s;
  ts_ip_code *code;
  uint32_t *reg; /* value id -> register + 1 (0: none yet) */
  uint32_t nids;
  bool oom;
} ts_ip_build;

static bool ts_ip_grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap)
    return true;
  uint64_t nc = *cap ? (uint64_t)*cap * 2 : 16;
  while (nc < need)
    nc *= 2;
  if (nc > UINT32_MAX / 2 || nc * elem > SIZE_MAX / 2)
    return false;
  void *q = ts_rt_realloc(*p, (size_t)nc * elem);
  if (!q)
    return false;
  *p = q;
  *cap = (uint32_t)nc;
  return true;
}

static uint32_t ts_ip_new_reg(ts_ip_build *b) { return b->code->nregs++; }

static uint32_t ts_ip_reg(ts_ip_build *b, const ts_value *v) {
  if (v->id >= b->nids) { /* cannot happen for a graph's own values */
    b->oom = true;
    return 0;
  }
  if (!b->reg[v->id])
    b->reg[v->id] = ts_ip_new_reg(b) + 1;
  return b->reg[v->id] - 1;
}

/* Appends an instruction with room for its operands (zeroed); returns its
 * pc, or UINT32_MAX on OOM. */
static uint32_t ts_ip_emit(ts_ip_build *b, ts_ip_op op, const ts_node *n, uint32_t nin, uint32_t nout) {
  ts_ip_code *c = b->code;
  if (b->oom || (uint64_t)c->nopnds + nin + nout > UINT32_MAX / 2 ||
      !ts_ip_grow((void **)&c->insns, &c->cap_insns, c->ninsns + 1, sizeof *c->insns) ||
      !ts_ip_grow((void **)&c->opnds, &c->cap_opnds, c->nopnds + nin + nout, sizeof *c->opnds)) {
    b->oom = true;
    return UINT32_MAX;
  }
  ts_ip_insn *I = &c->insns[c->ninsns];
  memset(I, 0, sizeof *I);
  I->op = (uint8_t)op;
  I->node = n;
  I->nin = nin;
  I->nout = nout;
  I->in = c->nopnds;
  I->out = c->nopnds + nin;
  I->cache_slot = -1;
  if (nin + nout)
    memset(c->opnds + c->nopnds, 0, (size_t)(nin + nout) * sizeof *c->opnds);
  c->nopnds += nin + nout;
  if (nin > c->max_in)
    c->max_in = nin;
  if (nout > c->max_out)
    c->max_out = nout;
  return c->ninsns++;
}

static inline uint32_t *ts_ip_ins(ts_ip_code *c, uint32_t pc) { return c->opnds + c->insns[pc].in; }
static inline uint32_t *ts_ip_outs(ts_ip_code *c, uint32_t pc) { return c->opnds + c->insns[pc].out; }

/* An instruction whose operands are the node's inputs and outputs. */
static uint32_t ts_ip_emit_node(ts_ip_build *b, ts_ip_op op, const ts_node *n) {
  uint32_t pc = ts_ip_emit(b, op, n, n->ninputs, n->noutputs);
  if (pc == UINT32_MAX)
    return pc;
  for (uint32_t i = 0; i < n->ninputs; i++)
    ts_ip_ins(b->code, pc)[i] = ts_ip_reg(b, n->inputs[i]);
  for (uint32_t i = 0; i < n->noutputs; i++)
    ts_ip_outs(b->code, pc)[i] = ts_ip_reg(b, n->outputs[i]);
  return pc;
}

/* A MOVES instruction of cnt (> 0) values; the caller fills the operands. */
static uint32_t ts_ip_emit_moves(ts_ip_build *b, const ts_node *n, uint32_t cnt) {
  return ts_ip_emit(b, TS_IP_MOVES, n, cnt, cnt);
}

static bool ts_ip_add_const(ts_ip_build *b, ts_iv v, uint32_t *idx) {
  ts_ip_code *c = b->code;
  if (!ts_ip_grow((void **)&c->consts, &c->cap_consts, c->nconsts + 1, sizeof *c->consts)) {
    ts_iv_release(v);
    b->oom = true;
    return false;
  }
  *idx = c->nconsts;
  c->consts[c->nconsts++] = v;
  return true;
}

static const ts_type *ts_ip_list_elem(const ts_type *t) {
  if (t && t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  return t && t->kind == TS_TY_LIST ? t->elems[0] : NULL;
}

/* The value of a prim::Constant (runtime/hosted/constant.c), located at n on
 * failure. */
static bool ts_ip_const_value(ts_ip_build *b, const ts_node *n, ts_iv *out) {
  ts_rt_interp *ip = b->s->ip;
  if (ip->const_fn ? ip->const_fn(ip->const_arg, b->s->ctx, n, out) : ts_rt_iv_from_constant(b->s->ctx, n, out))
    return true;
  ts_ip_locate(b->s, n);
  return false;
}

static bool ts_ip_block(ts_ip_build *b, const ts_block *blk);
static ts_ip_code *ts_ip_code_for(ts_ip_sess *s, ts_graph *g);

/* prim::FusionGroup: its "Subgraph" runs on the node's inputs like a called
 * function; the subgraph's code is built here, once per interpreter (the
 * code cache is keyed by graph). */
static bool ts_ip_emit_fusion(ts_ip_build *b, const ts_node *n) {
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  ts_graph *sub = a && a->kind == TS_ATTR_GRAPH ? a->u.g : NULL;
  if (!sub || ts_block_ninputs(sub->block) != n->ninputs || ts_block_noutputs(sub->block) != n->noutputs)
    return ts_ip_fail_at(b->s, n, "malformed prim::FusionGroup: its Subgraph does not take its inputs and give its "
                                  "outputs");
  ts_ip_code *c = ts_ip_code_for(b->s, sub);
  if (!c)
    return false;
  uint32_t pc = ts_ip_emit_node(b, TS_IP_FUSION, n);
  if (pc == UINT32_MAX)
    return false;
  b->code->insns[pc].cache_code = c;
  return true;
}

/* prim::If: JUMP_IF_FALSE to the else branch; each branch starts with a
 * DROP (filled after liveness) and ends moving its outputs into the node's. */
static bool ts_ip_emit_if(ts_ip_build *b, const ts_node *n) {
  if (n->nblocks != 2 || n->ninputs != 1 || ts_block_noutputs(n->blocks[0]) != n->noutputs ||
      ts_block_noutputs(n->blocks[1]) != n->noutputs)
    return ts_ip_fail_at(b->s, n, "malformed prim::If");
  uint32_t pj = ts_ip_emit(b, TS_IP_JUMP_IF_FALSE, n, 1, 0);
  if (pj == UINT32_MAX)
    return false;
  ts_ip_ins(b->code, pj)[0] = ts_ip_reg(b, n->inputs[0]);
  uint32_t pend = 0;
  for (int k = 0; k < 2; k++) {
    if (k == 1)
      b->code->insns[pj].target = b->code->ninsns;
    uint32_t pd = ts_ip_emit(b, TS_IP_DROP, n, 0, 0);
    if (pd == UINT32_MAX)
      return false;
    b->code->insns[pd].target = pj;
    const ts_block *blk = n->blocks[k];
    if (!ts_ip_block(b, blk))
      return false;
    if (n->noutputs) {
      uint32_t pm = ts_ip_emit(b, TS_IP_MOVES, n, n->noutputs, n->noutputs);
      if (pm == UINT32_MAX)
        return false;
      for (uint32_t i = 0; i < n->noutputs; i++) {
        ts_ip_ins(b->code, pm)[i] = ts_ip_reg(b, ts_block_output(blk, i));
        ts_ip_outs(b->code, pm)[i] = ts_ip_reg(b, n->outputs[i]);
      }
    }
    if (k == 0 && (pend = ts_ip_emit(b, TS_IP_JUMP, n, 0, 0)) == UINT32_MAX)
      return false;
  }
  b->code->insns[pend].target = b->code->ninsns;
  return !b->oom;
}

/* prim::Loop(max_trip_count, cond, carried...) with a body block
 * (i, carried...) -> (cond, carried...):
 *
 *        MOVES  max, cond, init... -> rM, rC, carried...
 *        CONST  rI = 0
 *   top: LOOP_TEST rI, rM, rC -> i      (jumps to exit when done)
 *        DROP
 *        body
 *        MOVES  cond', carried'... -> rC, carried...
 *        LOOP_INC rI
 *        JUMP top
 *  exit: DROP
 *        MOVES  carried... -> outputs
 */
static bool ts_ip_emit_loop(ts_ip_build *b, const ts_node *n) {
  if (n->nblocks != 1 || n->ninputs < 2)
    return ts_ip_fail_at(b->s, n, "malformed prim::Loop");
  const ts_block *body = n->blocks[0];
  uint32_t nc = n->ninputs - 2;
  if (n->noutputs != nc || ts_block_ninputs(body) != nc + 1 || ts_block_noutputs(body) != nc + 1)
    return ts_ip_fail_at(b->s, n, "malformed prim::Loop");
  uint32_t rM = ts_ip_new_reg(b), rC = ts_ip_new_reg(b), rI = ts_ip_new_reg(b);
  uint32_t pc = ts_ip_emit_moves(b, n, nc + 2);
  if (pc == UINT32_MAX)
    return false;
  ts_ip_ins(b->code, pc)[0] = ts_ip_reg(b, n->inputs[0]), ts_ip_outs(b->code, pc)[0] = rM;
  ts_ip_ins(b->code, pc)[1] = ts_ip_reg(b, n->inputs[1]), ts_ip_outs(b->code, pc)[1] = rC;
  for (uint32_t i = 0; i < nc; i++) {
    ts_ip_ins(b->code, pc)[i + 2] = ts_ip_reg(b, n->inputs[i + 2]);
    ts_ip_outs(b->code, pc)[i + 2] = ts_ip_reg(b, ts_block_input(body, i + 1));
  }
  uint32_t zero;
  if (!ts_ip_add_const(b, ts_iv_int(0), &zero) || (pc = ts_ip_emit(b, TS_IP_CONST, n, 0, 1)) == UINT32_MAX)
    return false;
  b->code->insns[pc].aux = zero;
  ts_ip_outs(b->code, pc)[0] = rI;
  uint32_t top = ts_ip_emit(b, TS_IP_LOOP_TEST, n, 3, 1);
  if (top == UINT32_MAX)
    return false;
  ts_ip_ins(b->code, top)[0] = rI;
  ts_ip_ins(b->code, top)[1] = rM;
  ts_ip_ins(b->code, top)[2] = rC;
  ts_ip_outs(b->code, top)[0] = ts_ip_reg(b, ts_block_input(body, 0));
  if ((pc = ts_ip_emit(b, TS_IP_DROP, n, 0, 0)) == UINT32_MAX)
    return false;
  b->code->insns[pc].target = top;
  if (!ts_ip_block(b, body) || (pc = ts_ip_emit_moves(b, n, nc + 1)) == UINT32_MAX)
    return false;
  ts_ip_ins(b->code, pc)[0] = ts_ip_reg(b, ts_block_output(body, 0)), ts_ip_outs(b->code, pc)[0] = rC;
  for (uint32_t i = 0; i < nc; i++) {
    ts_ip_ins(b->code, pc)[i + 1] = ts_ip_reg(b, ts_block_output(body, i + 1));
    ts_ip_outs(b->code, pc)[i + 1] = ts_ip_reg(b, ts_block_input(body, i + 1));
  }
  if ((pc = ts_ip_emit(b, TS_IP_LOOP_INC, n, 1, 0)) == UINT32_MAX)
    return false;
  ts_ip_ins(b->code, pc)[0] = rI;
  if ((pc = ts_ip_emit(b, TS_IP_JUMP, n, 0, 0)) == UINT32_MAX)
    return false;
  b->code->insns[pc].target = top;
  b->code->insns[top].target = b->code->ninsns;
  if ((pc = ts_ip_emit(b, TS_IP_DROP, n, 0, 0)) == UINT32_MAX)
    return false;
  b->code->insns[pc].target = top;
  if (!nc)
    return !b->oom;
  if ((pc = ts_ip_emit_moves(b, n, nc)) == UINT32_MAX)
    return false;
  for (uint32_t i = 0; i < nc; i++) {
    ts_ip_ins(b->code, pc)[i] = ts_ip_reg(b, ts_block_input(body, i + 1));
    ts_ip_outs(b->code, pc)[i] = ts_ip_reg(b, n->outputs[i]);
  }
  return !b->oom;
}

static const char *ts_ip_attr_s(const ts_node *n, const char *name) {
  const ts_attr *a = ts_node_attr(n, name);
  return a && a->kind == TS_ATTR_STR ? a->u.s : NULL;
}

/* The overload's full name for messages: "aten::add.Tensor". */
static void ts_ip_schema_name(ts_buf *b, const ts_schema *s) {
  ts_buf_puts(b, s->name);
  if (s->overload && s->overload[0]) {
    ts_buf_putc(b, '.');
    ts_buf_puts(b, s->overload);
  }
}

/* An operator nothing runs: a node the op table lacks (TS_K_OTHER, such as
 * the ops of ir/ops_pytorch.def) or one without a kernel. The code builds,
 * and the instruction fails when it runs (ts_ip_no_kernel), so that a model
 * naming it on a branch that is never taken runs. */
static bool ts_ip_emit_no_kernel(ts_ip_build *b, const ts_node *n, const ts_schema *sc) {
  uint32_t pc = ts_ip_emit_node(b, TS_IP_NO_KERNEL, n);
  if (pc == UINT32_MAX)
    return false;
  const char *name = n->kind_name;
  if (sc && sc->overload && sc->overload[0]) {
    ts_buf nm = {0};
    ts_ip_schema_name(&nm, sc);
    /* the node's graph owns the text: it lives as long as the node */
    name = nm.data ? ts_arena_strdup(&n->graph->arena, nm.data) : NULL;
    ts_buf_free(&nm);
  }
  if (!name) {
    b->oom = true;
    return false;
  }
  b->code->insns[pc].name = name;
  return true;
}

bool ts_rt_interp_no_kernel(const ts_node *n) {
  if (n->kind == TS_K_OTHER)
    return true;
  /* what ts_ip_node does itself, or refuses while building the code */
  if (n->nblocks || !n->op || (n->op->flags & TS_OPF_SPECIAL) || ts_node_is(n, TS_K_prim_unchecked_cast) ||
      ts_node_is(n, TS_K_prim_unchecked_unwrap_optional) || ts_node_is(n, TS_K_prim_TupleIndex) ||
      ts_node_is(n, TS_K_prim_tolist) || ts_node_is(n, TS_K_prim_isinstance))
    return false;
  const ts_schema *sc = ts_node_schema(n);
  return sc && !ts_rt_kernel_for(sc);
}

/* A node found in the op table: its kernel, or the interpreter's own
 * version of a few trivial prim ops when no kernel file has one. */
static bool ts_ip_emit_kernel(ts_ip_build *b, const ts_node *n) {
  ts_ip_sess *s = b->s;
  if (n->kind == TS_K_OTHER)
    return ts_ip_emit_no_kernel(b, n, NULL);
  const ts_schema *sc = ts_node_schema(n);
  ts_rt_kernel_fn fn = sc ? ts_rt_kernel_for(sc) : NULL;
  if (!fn) {
    ts_ip_op op = TS_IP_KERNEL;
    if (ts_node_is(n, TS_K_prim_unchecked_cast) || ts_node_is(n, TS_K_prim_unchecked_unwrap_optional))
      op = TS_IP_IDENTITY;
    else if (ts_node_is(n, TS_K_prim_TupleIndex))
      op = TS_IP_TUPLE_INDEX;
    if (op != TS_IP_KERNEL)
      return ts_ip_emit_node(b, op, n) != UINT32_MAX;
    if (!sc)
      return ts_ip_fail_at(s, n, "no overload of %s matches its inputs", n->kind_name);
    return ts_ip_emit_no_kernel(b, n, sc);
  }
  uint32_t pc = ts_ip_emit_node(b, TS_IP_KERNEL, n);
  if (pc == UINT32_MAX)
    return false;
  b->code->insns[pc].fn = fn;
  b->code->insns[pc].complex_ok = ts_rt_kernel_complex_ok(sc);
  return true;
}

/* Emits one node. */
static bool ts_ip_node(ts_ip_build *b, const ts_node *n) {
  ts_ip_sess *s = b->s;
  uint32_t pc;
  switch (n->kind) {
  case TS_K_prim_If:
    return ts_ip_emit_if(b, n);
  case TS_K_prim_Loop:
    return ts_ip_emit_loop(b, n);
  case TS_K_prim_Constant: {
    ts_iv v;
    uint32_t idx;
    if (n->noutputs != 1)
      return ts_ip_fail_at(s, n, "malformed prim::Constant");
    if (!ts_ip_const_value(b, n, &v) || !ts_ip_add_const(b, v, &idx))
      return false;
    if ((pc = ts_ip_emit_node(b, TS_IP_CONST, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].aux = idx;
    return true;
  }
  case TS_K_prim_ListConstruct:
    if (n->noutputs != 1 || (pc = ts_ip_emit_node(b, TS_IP_LIST_CONSTRUCT, n)) == UINT32_MAX)
      return n->noutputs == 1 ? false : ts_ip_fail_at(s, n, "malformed prim::ListConstruct");
    b->code->insns[pc].type = ts_ip_list_elem(n->outputs[0]->type);
    return true;
  case TS_K_prim_ListUnpack:
    if (n->ninputs != 1)
      return ts_ip_fail_at(s, n, "malformed prim::ListUnpack");
    return ts_ip_emit_node(b, TS_IP_LIST_UNPACK, n) != UINT32_MAX;
  case TS_K_prim_TupleConstruct: {
    if (n->noutputs != 1 || (pc = ts_ip_emit_node(b, TS_IP_TUPLE_CONSTRUCT, n)) == UINT32_MAX)
      return n->noutputs == 1 ? false : ts_ip_fail_at(s, n, "malformed prim::TupleConstruct");
    const ts_type *t = n->outputs[0]->type;
    b->code->insns[pc].type = t->kind == TS_TY_TUPLE && t->fields ? t : NULL;
    return true;
  }
  case TS_K_prim_TupleUnpack:
    if (n->ninputs != 1)
      return ts_ip_fail_at(s, n, "malformed prim::TupleUnpack");
    return ts_ip_emit_node(b, TS_IP_TUPLE_UNPACK, n) != UINT32_MAX;
  case TS_K_prim_TupleSlice: {
    const ts_attr *beg = ts_node_attr(n, "beg"), *end = ts_node_attr(n, "end");
    if (n->ninputs != 1 || n->noutputs != 1 || !beg || !end || beg->kind != TS_ATTR_INT || end->kind != TS_ATTR_INT)
      return ts_ip_fail_at(s, n, "malformed prim::TupleSlice");
    if ((pc = ts_ip_emit_node(b, TS_IP_TUPLE_SLICE, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].beg = beg->u.i;
    b->code->insns[pc].end = end->u.i;
    return true;
  }
  case TS_K_prim_DictConstruct: {
    const ts_type *t = n->noutputs == 1 ? n->outputs[0]->type : NULL;
    if (!t || n->ninputs % 2)
      return ts_ip_fail_at(s, n, "malformed prim::DictConstruct");
    if ((pc = ts_ip_emit_node(b, TS_IP_DICT_CONSTRUCT, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].type = t->kind == TS_TY_DICT ? t : NULL;
    return true;
  }
  case TS_K_prim_GetAttr:
  case TS_K_prim_SetAttr: {
    bool get = n->kind == TS_K_prim_GetAttr;
    const char *name = ts_ip_attr_s(n, "name");
    if (!name || n->ninputs != (get ? 1u : 2u) || n->noutputs != (get ? 1u : 0u))
      return ts_ip_fail_at(s, n, "malformed %s", n->kind_name);
    if ((pc = ts_ip_emit_node(b, get ? TS_IP_GETATTR : TS_IP_SETATTR, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].name = name;
    return true;
  }
  case TS_K_prim_CreateObject: {
    const ts_type *t = n->noutputs == 1 ? n->outputs[0]->type : NULL;
    if (!t || t->kind != TS_TY_CLASS || n->ninputs)
      return ts_ip_fail_at(s, n, "malformed prim::CreateObject");
    ts_diag d = {0};
    const ts_rt_class *cls = s->ip->r.cls ? s->ip->r.cls(s->ip->r.ctx, t, &d) : NULL;
    if (!cls) {
      if (!s->ip->r.cls)
        ts_diag_error(&d, "prim::CreateObject: the interpreter cannot make objects of class %s", t->name);
      return ts_ip_fail_diag(s, n, &d, "unknown class");
    }
    ts_diag_free(&d);
    if ((pc = ts_ip_emit_node(b, TS_IP_CREATE_OBJECT, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].cache_cls = cls;
    return true;
  }
  case TS_K_prim_CallMethod: {
    const char *name = ts_ip_attr_s(n, "name");
    if (!name || n->ninputs < 1)
      return ts_ip_fail_at(s, n, "malformed prim::CallMethod");
    if ((pc = ts_ip_emit_node(b, TS_IP_CALL_METHOD, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].name = name;
    return true;
  }
  case TS_K_prim_CallFunction:
    if (n->ninputs < 1)
      return ts_ip_fail_at(s, n, "malformed prim::CallFunction");
    return ts_ip_emit_node(b, TS_IP_CALL_FUNCTION, n) != UINT32_MAX;
  case TS_K_prim_Enter:
  case TS_K_prim_Exit:
    if (n->ninputs != 1)
      return ts_ip_fail_at(s, n, "malformed %s", n->kind_name);
    return ts_ip_emit_node(b, n->kind == TS_K_prim_Enter ? TS_IP_ENTER : TS_IP_EXIT, n) != UINT32_MAX;
  case TS_K_prim_Uninitialized:
    if (n->noutputs != 1)
      return ts_ip_fail_at(s, n, "malformed prim::Uninitialized");
    return ts_ip_emit_node(b, TS_IP_UNINIT, n) != UINT32_MAX;
  case TS_K_prim_tolist:
    if (n->ninputs < 1 || n->noutputs != 1)
      return ts_ip_fail_at(s, n, "malformed prim::tolist");
    if ((pc = ts_ip_emit_node(b, TS_IP_TOLIST, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].type = n->outputs[0]->type;
    return true;
  case TS_K_prim_ConstantChunk: {
    const ts_attr *ch = ts_node_attr(n, "chunks"), *dim = ts_node_attr(n, "dim");
    if (n->ninputs != 1 || !ch || !dim || ch->kind != TS_ATTR_INT || dim->kind != TS_ATTR_INT || ch->u.i < 1)
      return ts_ip_fail_at(s, n, "malformed prim::ConstantChunk");
    if ((pc = ts_ip_emit_node(b, TS_IP_CHUNK, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].beg = ch->u.i;
    b->code->insns[pc].end = dim->u.i;
    return true;
  }
  case TS_K_prim_FusionGroup:
    return ts_ip_emit_fusion(b, n);
  case TS_K_prim_fork:
    return ts_ip_fail_at(s, n, "prim::fork (torch.jit.fork) is not supported by the interpreter");
  case TS_K_prim_isinstance: {
    const ts_attr *ty = ts_node_attr(n, "types");
    if (n->ninputs != 1 || n->noutputs != 1 || !ty || ty->kind != TS_ATTR_TYPE)
      return ts_ip_fail_at(s, n, "malformed prim::isinstance");
    if ((pc = ts_ip_emit_node(b, TS_IP_ISINSTANCE, n)) == UINT32_MAX)
      return false;
    b->code->insns[pc].type = ty->u.ty;
    return true;
  }
  case TS_K_prim_Param:
  case TS_K_prim_Return:
    return ts_ip_fail_at(s, n, "malformed graph: %s inside a block", n->kind_name);
  default:
    break;
  }
  if (n->nblocks)
    return ts_ip_fail_at(s, n, "%s with blocks is not supported by the interpreter", n->kind_name);
  if (n->op && (n->op->flags & TS_OPF_SPECIAL) && !n->op->nschemas)
    return ts_ip_fail_at(s, n, "%s is not supported by the interpreter", n->kind_name);
  return ts_ip_emit_kernel(b, n);
}

static bool ts_ip_block(ts_ip_build *b, const ts_block *blk) {
  for (ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next)
    if (!ts_ip_node(b, n))
      return false;
  return !b->oom;
}

/* ----------------------------------------------------------------- liveness */

static inline bool ts_ip_bit(const uint64_t *s, uint32_t r) { return (s[r >> 6] >> (r & 63)) & 1; }
static inline void ts_ip_set(uint64_t *s, uint32_t r) { s[r >> 6] |= (uint64_t)1 << (r & 63); }
static inline void ts_ip_clr(uint64_t *s, uint32_t r) { s[r >> 6] &= ~((uint64_t)1 << (r & 63)); }

/* live-out of pc: the union of its successors' live-in sets. */
static void ts_ip_live_out(const ts_ip_code *c, const uint64_t *live, size_t W, uint32_t pc, uint64_t *out) {
  const ts_ip_insn *I = &c->insns[pc];
  memset(out, 0, W * sizeof *out);
  uint32_t succ[2], ns = 0;
  switch (I->op) {
  case TS_IP_RET:
    break;
  case TS_IP_JUMP:
    succ[ns++] = I->target;
    break;
  case TS_IP_JUMP_IF_FALSE:
  case TS_IP_LOOP_TEST:
    succ[ns++] = pc + 1;
    succ[ns++] = I->target;
    break;
  default:
    succ[ns++] = pc + 1;
    break;
  }
  for (uint32_t k = 0; k < ns; k++) {
    if (succ[k] >= c->ninsns)
      continue;
    const uint64_t *l = live + (size_t)succ[k] * W;
    for (size_t w = 0; w < W; w++)
      out[w] |= l[w];
  }
}

/* Backward dataflow over the code, then: MOVE on inputs not live after
 * their instruction (the last occurrence in it), DEAD on outputs never
 * read, and the DROP lists at branch targets (live after the branch, dead
 * on this side of it). */
static bool ts_ip_liveness(ts_ip_build *b) {
  ts_ip_code *c = b->code;
  size_t W = ((size_t)c->nregs + 63) / 64;
  if (!W)
    W = 1;
  if ((size_t)c->ninsns > SIZE_MAX / 16 / W)
    return false;
  uint64_t *live = ts_rt_calloc((size_t)c->ninsns * W, sizeof *live);
  uint64_t *out = ts_rt_malloc(W * sizeof *out);
  uint64_t *in = ts_rt_malloc(W * sizeof *in);
  if (!live || !out || !in) {
    ts_rt_free(live), ts_rt_free(out), ts_rt_free(in);
    return false;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = c->ninsns; pc-- > 0;) {
      const ts_ip_insn *I = &c->insns[pc];
      ts_ip_live_out(c, live, W, pc, in);
      for (uint32_t k = 0; k < I->nout; k++)
        ts_ip_clr(in, TS_IP_REG(c->opnds[I->out + k]));
      for (uint32_t k = 0; k < I->nin; k++)
        ts_ip_set(in, TS_IP_REG(c->opnds[I->in + k]));
      uint64_t *l = live + (size_t)pc * W;
      if (memcmp(l, in, W * sizeof *in) != 0) {
        memcpy(l, in, W * sizeof *in);
        changed = true;
      }
    }
  }
  bool ok = true;
  uint32_t ninsns = c->ninsns;
  for (uint32_t pc = 0; pc < ninsns && ok; pc++) {
    ts_ip_insn *I = &c->insns[pc];
    if (I->op == TS_IP_DROP) {
      ts_ip_live_out(c, live, W, I->target, out);
      const uint64_t *here = live + (size_t)pc * W;
      uint32_t cnt = 0;
      for (size_t w = 0; w < W; w++)
        for (uint64_t x = out[w] & ~here[w]; x; x &= x - 1)
          cnt++;
      if (!cnt)
        continue;
      if (!ts_ip_grow((void **)&c->opnds, &c->cap_opnds, c->nopnds + cnt, sizeof *c->opnds)) {
        ok = false;
        break;
      }
      I = &c->insns[pc];
      I->in = c->nopnds;
      I->nin = cnt;
      for (uint32_t r = 0; r < c->nregs; r++)
        if (ts_ip_bit(out, r) && !ts_ip_bit(here, r))
          c->opnds[c->nopnds++] = r | TS_IP_FLAG;
      continue;
    }
    ts_ip_live_out(c, live, W, pc, out);
    uint32_t *ins = c->opnds + I->in, *outs = c->opnds + I->out;
    for (uint32_t k = 0; k < I->nin; k++) {
      uint32_t r = TS_IP_REG(ins[k]);
      bool later = false;
      for (uint32_t j = k + 1; j < I->nin && !later; j++)
        later = TS_IP_REG(ins[j]) == r;
      if (!later && !ts_ip_bit(out, r))
        ins[k] |= TS_IP_FLAG;
    }
    for (uint32_t k = 0; k < I->nout; k++)
      if (!ts_ip_bit(out, TS_IP_REG(outs[k])))
        outs[k] |= TS_IP_FLAG;
  }
  ts_rt_free(live), ts_rt_free(out), ts_rt_free(in);
  return ok;
}

static void ts_ip_code_free(ts_ip_code *c) {
  if (!c)
    return;
  for (uint32_t i = 0; i < c->nconsts; i++)
    ts_iv_release(c->consts[i]);
  ts_rt_free(c->consts);
  ts_rt_free(c->insns);
  ts_rt_free(c->opnds);
  ts_rt_free(c);
}

/* Linearises graph g. */
/* The op table and the kernels' bindings, before any code is built. */
static bool ts_ip_tables(ts_ip_sess *s) {
  /* kernel tables that name unknown schemas are their files' bugs (the
   * kernel tests report them); the entries that bind still run */
  ts_diag kd = {0};
  if (!ts_ops_init(&kd))
    return ts_ip_fail_diag(s, NULL, &kd, "the op table does not parse");
  ts_diag_free(&kd);
  ts_rt_kernels_init(NULL);
  return true;
}

static ts_ip_code *ts_ip_build_code(ts_ip_sess *s, ts_graph *g) {
  ts_ip_build b = {.s = s};
  if (!ts_ip_tables(s))
    return NULL;
  b.code = ts_rt_calloc(1, sizeof *b.code);
  b.nids = g->next_value_id;
  b.reg = ts_rt_calloc((size_t)b.nids + 1, sizeof *b.reg);
  if (!b.code || !b.reg)
    goto oom;
  b.code->g = g;
  const ts_block *top = g->block;
  b.code->nparams = ts_block_ninputs(top);
  b.code->nrets = ts_block_noutputs(top);
  uint32_t pc = ts_ip_emit(&b, TS_IP_PARAMS, NULL, 0, b.code->nparams);
  if (pc == UINT32_MAX)
    goto oom;
  for (uint32_t i = 0; i < b.code->nparams; i++)
    ts_ip_outs(b.code, pc)[i] = ts_ip_reg(&b, ts_block_input(top, i));
  if (!ts_ip_block(&b, top))
    goto oom; /* reported already unless it was an allocation */
  if ((pc = ts_ip_emit(&b, TS_IP_RET, top->ret, b.code->nrets, 0)) == UINT32_MAX)
    goto oom;
  for (uint32_t i = 0; i < b.code->nrets; i++)
    ts_ip_ins(b.code, pc)[i] = ts_ip_reg(&b, ts_block_output(top, i));
  if (b.oom || !ts_ip_liveness(&b))
    goto oom;
  ts_rt_free(b.reg);
  return b.code;
oom:
  if (!s->ctx->failed) {
    ts_rt_oom(s->ctx);
    ts_ip_locate(s, NULL);
  }
  ts_rt_free(b.reg);
  ts_ip_code_free(b.code);
  return NULL;
}

/* The code of g, built on first use. */
static ts_ip_code *ts_ip_code_for(ts_ip_sess *s, ts_graph *g) {
  ts_rt_interp *ip = s->ip;
  for (uint32_t i = 0; i < ip->ncodes; i++)
    if (ip->codes[i]->g == g)
      return ip->codes[i];
  ts_ip_code *c = ts_ip_build_code(s, g);
  if (!c)
    return NULL;
  /* after the build: building may have added the codes of subgraphs */
  if (!ts_ip_grow((void **)&ip->codes, &ip->cap_codes, ip->ncodes + 1, sizeof *ip->codes)) {
    ts_ip_code_free(c);
    ts_rt_oom(s->ctx);
    ts_ip_locate(s, NULL);
    return NULL;
  }
  ip->codes[ip->ncodes++] = c;
  return c;
}

/* ------------------------------------------------------------------- run */

static bool ts_ip_exec(ts_ip_sess *s, ts_ip_code *c, const ts_iv *args, uint32_t nargs, ts_iv *ret);

/* Runs a callee's graph with `args` (borrowed); its outputs go to out. */
static bool ts_ip_call(ts_ip_sess *s, const ts_ip_insn *I, ts_ip_code *callee, const ts_iv *args, uint32_t nargs,
                       ts_iv *out, uint32_t nout) {
  if (callee->nparams != nargs)
    return ts_ip_fail_at(s, I->node, "%s: the callee takes %u arguments, %u given", I->node->kind_name,
                         (unsigned)callee->nparams, (unsigned)nargs);
  if (callee->nrets != nout)
    return ts_ip_fail_at(s, I->node, "%s: the callee returns %u values, %u expected", I->node->kind_name,
                         (unsigned)callee->nrets, (unsigned)nout);
  if (s->depth >= TS_IP_MAX_DEPTH)
    return ts_ip_fail_at(s, I->node, "maximum recursion depth exceeded (%d nested calls)", TS_IP_MAX_DEPTH);
  s->depth++;
  bool ok = ts_ip_exec(s, callee, args, nargs, out);
  s->depth--;
  if (!ok)
    ts_ip_locate(s, I->node);
  return ok;
}

/* The code of method `name` of the receiver's class (cached per
 * instruction and class). NULL with an error; *absent set (and no error) if
 * `optional` and the class has no such method. */
static ts_ip_code *ts_ip_method(ts_ip_sess *s, ts_ip_insn *I, ts_iv self, const char *name, bool optional,
                                bool *absent) {
  if (absent)
    *absent = false;
  if (self.tag != TS_IV_OBJECT || !self.u.obj) {
    if (optional) {
      *absent = true;
      return NULL;
    }
    ts_ip_fail_at(s, I->node, "method '%s' called on a %s value", name, ts_iv_tag_name(self));
    return NULL;
  }
  const ts_rt_class *cls = self.u.obj->cls;
  if (I->cache_code && I->cache_cls == cls)
    return I->cache_code;
  ts_diag d = {0};
  ts_graph *g = s->ip->r.method ? s->ip->r.method(s->ip->r.ctx, cls, name, &d) : NULL;
  if (!g) {
    if (optional) {
      ts_diag_free(&d);
      *absent = true;
      return NULL;
    }
    if (!d.text.len)
      ts_diag_error(&d, "'%s' object has no method '%s'", cls->qualname, name);
    ts_ip_fail_diag(s, I->node, &d, "no such method");
    return NULL;
  }
  ts_diag_free(&d);
  ts_ip_code *c = ts_ip_code_for(s, g);
  if (c) {
    I->cache_cls = cls;
    I->cache_code = c;
  }
  return c;
}

/* prim::tolist: nested lists of the tensor's elements. */
static bool ts_ip_tolist_rec(ts_rt_ctx *ctx, const ts_rt_tensor *t, const ts_type *ty, int32_t dim, int64_t off,
                             ts_iv *out) {
  if (dim == t->ndim) {
    const char *p = (const char *)ts_rt_tensor_data(t) + off * (int64_t)ts_dtype_size((ts_dtype)t->dtype);
    if (ty->kind == TS_TY_FLOAT)
      *out = ts_iv_double(ts_rt_load_f64(p, (ts_dtype)t->dtype));
    else if (ty->kind == TS_TY_BOOL)
      *out = ts_iv_bool(ts_rt_load_i64(p, (ts_dtype)t->dtype) != 0);
    else
      *out = ts_iv_int(ts_rt_load_i64(p, (ts_dtype)t->dtype));
    return true;
  }
  int64_t n = t->sizes[dim];
  if (n > UINT32_MAX / 2)
    return ts_rt_fail(ctx, "tolist(): dimension too large");
  ts_rt_list *l = ts_rt_list_new(ctx, ty->elems[0], (uint32_t)n);
  if (!l)
    return false;
  for (int64_t i = 0; i < n; i++) {
    ts_iv v;
    if (!ts_ip_tolist_rec(ctx, t, ty->elems[0], dim + 1, off + i * t->strides[dim], &v) ||
        !ts_rt_list_append(ctx, l, v)) {
      ts_iv_release(ts_ip_ref(TS_IV_LIST, l));
      return false;
    }
  }
  *out = ts_ip_ref(TS_IV_LIST, l);
  return true;
}

static bool ts_ip_tolist(ts_rt_ctx *ctx, const ts_iv *in, const ts_type *ty, ts_iv *out) {
  if (in[0].tag != TS_IV_TENSOR)
    return ts_rt_fail(ctx, "tolist() expects a Tensor, got %s", ts_iv_tag_name(in[0]));
  const ts_rt_tensor *t = in[0].u.t;
  int32_t depth = 0;
  const ts_type *leaf = ty;
  while (leaf->kind == TS_TY_LIST)
    leaf = leaf->elems[0], depth++;
  if (depth != t->ndim)
    return ts_rt_fail(ctx, "Output annotation list dimension and runtime tensor dimension must match for tolist()");
  ts_dtype want = leaf->kind == TS_TY_INT ? TS_DT_INT64 : leaf->kind == TS_TY_FLOAT ? TS_DT_FLOAT64
                  : leaf->kind == TS_TY_BOOL ? TS_DT_BOOL : TS_DT_NONE;
  if (want == TS_DT_NONE)
    return ts_rt_fail(ctx, "Output annotation element type must be int, float or bool for tolist()");
  /* as PyTorch: float takes float32 and float64, int only int64, bool only bool */
  if (t->dtype != want && !(want == TS_DT_FLOAT64 && t->dtype == TS_DT_FLOAT32))
    return ts_rt_fail(ctx, "Output annotation element type and runtime tensor element type must match for tolist()");
  return ts_ip_tolist_rec(ctx, t, ty, 0, 0, out);
}

/* The slot of attribute I->name in obj's class (cached per instruction). */
static bool ts_ip_slot(ts_ip_sess *s, ts_ip_insn *I, ts_iv self, int32_t *slot) {
  if (self.tag != TS_IV_OBJECT || !self.u.obj)
    return ts_ip_fail_at(s, I->node, "'%s' has no attribute '%s'", ts_iv_tag_name(self), I->name);
  const ts_rt_class *cls = self.u.obj->cls;
  if (I->cache_cls != cls) {
    int32_t k = ts_rt_class_attr_index(cls, I->name);
    if (k < 0 || (uint32_t)k >= self.u.obj->n)
      return ts_ip_fail_at(s, I->node, "'%s' object has no attribute '%s'", cls->qualname, I->name);
    I->cache_cls = cls;
    I->cache_slot = k;
  }
  *slot = I->cache_slot;
  return true;
}

/* The structural operations: `in` borrowed, `out` new references. False
 * after an error (ctx set; out holds nothing). */
static bool ts_ip_builtin(ts_ip_sess *s, ts_ip_insn *I, const ts_iv *in, ts_iv *out) {
  ts_rt_ctx *ctx = s->ctx;
  switch ((ts_ip_op)I->op) {
  case TS_IP_LIST_CONSTRUCT: {
    ts_rt_list *l = ts_rt_list_new(ctx, I->type, I->nin);
    if (!l)
      return false;
    for (uint32_t k = 0; k < I->nin; k++) {
      ts_iv_retain(in[k]);
      if (!ts_rt_list_append(ctx, l, in[k])) {
        ts_iv_release(ts_ip_ref(TS_IV_LIST, l));
        return false;
      }
    }
    out[0] = ts_ip_ref(TS_IV_LIST, l);
    return true;
  }
  case TS_IP_LIST_UNPACK: {
    if (in[0].tag != TS_IV_LIST)
      return ts_rt_fail(ctx, "prim::ListUnpack of a %s", ts_iv_tag_name(in[0]));
    const ts_rt_list *l = in[0].u.l;
    if (l->n != I->nout)
      return ts_rt_fail(ctx, "Expected %u elements in a list but found %u", (unsigned)I->nout, (unsigned)l->n);
    for (uint32_t k = 0; k < I->nout; k++) {
      out[k] = l->items[k];
      ts_iv_retain(out[k]);
    }
    return true;
  }
  case TS_IP_TUPLE_CONSTRUCT: {
    ts_rt_tuple *t = ts_rt_tuple_new(ctx, I->nin);
    if (!t)
      return false;
    t->type = I->type;
    for (uint32_t k = 0; k < I->nin; k++) {
      t->items[k] = in[k];
      ts_iv_retain(in[k]);
    }
    out[0] = ts_ip_ref(TS_IV_TUPLE, t);
    return true;
  }
  case TS_IP_TUPLE_UNPACK: {
    if (in[0].tag != TS_IV_TUPLE)
      return ts_rt_fail(ctx, "prim::TupleUnpack of a %s", ts_iv_tag_name(in[0]));
    const ts_rt_tuple *t = in[0].u.tup;
    if (t->n != I->nout)
      return ts_rt_fail(ctx, "Expected %u elements in a tuple but found %u", (unsigned)I->nout, (unsigned)t->n);
    for (uint32_t k = 0; k < I->nout; k++) {
      out[k] = t->items[k];
      ts_iv_retain(out[k]);
    }
    return true;
  }
  case TS_IP_TUPLE_INDEX: {
    if (I->nin != 2 || in[0].tag != TS_IV_TUPLE || in[1].tag != TS_IV_INT)
      return ts_rt_fail(ctx, "prim::TupleIndex expects a tuple and an int");
    const ts_rt_tuple *t = in[0].u.tup;
    int64_t i = in[1].u.i;
    if (i < 0)
      i += t->n;
    if (i < 0 || i >= (int64_t)t->n)
      return ts_rt_fail(ctx, "tuple index out of range");
    out[0] = t->items[i];
    ts_iv_retain(out[0]);
    return true;
  }
  case TS_IP_TUPLE_SLICE: {
    if (in[0].tag != TS_IV_TUPLE)
      return ts_rt_fail(ctx, "prim::TupleSlice of a %s", ts_iv_tag_name(in[0]));
    const ts_rt_tuple *t = in[0].u.tup;
    int64_t beg = I->beg < 0 ? 0 : I->beg, end = I->end > (int64_t)t->n ? (int64_t)t->n : I->end;
    uint32_t n = end > beg ? (uint32_t)(end - beg) : 0;
    ts_rt_tuple *r = ts_rt_tuple_new(ctx, n);
    if (!r)
      return false;
    for (uint32_t k = 0; k < n; k++) {
      r->items[k] = t->items[beg + k];
      ts_iv_retain(r->items[k]);
    }
    out[0] = ts_ip_ref(TS_IV_TUPLE, r);
    return true;
  }
  case TS_IP_DICT_CONSTRUCT: {
    const ts_type *t = I->type;
    ts_rt_dict *d = ts_rt_dict_new(ctx, t ? t->elems[0] : NULL, t ? t->elems[1] : NULL);
    if (!d)
      return false;
    for (uint32_t k = 0; k + 1 < I->nin; k += 2)
      if (!ts_rt_dict_set(ctx, d, in[k], in[k + 1])) {
        ts_iv_release(ts_ip_ref(TS_IV_DICT, d));
        return false;
      }
    out[0] = ts_ip_ref(TS_IV_DICT, d);
    return true;
  }
  case TS_IP_GETATTR: {
    int32_t k;
    if (!ts_ip_slot(s, I, in[0], &k))
      return false;
    out[0] = in[0].u.obj->attrs[k];
    ts_iv_retain(out[0]);
    return true;
  }
  case TS_IP_SETATTR: {
    int32_t k;
    if (!ts_ip_slot(s, I, in[0], &k))
      return false;
    ts_iv old = in[0].u.obj->attrs[k];
    ts_iv_retain(in[1]);
    in[0].u.obj->attrs[k] = in[1];
    ts_iv_release(old);
    return true;
  }
  case TS_IP_CREATE_OBJECT: {
    ts_rt_object *o = ts_rt_object_new(ctx, I->cache_cls);
    if (!o)
      return false;
    out[0] = ts_ip_ref(TS_IV_OBJECT, o);
    return true;
  }
  case TS_IP_CALL_METHOD: {
    ts_ip_code *c = ts_ip_method(s, I, in[0], I->name, false, NULL);
    return c && ts_ip_call(s, I, c, in, I->nin, out, I->nout);
  }
  case TS_IP_CALL_FUNCTION: {
    if (in[0].tag != TS_IV_FUNCTION || !in[0].u.fn)
      return ts_ip_fail_at(s, I->node, "prim::CallFunction of a %s", ts_iv_tag_name(in[0]));
    if (!I->cache_code || !I->cache_fn || strcmp(I->cache_fn, in[0].u.fn) != 0) {
      ts_diag d = {0};
      ts_graph *g = s->ip->r.function ? s->ip->r.function(s->ip->r.ctx, in[0].u.fn, &d) : NULL;
      if (!g) {
        if (!d.text.len)
          ts_diag_error(&d, "unknown function '%s'", in[0].u.fn);
        return ts_ip_fail_diag(s, I->node, &d, "unknown function");
      }
      ts_diag_free(&d);
      ts_ip_code *c = ts_ip_code_for(s, g);
      if (!c)
        return false;
      I->cache_code = c;
      I->cache_fn = in[0].u.fn;
    }
    return ts_ip_call(s, I, I->cache_code, in + 1, I->nin - 1, out, I->nout);
  }
  case TS_IP_ENTER:
  case TS_IP_EXIT: {
    /* an object without __enter__/__exit__ (torch.no_grad() and the like)
     * has nothing to do in inference */
    bool enter = I->op == TS_IP_ENTER, absent;
    ts_ip_code *c = ts_ip_method(s, I, in[0], enter ? "__enter__" : "__exit__", true, &absent);
    if (absent) {
      for (uint32_t k = 0; k < I->nout; k++)
        out[k] = ts_iv_none();
      return true;
    }
    if (!c)
      return false;
    if (enter)
      return ts_ip_call(s, I, c, in, 1, out, I->nout);
    ts_iv args[4] = {in[0], ts_iv_none(), ts_iv_none(), ts_iv_none()};
    ts_iv res[1];
    if (c->nrets != 1 || I->nout > 1)
      return ts_ip_fail_at(s, I->node, "__exit__ must return one value");
    if (!ts_ip_call(s, I, c, args, c->nparams < 4 ? c->nparams : 4, res, 1))
      return false;
    if (I->nout)
      out[0] = res[0];
    else
      ts_iv_release(res[0]);
    return true;
  }
  case TS_IP_UNINIT:
    out[0].tag = TS_IV_UNINIT;
    out[0].u.i = 0;
    return true;
  case TS_IP_IDENTITY:
    out[0] = in[0];
    ts_iv_retain(out[0]);
    return true;
  case TS_IP_TOLIST:
    return ts_ip_tolist(ctx, in, I->type, out);
  case TS_IP_ISINSTANCE:
    out[0] = ts_iv_bool(ts_iv_isinstance(in[0], I->type));
    return true;
  case TS_IP_FUSION:
    return ts_ip_call(s, I, I->cache_code, in, I->nin, out, I->nout);
  case TS_IP_NO_KERNEL:
    /* PyTorch's words for an operator without a kernel for the backend */
    return ts_rt_fail(ctx, "Could not run '%s' with arguments from the 'CPU' backend: tsaot has no kernel for this "
                      "operator", I->name);
  case TS_IP_CHUNK: {
    if (in[0].tag != TS_IV_TENSOR)
      return ts_rt_fail(ctx, "prim::ConstantChunk of a %s", ts_iv_tag_name(in[0]));
    ts_rt_tensor **parts = ts_rt_calloc(I->nout ? I->nout : 1, sizeof *parts);
    uint32_t got = 0;
    if (!parts)
      return ts_rt_oom(ctx);
    bool ok = ts_rt_chunk(ctx, in[0].u.t, I->beg, I->end, parts, I->nout, &got);
    if (ok && got != I->nout) {
      ok = ts_rt_fail(ctx, "Expected %u chunks but found %u", (unsigned)I->nout, (unsigned)got);
    }
    for (uint32_t k = 0; k < got; k++) {
      if (ok)
        out[k] = ts_iv_tensor(parts[k]);
      else
        ts_rt_tensor_release(parts[k]);
    }
    ts_rt_free(parts);
    return ok;
  }
  default:
    return ts_rt_fail(ctx, "internal error: bad instruction %d", (int)I->op);
  }
}

/* Runs an operation instruction (a kernel or a structural op): `in`
 * borrowed, `out` new references; what ts_ip_exec and ts_rt_interp_node
 * share. */
static bool ts_ip_run_insn(ts_ip_sess *s, ts_ip_insn *I, const ts_iv *in, ts_iv *out) {
  if (I->op == TS_IP_KERNEL) {
    ts_rt_call call = {.in = in, .nin = I->nin, .out = out, .nout = I->nout, .node = I->node};
    if (!I->complex_ok && !ts_rt_call_complex_check(s->ctx, &call))
      return false;
    return I->fn(s->ctx, &call);
  }
  return ts_ip_builtin(s, I, in, out);
}

static inline void ts_ip_store(ts_iv *regs, uint32_t o, ts_iv v) {
  if (o & TS_IP_FLAG) {
    ts_iv_release(v);
    return;
  }
  ts_iv old = regs[o];
  regs[o] = v;
  ts_iv_release(old);
}

/* Runs code c: args borrowed, outputs (new references) to ret. */
static bool ts_ip_exec(ts_ip_sess *s, ts_ip_code *c, const ts_iv *args, uint32_t nargs, ts_iv *ret) {
  ts_rt_ctx *ctx = s->ctx;
  if (nargs != c->nparams)
    return ts_ip_fail_at(s, NULL, "the graph takes %u arguments, %u given", (unsigned)c->nparams, (unsigned)nargs);
  size_t nslots = (size_t)c->nregs + c->max_in + c->max_out;
  ts_iv *regs = ts_rt_calloc(nslots ? nslots : 1, sizeof *regs);
  if (!regs) {
    ts_rt_oom(ctx);
    ts_ip_locate(s, NULL);
    return false;
  }
  ts_iv *sin = regs + c->nregs, *sout = sin + c->max_in;
  const uint32_t *opnds = c->opnds;
  bool ok = true;
  for (uint32_t pc = 0; pc < c->ninsns;) {
    ts_ip_insn *I = &c->insns[pc];
    const uint32_t *in = opnds + I->in, *outs = opnds + I->out;
    switch ((ts_ip_op)I->op) {
    case TS_IP_PARAMS:
      for (uint32_t k = 0; k < I->nout; k++)
        if (!(outs[k] & TS_IP_FLAG)) {
          ts_iv_retain(args[k]);
          ts_ip_store(regs, outs[k], args[k]);
        }
      pc++;
      continue;
    case TS_IP_RET:
      for (uint32_t k = 0; k < I->nin; k++) {
        uint32_t r = TS_IP_REG(in[k]);
        ret[k] = regs[r];
        if (in[k] & TS_IP_FLAG)
          regs[r] = ts_iv_none();
        else
          ts_iv_retain(ret[k]);
      }
      goto done;
    case TS_IP_CONST:
      ts_iv_retain(c->consts[I->aux]);
      ts_ip_store(regs, outs[0], c->consts[I->aux]);
      pc++;
      continue;
    case TS_IP_MOVES:
      /* all sources first: a destination may be another element's source */
      for (uint32_t k = 0; k < I->nin; k++) {
        uint32_t r = TS_IP_REG(in[k]);
        sin[k] = regs[r];
        if (in[k] & TS_IP_FLAG)
          regs[r] = ts_iv_none();
        else
          ts_iv_retain(sin[k]);
      }
      for (uint32_t k = 0; k < I->nout; k++)
        ts_ip_store(regs, outs[k], sin[k]);
      pc++;
      continue;
    case TS_IP_DROP:
      for (uint32_t k = 0; k < I->nin; k++)
        ts_iv_clear(&regs[TS_IP_REG(in[k])]);
      pc++;
      continue;
    case TS_IP_JUMP:
      pc = I->target;
      continue;
    case TS_IP_JUMP_IF_FALSE: {
      ts_iv cv = regs[TS_IP_REG(in[0])];
      if (cv.tag != TS_IV_BOOL) {
        ok = ts_ip_fail_at(s, I->node, "prim::If condition is a %s, not a bool", ts_iv_tag_name(cv));
        goto done;
      }
      pc = cv.u.b ? pc + 1 : I->target;
      continue;
    }
    case TS_IP_LOOP_TEST: {
      ts_iv iv = regs[TS_IP_REG(in[0])], mv = regs[TS_IP_REG(in[1])], cv = regs[TS_IP_REG(in[2])];
      if (mv.tag != TS_IV_INT || cv.tag != TS_IV_BOOL) {
        ok = ts_ip_fail_at(s, I->node, "prim::Loop needs an int trip count and a bool condition, got %s and %s",
                           ts_iv_tag_name(mv), ts_iv_tag_name(cv));
        goto done;
      }
      if (iv.u.i < mv.u.i && cv.u.b) {
        ts_ip_store(regs, outs[0], ts_iv_int(iv.u.i));
        pc++;
      } else
        pc = I->target;
      continue;
    }
    case TS_IP_LOOP_INC:
      regs[TS_IP_REG(in[0])].u.i++;
      pc++;
      continue;
    default:
      break;
    }
    /* an operation: gather (borrow, or take on a last use), run, release */
    for (uint32_t k = 0; k < I->nin; k++) {
      uint32_t r = TS_IP_REG(in[k]);
      sin[k] = regs[r];
      if (in[k] & TS_IP_FLAG)
        regs[r] = ts_iv_none();
    }
    bool good;
    ts_rt_profile *prof = ctx->profile;
    if (prof) {
      uint64_t t0 = ts_rt_now_ns();
      bool outer = ts_rt_profile_begin(prof);
      good = ts_ip_run_insn(s, I, sin, sout);
      ts_rt_profile_end(prof, outer, I->node, t0, false);
      for (uint32_t k = 0; good && prof->trace && k < I->nout; k++)
        ts_rt_profile_trace_out(prof, &sout[k]);
    } else
      good = ts_ip_run_insn(s, I, sin, sout);
    for (uint32_t k = 0; k < I->nin; k++)
      if (in[k] & TS_IP_FLAG)
        ts_iv_release(sin[k]);
    if (!good) {
      if (!ctx->failed)
        ts_rt_fail(ctx, "%s failed", I->node ? I->node->kind_name : "operation");
      ts_ip_locate(s, I->node);
      ok = false;
      goto done;
    }
    for (uint32_t k = 0; k < I->nout; k++)
      ts_ip_store(regs, outs[k], sout[k]);
    pc++;
  }
  /* falling off the end cannot happen: the code ends with RET */
  ok = ts_ip_fail_at(s, NULL, "internal error: the code has no return");
done:
  for (uint32_t r = 0; r < c->nregs; r++)
    ts_iv_release(regs[r]);
  ts_rt_free(regs);
  return ok;
}

/* ---------------------------------------------------------------- the API */

ts_rt_interp *ts_rt_interp_new(const ts_rt_resolver *r) {
  ts_rt_interp *ip = ts_rt_calloc(1, sizeof *ip);
  if (!ip)
    return NULL;
  if (r)
    ip->r = *r;
  return ip;
}


void ts_rt_interp_free(ts_rt_interp *ip) {
  if (!ip)
    return;
  for (uint32_t i = 0; i < ip->ncodes; i++)
    ts_ip_code_free(ip->codes[i]);
  ts_rt_free(ip->codes);
  ts_rt_free(ip->nops);
  ts_rt_free(ip->nidx);
  ts_rt_free(ip);
}

void ts_rt_interp_set_constants(ts_rt_interp *ip, ts_rt_const_fn fn, void *arg) {
  ip->const_fn = fn;
  ip->const_arg = arg;
}

bool ts_rt_interp_prepare(ts_rt_interp *ip, ts_rt_ctx *ctx, ts_graph *g, ts_buf *where) {
  ts_ip_sess s = {.ip = ip, .ctx = ctx, .where = where};
  return ts_ip_code_for(&s, g) != NULL;
}

bool ts_rt_interp_run(ts_rt_interp *ip, ts_rt_ctx *ctx, ts_graph *g, const ts_iv *args, uint32_t nargs, ts_iv *ret,
                      ts_buf *where) {
  ts_rt_clear_error(ctx);
  ts_ip_sess s = {.ip = ip, .ctx = ctx, .where = where};
  ts_ip_code *c = ts_ip_code_for(&s, g);
  return c && ts_ip_exec(&s, c, args, nargs, ret);
}

/* ------------------------------------------------------- one node at a time
 *
 * Compiled code (runtime/hosted/aot.c) runs the nodes it does not compile one by
 * one: each becomes the single instruction the code builder makes for it,
 * kept in a table keyed by the node's address, and runs through the same
 * dispatch as an instruction of a graph's code. */

static uint32_t ts_ip_node_hash(const ts_node *n, uint32_t cap) {
  uint64_t h = (uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 32) & (cap - 1);
}

static ts_ip_nodeop *ts_ip_nodeop_find(ts_rt_interp *ip, const ts_node *n) {
  if (!ip->nidx_cap)
    return NULL;
  for (uint32_t i = ts_ip_node_hash(n, ip->nidx_cap);; i = (i + 1) & (ip->nidx_cap - 1)) {
    uint32_t e = ip->nidx[i];
    if (!e)
      return NULL;
    if (ip->nops[e - 1].n == n)
      return &ip->nops[e - 1];
  }
}

/* Adds a prepared node (the table keeps at most half of its index full). */
static ts_ip_nodeop *ts_ip_nodeop_add(ts_rt_interp *ip, const ts_node *n, const ts_ip_insn *I) {
  if (!ts_ip_grow((void **)&ip->nops, &ip->cap_nops, ip->nnops + 1, sizeof *ip->nops))
    return NULL;
  if ((uint64_t)(ip->nnops + 1) * 2 > ip->nidx_cap) {
    uint32_t cap = ip->nidx_cap ? ip->nidx_cap * 2 : 64;
    if (cap > UINT32_MAX / 4)
      return NULL;
    uint32_t *idx = ts_rt_calloc(cap, sizeof *idx);
    if (!idx)
      return NULL;
    for (uint32_t k = 0; k < ip->nnops; k++) {
      uint32_t i = ts_ip_node_hash(ip->nops[k].n, cap);
      while (idx[i])
        i = (i + 1) & (cap - 1);
      idx[i] = k + 1;
    }
    ts_rt_free(ip->nidx);
    ip->nidx = idx;
    ip->nidx_cap = cap;
  }
  uint32_t k = ip->nnops++;
  ip->nops[k].n = n;
  ip->nops[k].insn = *I;
  uint32_t i = ts_ip_node_hash(n, ip->nidx_cap);
  while (ip->nidx[i])
    i = (i + 1) & (ip->nidx_cap - 1);
  ip->nidx[i] = k + 1;
  return &ip->nops[k];
}

/* The prepared instruction of n, built on first use with the code
 * builder's own emitter (a FusionGroup's Subgraph gets its code then). */
static ts_ip_nodeop *ts_ip_prepare_node(ts_ip_sess *s, const ts_node *n) {
  ts_rt_interp *ip = s->ip;
  ts_ip_nodeop *op = ts_ip_nodeop_find(ip, n);
  if (op)
    return op;
  switch (n->kind) {
  case TS_K_prim_Constant:
  case TS_K_prim_If:
  case TS_K_prim_Loop:
  case TS_K_prim_Param:
  case TS_K_prim_Return:
    ts_ip_fail_at(s, n, "%s does not run as a single node", n->kind_name);
    return NULL;
  default:
    break;
  }
  if (!ts_ip_tables(s))
    return NULL;
  ts_ip_build b = {.s = s};
  b.code = ts_rt_calloc(1, sizeof *b.code);
  b.nids = n->graph ? n->graph->next_value_id : 0;
  b.reg = ts_rt_calloc((size_t)b.nids + 1, sizeof *b.reg);
  if (b.code && b.reg && ts_ip_node(&b, n) && !b.oom) {
    if (b.code->ninsns == 1)
      op = ts_ip_nodeop_add(ip, n, &b.code->insns[0]);
    else
      ts_ip_fail_at(s, n, "internal error: %s made %u instructions", n->kind_name, (unsigned)b.code->ninsns);
  }
  if (!op && !s->ctx->failed) {
    ts_rt_oom(s->ctx);
    ts_ip_locate(s, n);
  }
  ts_rt_free(b.reg);
  ts_ip_code_free(b.code);
  return op;
}

bool ts_rt_interp_prepare_node(ts_rt_interp *ip, ts_rt_ctx *ctx, const ts_node *n) {
  ts_ip_sess s = {.ip = ip, .ctx = ctx};
  return ts_ip_prepare_node(&s, n) != NULL;
}

bool ts_rt_interp_node(ts_rt_interp *ip, ts_rt_ctx *ctx, const ts_node *n, const ts_iv *in, uint32_t nin, ts_iv *out,
                       uint32_t nout) {
  ts_ip_sess s = {.ip = ip, .ctx = ctx};
  ts_ip_nodeop *op = ts_ip_prepare_node(&s, n);
  if (!op)
    return false;
  ts_ip_insn *I = &op->insn;
  if (nin != I->nin || nout != I->nout)
    return ts_ip_fail_at(&s, n, "%s takes %u inputs and gives %u outputs; called with %u and %u", n->kind_name,
                         (unsigned)I->nin, (unsigned)I->nout, (unsigned)nin, (unsigned)nout);
  bool good = ts_ip_run_insn(&s, I, in, out);
  if (!good && !ctx->failed)
    ts_rt_fail(ctx, "%s failed", n->kind_name);
  return good;
}
