/* passes/pipeline.c: the pass registry, the default pipeline, logging.
 *
 * PyTorch runs its passes from the graph executor in a fixed order
 * (../shared/reference, "Graph Executor"); tsaot's order is
 * ts_pass_default_pipeline. Every pass is also reachable by name, so that
 * tsaot-opt -p, tsaot-run --passes and TSAOT_LOG speak the same language. */
#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- adapters */

static bool ts_pl_inline(ts_graph *g, const ts_pass_env *e) {
  if (!e->callee) {
    /* Nothing to resolve calls with. A model's graphs come inlined from the
     * frontend, and the method calls left go through module interfaces
     * (the callee is known only at run time): those stay. */
    if (ts_graph_count_kind(g, TS_K_prim_CallFunction) == 0)
      return true;
    ts_diag_error(e->d, "inline: the graph calls functions but nothing finds their graphs (give a model)");
    return false;
  }
  return ts_pass_inline(g, e->callee, e->callee_ctx, e->d);
}
static bool ts_pl_freeze(ts_graph *g, const ts_pass_env *e) {
  if (!e->module) {
    ts_diag_error(e->d, "freeze: no module object to read attributes from (freezing needs a model, not a graph text)");
    return false;
  }
  return ts_pass_freeze(g, e->module, e->d);
}
static bool ts_pl_shape_prop(ts_graph *g, const ts_pass_env *e) {
  return ts_pass_shape_prop(g, e->input_types, e->ninput_types, e->d);
}

#define TS_PL_SIMPLE(fn)                                                                                              \
  static bool ts_pl_##fn(ts_graph *g, const ts_pass_env *e) { return ts_pass_##fn(g, e->d); }
TS_PL_SIMPLE(lower_simple_tuples)
TS_PL_SIMPLE(constant_prop_immutable)
TS_PL_SIMPLE(constant_prop)
TS_PL_SIMPLE(constant_pooling)
TS_PL_SIMPLE(dce)
TS_PL_SIMPLE(cse)
TS_PL_SIMPLE(peephole)
TS_PL_SIMPLE(unroll)
TS_PL_SIMPLE(remove_mutation)
TS_PL_SIMPLE(remove_dropout)
TS_PL_SIMPLE(fold_conv_bn)
TS_PL_SIMPLE(fuse_conv_act)
TS_PL_SIMPLE(fuse)
#undef TS_PL_SIMPLE

static const ts_pass_info ts_pl_passes[] = {
    {"inline", ts_pl_inline, "replace CallFunction/CallMethod by the callee's nodes"},
    {"freeze", ts_pl_freeze, "module attributes and parameters become constants"},
    {"lower-simple-tuples", ts_pl_lower_simple_tuples, "unpack/index of a TupleConstruct reads the element"},
    {"constant-prop-immutable", ts_pl_constant_prop_immutable, "fold scalar ops, constant If/Loop"},
    {"constprop", ts_pl_constant_prop, "fold ops on constants with the runtime's kernels"},
    {"constant-pooling", ts_pl_constant_pooling, "one constant per value, hoisted"},
    {"dce", ts_pl_dce, "dead code elimination"},
    {"cse", ts_pl_cse, "common subexpression elimination"},
    {"peephole", ts_pl_peephole, "local rewrites (x + 0, size of known shapes, ...)"},
    {"unroll", ts_pl_unroll, "unroll small constant-trip loops"},
    {"remove-mutation", ts_pl_remove_mutation, "in-place ops become functional where unobservable"},
    {"remove-dropout", ts_pl_remove_dropout, "dropout in eval mode is its input"},
    {"fold-conv-bn", ts_pl_fold_conv_bn, "conv/linear + eval batch_norm into one conv/linear"},
    {"shape-prop", ts_pl_shape_prop, "specialize inputs, propagate dtypes and sizes"},
    {"fuse-conv-act", ts_pl_fuse_conv_act, "conv2d + add(residual) + relu/hardtanh/clamp into tsaot::conv2d_act"},
    {"fuse", ts_pl_fuse, "group pointwise ops into prim::FusionGroup"},
};
enum { TS_PL_NPASSES = sizeof ts_pl_passes / sizeof *ts_pl_passes };

/* fold-conv-bn runs again after shape-prop: linear + batch_norm1d meets
 * batch_norm through an If on input.dim(), which only shapes decide.
 * remove-mutation runs before cse (which skips what is written in place)
 * and again after unroll, which brings list appends into the block of their
 * ListConstruct (PyTorch runs RemoveListMutation after UnrollLoops).
 * fuse-conv-act needs shape-prop's dtypes and sizes, and runs before fuse,
 * which would otherwise take the activations into fusion groups. */
const char ts_pass_default_pipeline[] =
    "inline,freeze,lower-simple-tuples,constprop,remove-dropout,peephole,constprop,fold-conv-bn,"
    "constant-pooling,remove-mutation,dce,cse,unroll,remove-mutation,constprop,dce,shape-prop,peephole,"
    "constprop,fold-conv-bn,constant-pooling,cse,dce,fuse-conv-act,fuse,dce";

const ts_pass_info *ts_pass_find(const char *name, size_t len) {
  for (size_t i = 0; i < TS_PL_NPASSES; i++)
    if (strlen(ts_pl_passes[i].name) == len && memcmp(ts_pl_passes[i].name, name, len) == 0)
      return &ts_pl_passes[i];
  return NULL;
}

const ts_pass_info *const *ts_pass_all(uint32_t *n) {
  static const ts_pass_info *all[TS_PL_NPASSES];
  for (size_t i = 0; i < TS_PL_NPASSES; i++)
    all[i] = &ts_pl_passes[i];
  *n = TS_PL_NPASSES;
  return all;
}

/* Whether the k bytes at p are the word w ("default", "none", "all"). */
static bool ts_pl_is_word(const char *p, size_t k, const char *w) { return strlen(w) == k && memcmp(p, w, k) == 0; }

bool ts_pass_list_check(const char *names, bool log_list, const char **bad, size_t *badlen) {
  for (const char *p = names; *p;) {
    size_t k = strcspn(p, ",");
    bool word = ts_pl_is_word(p, k, "default") || ts_pl_is_word(p, k, "none") || (log_list && ts_pl_is_word(p, k, "all"));
    if (!word && !ts_pass_find(p, k)) {
      *bad = p;
      *badlen = k;
      return false;
    }
    p += k + (p[k] == ',');
  }
  return true;
}

/* ------------------------------------------------- no kernel, reachable */

static bool ts_pl_same_place(const ts_srcloc *a, const ts_srcloc *b) {
  if (!a->file || !b->file)
    return a->file == b->file;
  return a->line == b->line && a->col == b->col && strcmp(a->file, b->file) == 0;
}

static void ts_pl_missing_add(ts_pass_missing_set *s, const ts_node *n, unsigned bit) {
  for (uint32_t i = 0; i < s->n; i++)
    if (strcmp(s->v[i].op, n->kind_name) == 0 && ts_pl_same_place(&s->v[i].loc, &n->loc)) {
      s->v[i].graphs |= 1u << bit;
      return;
    }
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    ts_pass_missing *v = cap > s->cap ? realloc(s->v, cap * sizeof *v) : NULL;
    if (!v) {
      s->oom = true;
      return;
    }
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (ts_pass_missing){.op = n->kind_name, .loc = n->loc, .graphs = 1u << bit};
}

static void ts_pl_missing_block(ts_pass_missing_set *s, const ts_block *b, unsigned bit) {
  for (const ts_node *x = ts_block_first(b); x != b->ret; x = x->next) {
    if (ts_rt_interp_no_kernel(x))
      ts_pl_missing_add(s, x, bit);
    for (uint32_t i = 0; i < x->nblocks; i++)
      ts_pl_missing_block(s, x->blocks[i], bit);
    for (const ts_attr *a = x->attrs; a; a = a->next)
      if (a->kind == TS_ATTR_GRAPH && a->u.g)
        ts_pl_missing_block(s, a->u.g->block, bit);
  }
}

void ts_pass_missing_collect(ts_pass_missing_set *s, const ts_graph *g, unsigned bit) {
  if (g && bit < 32)
    ts_pl_missing_block(s, g->block, bit);
}

void ts_pass_missing_free(ts_pass_missing_set *s) {
  free(s->v);
  *s = (ts_pass_missing_set){0};
}

/* Places per op, for the order of the groups. */
static uint32_t ts_pl_missing_places(const ts_pass_missing_set *s, const char *op) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->n; i++)
    n += strcmp(s->v[i].op, op) == 0;
  return n;
}

/* The text of line `line` (1-based) of src, without its newline. */
static void ts_pl_source_line(const char *src, size_t len, int32_t line, const char **start, size_t *n) {
  *start = NULL;
  *n = 0;
  size_t i = 0;
  for (int32_t l = 1; l < line && i < len; i++)
    if (src[i] == '\n')
      l++;
  if (i >= len || line < 1)
    return;
  size_t e = i;
  while (e < len && src[e] != '\n')
    e++;
  *start = src + i;
  *n = e - i;
}

uint32_t ts_pass_missing_print(ts_buf *b, const ts_pass_missing_set *s,
                               const char *(*source)(void *ctx, const char *file, size_t *len), void *ctx,
                               const char *const *notes, uint32_t nnotes) {
  /* the ops in order: most places first, then by name; each op's places in
   * the order the graph has them */
  bool *done = calloc(s->n ? s->n : 1, sizeof *done);
  if (!done) {
    b->failed = true;
    return 0;
  }
  uint32_t nops = 0;
  for (;;) {
    int64_t best = -1;
    uint32_t best_n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
      if (done[i])
        continue;
      uint32_t k = ts_pl_missing_places(s, s->v[i].op);
      if (best < 0 || k > best_n || (k == best_n && strcmp(s->v[i].op, s->v[best].op) < 0)) {
        best = i;
        best_n = k;
      }
    }
    if (best < 0)
      break;
    nops++;
    const char *op = s->v[best].op;
    ts_buf_printf(b, "  %s: %u place%s\n", op, best_n, best_n == 1 ? "" : "s");
    for (uint32_t i = 0; i < s->n; i++) {
      const ts_pass_missing *m = &s->v[i];
      if (done[i] || strcmp(m->op, op) != 0)
        continue;
      done[i] = true;
      if (m->loc.file)
        ts_buf_printf(b, "    %s:%d:%d", m->loc.file, (int)m->loc.line, (int)m->loc.col);
      else
        ts_buf_puts(b, "    (no source place)");
      if (!(m->graphs & 1u) && notes)
        for (uint32_t k = 1; k < nnotes && k < 32; k++)
          if (m->graphs & (1u << k) && notes[k]) {
            ts_buf_printf(b, " (%s)", notes[k]);
            break;
          }
      size_t len = 0;
      const char *src = m->loc.file && source ? source(ctx, m->loc.file, &len) : NULL;
      const char *line = NULL;
      size_t n = 0;
      if (src)
        ts_pl_source_line(src, len, m->loc.line, &line, &n);
      while (n && (*line == ' ' || *line == '\t'))
        line++, n--;
      if (n)
        ts_buf_printf(b, ": %.*s", (int)(n > 200 ? 200 : n), line);
      ts_buf_putc(b, '\n');
    }
  }
  free(done);
  return nops;
}

/* ------------------------------------------------------------ running */

double ts_pass_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

bool ts_pass_past_deadline(double deadline, double time_limit, const char *where, ts_diag *d) {
  if (deadline <= 0 || ts_pass_now() <= deadline)
    return false;
  ts_diag_error(d, "compilation passed its time limit of %g s in %s (raise it with --time-limit)", time_limit, where);
  return true;
}

/* Whether `name` is in the comma-separated `list` ("all" matches all). */
static bool ts_pl_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    size_t k = strcspn(p, ",");
    if (ts_pl_is_word(p, k, "all") || (k == n && memcmp(p, name, n) == 0))
      return true;
    p += k + (p[k] == ',');
  }
  return false;
}

static void ts_pl_log(const ts_pass_env *e, const char *list, const char *name, const ts_graph *g) {
  if (!ts_pl_listed(list, name))
    return;
  ts_buf own = {0};
  ts_buf *b = e->log ? e->log : &own;
  ts_buf_printf(b, "# after %s (%u nodes)\n", name, ts_graph_count_nodes(g));
  ts_graph_print(b, g);
  if (!e->log) {
    if (own.data)
      fputs(own.data, stderr);
    ts_buf_free(&own);
  }
}

bool ts_pass_run_list(ts_graph *g, const char *names, const ts_pass_env *env) {
  ts_pass_env none = {0};
  const ts_pass_env *e = env ? env : &none;
  const char *list = e->log_passes ? e->log_passes : getenv("TSAOT_LOG");
  for (const char *p = names; p && *p;) {
    size_t k = strcspn(p, ",");
    if (ts_pl_is_word(p, k, "default") || ts_pl_is_word(p, k, "none")) {
      if (k == 7 && !ts_pass_run_list(g, ts_pass_default_pipeline, e))
        return false;
      p += k + (p[k] == ',');
      continue;
    }
    const ts_pass_info *info = ts_pass_find(p, k);
    if (!info) {
      ts_diag_error(e->d, "unknown pass '%.*s'", (int)k, p);
      return false;
    }
    if (!info->run(g, e)) {
      ts_diag_error(e->d, "pass '%s' failed", info->name);
      return false;
    }
    if (!e->no_verify && !ts_graph_verify(g, e->d)) {
      ts_diag_error(e->d, "the graph does not verify after pass '%s' (a bug in the pass)", info->name);
      return false;
    }
    ts_pl_log(e, list, info->name, g);
    char where[64];
    snprintf(where, sizeof where, "pass '%s'", info->name);
    if (ts_pass_past_deadline(e->deadline, e->time_limit, where, e->d))
      return false;
    p += k + (p[k] == ',');
  }
  return true;
}
