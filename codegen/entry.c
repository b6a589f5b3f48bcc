/* codegen/entry.c: the whole model as one LLVM module.
 *
 * What ts_cg_model_build emits (runtime/hosted/aot.h is the other side):
 *   - NAME.graph / NAME.fallback: the graphs' texts (ts_graph_print), which
 *     the runtime parses at init; this file parses them back first and
 *     compiles what it read, so node numbers and value types agree with
 *     the runtime by construction;
 *   - NAME.weights: every tensor constant's bytes, 64-byte aligned,
 *     read-only, shared between the two graphs where they share storage;
 *   - the fused kernels (fusion.c), for the groups it can lower;
 *   - NAME.entry: the graph as code. Every value has a slot (a ts_iv) in a
 *     frame on the stack; prim::If and prim::Loop become branches and
 *     loops; compiled groups run through ts_rt_aot_fusion, every other node
 *     through ts_rt_aot_call (its runtime kernel); a value's slot is
 *     released after its last use in the block that defines it, and a
 *     block's values when the block ends;
 *   - NAME.desc (ts_rt_aot_desc) and the exported wrappers NAME_run ... ,
 *     and NAME_signature (the descriptor's signature text).
 * PyTorch compiles fusion groups only and interprets the rest; this does
 * the same with the interpreter's dispatch loop replaced by straight-line
 * calls.
 */
#include "codegen.h"

#include "aot.h"
#include "passes.h"
#include "tsaot.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(TS_CG_LEVELS == TS_RT_AOT_KERNEL_LEVELS, "codegen.h and hosted/aot.h count the kernel copies alike");

static double ts_en_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ state */

typedef struct ts_en {
  ts_cg_module *m;
  const ts_cg_options *o;
  ts_diag *d;
  ts_graph *g;          /* the graph read back from its text */
  ts_graph *fb;         /* the fallback read back, or NULL */
  LLVMBuilderRef b;
  LLVMTypeRef t_iv;     /* { i64, i32 }: ts_iv */
  LLVMValueRef fn;      /* the entry function */
  LLVMValueRef st, ctx, args, rets;
  LLVMValueRef frame;   /* [nslots x ts_iv] */
  LLVMValueRef pin, pout; /* scratch arrays of slot pointers */
  LLVMValueRef bool_tmp, int_tmp;
  LLVMBasicBlockRef fail;
  uint32_t *slot;       /* by value id: frame slot, UINT32_MAX: none */
  uint32_t nslots;
  uint32_t *num;        /* by node id: its number (ts_rt_aot_number_nodes) */
  uint32_t *pos;        /* by node id: its position in its block */
  LLVMValueRef *kernel; /* by node id: the compiled fusion kernel's copies (a table of m->nlevels), or NULL */
  ts_cg_memplan plan;
  uint32_t maxin, maxout;
  ts_cg_stats *stats;
  /* runtime functions */
  LLVMTypeRef ty_call, ty_const, ty_fusion, ty_slot1, ty_slot2, ty_setint, ty_getb, ty_geti;
  LLVMValueRef f_call, f_const, f_fusion, f_release, f_copy, f_setint, f_getb, f_geti;
} ts_en;

static bool ts_en_oom(ts_en *e) {
  ts_diag_error(e->d, "out of memory while generating code");
  return false;
}

static LLVMValueRef ts_en_i32(ts_en *e, uint64_t v) { return LLVMConstInt(e->m->t_i32, v, 0); }
static LLVMValueRef ts_en_i64(ts_en *e, int64_t v) { return LLVMConstInt(e->m->t_i64, (unsigned long long)v, 1); }


/* `nbytes` bytes of `data`. */
static LLVMValueRef ts_en_global_bytes(ts_en *e, const char *name, const void *data, size_t nbytes, unsigned align) {
  return ts_cg_module_const(e->m, name, LLVMConstStringInContext(e->m->ctx, (const char *)data, (unsigned)nbytes, 1), align);
}

/* A NUL-terminated string. */
static LLVMValueRef ts_en_cstring(ts_en *e, const char *name, const char *s, size_t len) {
  return ts_cg_module_const(e->m, name, LLVMConstStringInContext(e->m->ctx, s, (unsigned)len, 0), 1);
}

/* An array of n integers of type `ty` (i32 or i64) from v64 or v32. */
static LLVMValueRef ts_en_global_ints(ts_en *e, const char *name, LLVMTypeRef ty, const int64_t *v64,
                                      const int32_t *v32, uint32_t n) {
  LLVMValueRef *el = malloc((n ? n : 1) * sizeof *el);
  if (!el)
    return NULL;
  for (uint32_t i = 0; i < n; i++)
    el[i] = LLVMConstInt(ty, (unsigned long long)(v64 ? v64[i] : (int64_t)v32[i]), 1);
  LLVMValueRef init = LLVMConstArray(ty, el, n);
  free(el);
  return ts_cg_module_const(e->m, name, init, v64 ? 8 : 4);
}

static LLVMValueRef ts_en_global_i64s(ts_en *e, const char *name, const int64_t *v, uint32_t n) {
  return ts_en_global_ints(e, name, e->m->t_i64, v, NULL, n);
}

/* ------------------------------------------------------- reading back */

/* A Tensor[] constant prints as "[<Tensors>]" and reads back empty: it
 * becomes one tensor constant per element and a prim::ListConstruct, which
 * the text keeps. */
static bool ts_en_split_tensor_lists(ts_en *e, ts_block *blk) {
  for (ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next) {
    for (uint32_t b = 0; b < n->nblocks; b++)
      if (!ts_en_split_tensor_lists(e, n->blocks[b]))
        return false;
    const ts_attr *a = ts_node_is(n, TS_K_prim_Constant) ? ts_node_attr(n, "value") : NULL;
    if (!a || a->kind != TS_ATTR_TENSORS || !n->noutputs)
      continue;
    ts_graph *g = ts_node_graph(n);
    ts_node *lc = ts_node_new(g, TS_K_prim_ListConstruct, 0);
    if (!lc || !ts_node_add_output(lc, n->outputs[0]->type))
      return ts_en_oom(e);
    ts_node_insert_after(lc, n);
    for (size_t i = 0; i < a->len; i++) {
      const ts_tconst *tc = a->u.ts[i];
      ts_tensor_info info = {.dtype = tc->dtype,
                             .undefined = -1,
                             .device = {.type = TS_DEV_CPU, .index = -1},
                             .rank = tc->rank,
                             .sizes = tc->sizes,
                             .strides = tc->strides};
      ts_node *c = ts_node_new(g, TS_K_prim_Constant, 0);
      const ts_type *ty = ts_type_tensor(ts_graph_arena(g), &info);
      if (!c || !ty || !ts_node_add_output(c, ty) || !ts_node_set_t(c, "value", tc))
        return ts_en_oom(e);
      ts_node_insert_before(c, lc);
      if (!ts_node_add_input(lc, c->outputs[0]))
        return ts_en_oom(e);
    }
    ts_value_replace_all_uses(n->outputs[0], lc->outputs[0]);
    n = lc; /* n itself is dead now; DCE is not needed for a constant */
  }
  return true;
}

/* Prints g and parses the text back; tensor constants of the copy get the
 * original's data (the text has none). */
static ts_graph *ts_en_reparse(ts_en *e, ts_graph *g, const char *what, ts_buf *text) {
  ts_graph_print(text, g);
  if (text->failed)
    return ts_en_oom(e), NULL;
  ts_graph *r = ts_graph_parse(what, text->data, text->len, e->d);
  if (!r) {
    ts_diag_error(e->d, "internal error: the %s does not read back from its text", what);
    return NULL;
  }
  uint32_t n = ts_rt_aot_tensor_consts(g, NULL), n2 = ts_rt_aot_tensor_consts(r, NULL);
  ts_node **a = calloc(n ? n : 1, sizeof *a), **c = calloc(n2 ? n2 : 1, sizeof *c);
  bool ok = a && c && n == n2;
  if (ok) {
    ts_rt_aot_tensor_consts(g, a);
    ts_rt_aot_tensor_consts(r, c);
    for (uint32_t i = 0; ok && i < n; i++) {
      const ts_attr *at = ts_node_attr(a[i], "value");
      ok = at && at->kind == TS_ATTR_TENSOR && at->u.t && at->u.t->data && ts_node_set_t(c[i], "value", at->u.t);
    }
  }
  free(a);
  free(c);
  if (!ok) {
    ts_graph_free(r);
    ts_diag_error(e->d, "internal error: the %s's tensor constants do not read back (%u, %u)", what, n, n2);
    return NULL;
  }
  return r;
}

/* ------------------------------------------------------------- weights */

typedef struct ts_en_wentry {
  const void *data;
  uint64_t extent, offset;
} ts_en_wentry;

typedef struct ts_en_weights {
  ts_buf bytes;
  ts_en_wentry *ents;
  uint32_t n, cap;
  ts_rt_aot_tconst *tc;
  uint32_t ntc;
} ts_en_weights;

/* Bytes from the first element to one past the last one the view reaches. */
static uint64_t ts_en_extent(const ts_tconst *t) {
  size_t es = ts_dtype_size((ts_dtype)t->dtype);
  uint64_t last = 0;
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->sizes[i] == 0)
      return 0;
    last += (uint64_t)(t->sizes[i] - 1) * (uint64_t)t->strides[i];
  }
  return (last + 1) * es;
}

static bool ts_en_weights_add(ts_en *e, ts_en_weights *w, ts_node **nodes, uint32_t n) {
  ts_rt_aot_tconst *tc = realloc(w->tc, (w->ntc + n + 1) * sizeof *tc);
  if (!tc)
    return ts_en_oom(e);
  w->tc = tc;
  for (uint32_t i = 0; i < n; i++) {
    const ts_tconst *t = ts_node_attr(nodes[i], "value")->u.t;
    uint64_t ext = ts_en_extent(t), off = UINT64_MAX;
    /* the same storage, or the same bytes: the two graphs fold their
     * conv+bn weights separately into equal tensors */
    for (uint32_t k = 0; k < w->n; k++)
      if ((w->ents[k].data == t->data && w->ents[k].extent >= ext) ||
          (w->ents[k].extent == ext && ext && !memcmp(w->bytes.data + w->ents[k].offset, t->data, ext))) {
        off = w->ents[k].offset;
        break;
      }
    if (off == UINT64_MAX) {
      while (w->bytes.len % 64)
        ts_buf_putc(&w->bytes, 0);
      off = w->bytes.len;
      ts_buf_putn(&w->bytes, t->data, ext);
      if (w->bytes.failed)
        return ts_en_oom(e);
      if (w->n == w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 64;
        ts_en_wentry *ne = realloc(w->ents, cap * sizeof *ne);
        if (!ne)
          return ts_en_oom(e);
        w->ents = ne;
        w->cap = cap;
      }
      w->ents[w->n++] = (ts_en_wentry){t->data, ext, off};
    }
    w->tc[w->ntc++] = (ts_rt_aot_tconst){.offset = off,
                                         .nbytes = ext,
                                         .dtype = t->dtype,
                                         .rank = t->rank,
                                         .sizes = t->sizes,
                                         .strides = t->strides,
                                         .flags = nodes[i]->flags & TS_NODE_NEVER_WRITTEN
                                                      ? TS_RT_AOT_TCONST_NEVER_WRITTEN
                                                      : 0};
  }
  return true;
}

/* The tconst table as a global: { i64 offset, i64 nbytes, i32 dtype, i32
 * rank, ptr sizes, ptr strides, i32 flags } per entry. */
static LLVMValueRef ts_en_tconst_table(ts_en *e, const ts_en_weights *w) {
  ts_cg_module *m = e->m;
  LLVMTypeRef el[7] = {m->t_i64, m->t_i64, m->t_i32, m->t_i32, m->t_ptr, m->t_ptr, m->t_i32};
  LLVMTypeRef ty = LLVMStructTypeInContext(m->ctx, el, 7, 0);
  LLVMValueRef *rows = malloc((w->ntc ? w->ntc : 1) * sizeof *rows);
  if (!rows)
    return NULL;
  char name[64];
  for (uint32_t i = 0; i < w->ntc; i++) {
    const ts_rt_aot_tconst *t = &w->tc[i];
    snprintf(name, sizeof name, "%s.tc%u.sizes", e->o->name, i);
    LLVMValueRef sz = ts_en_global_i64s(e, name, t->sizes, (uint32_t)t->rank);
    snprintf(name, sizeof name, "%s.tc%u.strides", e->o->name, i);
    LLVMValueRef sd = ts_en_global_i64s(e, name, t->strides, (uint32_t)t->rank);
    if (!sz || !sd) {
      free(rows);
      return NULL;
    }
    LLVMValueRef f[7] = {ts_en_i64(e, (int64_t)t->offset), ts_en_i64(e, (int64_t)t->nbytes),
                         ts_en_i32(e, (uint32_t)t->dtype), ts_en_i32(e, (uint32_t)t->rank), sz, sd,
                         ts_en_i32(e, t->flags)};
    rows[i] = LLVMConstNamedStruct(ty, f, 7);
  }
  LLVMValueRef init = LLVMConstArray(ty, rows, w->ntc);
  free(rows);
  snprintf(name, sizeof name, "%s.tconsts", e->o->name);
  return ts_cg_module_const(e->m, name, init, 0);
}

/* ---------------------------------------------------------------- specs */

typedef struct ts_en_spec {
  int32_t kind, dtype, ndim;
  uint32_t nsizes; /* ndim; a list's length: 1 */
  int64_t *sizes;
  char *path;      /* input specs of an argument that is not one plain slot: "xs[1]" */
} ts_en_spec;

typedef struct ts_en_specs {
  ts_en_spec *v;
  uint32_t n, cap;
  bool dynamic; /* a list, an optional, ...: the output count is not static */
  bool oom;
} ts_en_specs;

static bool ts_en_spec_push(ts_en_specs *s, int32_t kind, int32_t dtype, int32_t ndim, const int64_t *sizes) {
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 8;
    ts_en_spec *nv = realloc(s->v, cap * sizeof *nv);
    if (!nv)
      return !(s->oom = true);
    s->v = nv;
    s->cap = cap;
  }
  ts_en_spec *p = &s->v[s->n++];
  uint32_t nsizes = (kind & TSAOT_SPEC_KIND_MASK) == TSAOT_SPEC_LENGTH ? 1 : ndim > 0 ? (uint32_t)ndim : 0;
  *p = (ts_en_spec){kind, dtype, ndim, nsizes, NULL, NULL};
  if (nsizes) {
    if (!(p->sizes = malloc(nsizes * sizeof *p->sizes)))
      return !(s->oom = true);
    for (uint32_t i = 0; i < nsizes; i++)
      p->sizes[i] = sizes && sizes[i] >= 0 ? sizes[i] : -1;
  }
  return true;
}

static void ts_en_specs_free(ts_en_specs *s) {
  for (uint32_t i = 0; i < s->n; i++) {
    free(s->v[i].sizes);
    free(s->v[i].path);
  }
  free(s->v);
}

/* One output: a tensor (dtype -1 when not fixed), an int, float or bool;
 * a tuple element by element. */
static bool ts_en_spec_of(ts_en_specs *s, const ts_type *t) {
  switch (t->kind) {
  case TS_TY_TENSOR: {
    const ts_tensor_info *ti = t->tensor;
    if (!ti)
      return ts_en_spec_push(s, 0, -1, -1, NULL);
    return ts_en_spec_push(s, 0, ti->dtype, ti->sizes ? ti->rank : -1, ti->sizes);
  }
  case TS_TY_INT:
    return ts_en_spec_push(s, 1, TS_DT_INT64, 0, NULL);
  case TS_TY_FLOAT:
    return ts_en_spec_push(s, 2, TS_DT_FLOAT64, 0, NULL);
  case TS_TY_BOOL:
    return ts_en_spec_push(s, 3, TS_DT_BOOL, 0, NULL);
  case TS_TY_TUPLE:
    for (uint32_t i = 0; i < t->n; i++)
      if (!ts_en_spec_of(s, t->elems[i]))
        return false;
    return true;
  case TS_TY_NONE:
    return true; /* None writes nothing */
  default:
    break;
  }
  s->dynamic = true;
  return true;
}

/* The input spec of a leaf slot: `decl` the argument's declared type (an
 * Optional gets the flag), `t` the compiled graph's type of the value. */
static bool ts_en_spec_leaf(ts_en_specs *s, const ts_type *decl, const ts_type *t, int32_t flags) {
  if (decl->kind == TS_TY_OPTIONAL)
    flags |= TSAOT_SPEC_OPTIONAL;
  while (decl->kind == TS_TY_OPTIONAL)
    decl = decl->elems[0];
  while (t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  static const int64_t any = -1;
  switch (decl->kind) {
  case TS_TY_INT:
  case TS_TY_SYMINT:
    return ts_en_spec_push(s, TSAOT_SPEC_INT | flags, TS_DT_INT64, 0, NULL);
  case TS_TY_FLOAT:
  case TS_TY_NUMBER: /* any 0-d number: described as a float */
    return ts_en_spec_push(s, TSAOT_SPEC_FLOAT | flags, TS_DT_FLOAT64, 0, NULL);
  case TS_TY_BOOL:
    return ts_en_spec_push(s, TSAOT_SPEC_BOOL | flags, TS_DT_BOOL, 0, NULL);
  case TS_TY_STR:
    return ts_en_spec_push(s, TSAOT_SPEC_STR | flags, TS_DT_UINT8, 1, &any);
  case TS_TY_LIST: {
    ts_type_kind ek = decl->elems[0]->kind;
    ts_dtype dt = ek == TS_TY_INT ? TS_DT_INT64 : ek == TS_TY_FLOAT ? TS_DT_FLOAT64 : TS_DT_BOOL;
    return ts_en_spec_push(s, TSAOT_SPEC_LIST | flags, dt, 1, &any);
  }
  default: {
    const ts_tensor_info *ti = t->kind == TS_TY_TENSOR ? t->tensor : NULL;
    if (!ti)
      return ts_en_spec_push(s, TSAOT_SPEC_TENSOR | flags, -1, -1, NULL);
    return ts_en_spec_push(s, TSAOT_SPEC_TENSOR | flags, ti->dtype, ti->sizes ? ti->rank : -1, ti->sizes);
  }
  }
}

/* Walks an argument's specs: its declared type, its name for the specs'
 * paths, the compiled graph's inputs for its leaves. */
typedef struct ts_en_argw {
  ts_en_specs *s;
  ts_graph *g;
  uint32_t leaf;     /* the next graph input a leaf takes */
  bool named;        /* the argument is not one plain slot: paths */
  const char *name;
  uint32_t arg, depth;
  uint32_t idx[TS_RT_IO_MAX_DEPTH + 1];
} ts_en_argw;

static bool ts_en_argw_path(ts_en_argw *w) {
  if (!w->named || w->s->oom)
    return !w->s->oom;
  char buf[160];
  ts_rt_io_path(buf, sizeof buf, w->name, w->arg, w->idx, w->depth);
  if (!(w->s->v[w->s->n - 1].path = strdup(buf)))
    return !(w->s->oom = true);
  return true;
}

/* The specs of a specialisation's argument: its form (ts_pass_spec_leaves);
 * `flags` TSAOT_SPEC_OPTIONAL for the first slot of an Optional's value. */
static bool ts_en_specs_form(ts_en_argw *w, const ts_pass_form *f, const ts_type *decl, int32_t flags) {
  if (decl->kind == TS_TY_OPTIONAL)
    flags |= TSAOT_SPEC_OPTIONAL;
  const ts_type *u = decl;
  while (u->kind == TS_TY_OPTIONAL)
    u = u->elems[0];
  bool ok = true;
  switch (f->kind) {
  case TS_PASS_FORM_NONE:
    return ts_en_spec_push(w->s, TSAOT_SPEC_NONE | TSAOT_SPEC_OPTIONAL, TS_DT_NONE, 0, NULL) && ts_en_argw_path(w);
  case TS_PASS_FORM_LEAF:
    if (w->leaf >= ts_block_ninputs(w->g->block))
      return false;
    return ts_en_spec_leaf(w->s, u, ts_block_input(w->g->block, w->leaf++)->type, flags) && ts_en_argw_path(w);
  case TS_PASS_FORM_LIST: {
    int64_t n = f->n;
    ok = ts_en_spec_push(w->s, TSAOT_SPEC_LENGTH | flags, TS_DT_INT64, 0, &n) && ts_en_argw_path(w);
    flags = 0;
    break;
  }
  case TS_PASS_FORM_TUPLE:
    break;
  }
  uint32_t d = w->depth++;
  for (uint32_t i = 0; i < f->n && ok; i++) {
    w->idx[d] = i;
    ok = ts_en_specs_form(w, &f->elems[i], f->kind == TS_PASS_FORM_TUPLE ? u->elems[i] : u->elems[0], i ? 0 : flags);
  }
  w->depth = d;
  return ok;
}

/* The template specs of an argument of type t compiled without an
 * example (t: the compiled graph's input type, refinements and all). */
static bool ts_en_specs_template(ts_en_argw *w, const ts_type *t, int32_t flags) {
  if (t->kind == TS_TY_OPTIONAL)
    flags |= TSAOT_SPEC_OPTIONAL | TS_RT_AOT_SPEC_OPEN;
  while (t->kind == TS_TY_OPTIONAL)
    t = t->elems[0];
  if (ts_rt_io_leaf(t))
    return ts_en_spec_leaf(w->s, t, t, flags) && ts_en_argw_path(w);
  bool ok = true;
  uint32_t d = w->depth;
  if (t->kind == TS_TY_LIST) {
    static const int64_t any = -1;
    ok = ts_en_spec_push(w->s, TSAOT_SPEC_LENGTH | flags, TS_DT_INT64, 0, &any) && ts_en_argw_path(w);
    w->idx[w->depth++] = 0;
    ok = ok && ts_en_specs_template(w, t->elems[0], 0);
  } else {
    w->depth++;
    for (uint32_t i = 0; i < t->n && ok; i++) {
      w->idx[d] = i;
      /* the flag goes on the first slot: None stands for them all */
      ok = ts_en_specs_template(w, t->elems[i], i ? 0 : flags);
    }
  }
  w->depth = d;
  return ok;
}

static void ts_en_spec_text(ts_buf *b, const ts_en_spec *sp) {
  static const char *const kinds[] = {"Tensor", "int", "float", "bool", "None (TSAOT_NONE)"};
  int kind = sp->kind & TSAOT_SPEC_KIND_MASK;
  if (kind == TSAOT_SPEC_LENGTH) {
    if (sp->sizes[0] >= 0)
      ts_buf_printf(b, "a list's length, %lld (a 0-d int64)", (long long)sp->sizes[0]);
    else
      ts_buf_puts(b, "a list's length (a 0-d int64; the specs of one element follow)");
  } else if (kind == TSAOT_SPEC_STR) {
    ts_buf_puts(b, "str (a 1-d uint8 tensor of UTF-8)");
  } else if (kind == TSAOT_SPEC_LIST) {
    ts_buf_printf(b, "List[%s] (a 1-d %s tensor)",
                  sp->dtype == TS_DT_INT64 ? "int" : sp->dtype == TS_DT_FLOAT64 ? "float" : "bool",
                  ts_dtype_name((ts_dtype)sp->dtype));
  } else if (kind != TSAOT_SPEC_TENSOR) {
    ts_buf_puts(b, kinds[kind < 5 ? kind : 0]);
  } else {
    ts_buf_puts(b, sp->dtype >= 0 ? ts_dtype_name((ts_dtype)sp->dtype) : "Tensor");
    if (sp->ndim < 0) {
      ts_buf_puts(b, "[...]");
    } else {
      ts_buf_putc(b, '[');
      for (int32_t i = 0; i < sp->ndim; i++) {
        if (sp->sizes[i] >= 0)
          ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)sp->sizes[i]);
        else
          ts_buf_printf(b, "%s?", i ? ", " : "");
      }
      ts_buf_putc(b, ']');
    }
  }
  if ((sp->kind & TSAOT_SPEC_OPTIONAL) && kind != TSAOT_SPEC_NONE)
    ts_buf_puts(b, (sp->kind & TS_RT_AOT_SPEC_OPEN) ? ", or None" : "; None runs in the interpreter");
}

/* The input specs, the signature ("name: type\n" per argument, aot.h)
 * and the slot count (-1: it varies), with the specs' text in the stats:
 * "input 0: Float[4, 16]", and for an argument that is not one plain slot
 * "input 3 (key_padding_mask): None (TSAOT_NONE)". */
static bool ts_en_inputs(ts_en *e, ts_en_specs *ins, ts_buf *sig, int32_t *nslots) {
  const ts_cg_options *o = e->o;
  ts_graph *g = e->g;
  ts_buf *text = &e->stats->specs;
  bool has_self = ts_block_ninputs(g->block) && ts_block_input(g->block, 0)->type->kind == TS_TY_CLASS;
  uint32_t nargs = o->arg_types ? o->nargs : ts_block_ninputs(g->block) - has_self;
  if (o->arg_forms && (!o->arg_types || !has_self)) {
    ts_diag_error(e->d, "internal error: argument forms without their types, or a graph without self");
    return false;
  }
  bool fixed = true;
  ts_en_argw w = {.s = ins, .g = g, .leaf = 1};
  ts_buf_puts(text, "forward(");
  for (uint32_t k = 0; k < nargs; k++) {
    const ts_value *in = o->arg_types ? NULL : ts_block_input(g->block, has_self + k);
    const ts_type *decl = in ? in->type : o->arg_types[k];
    const char *name = in ? in->name : o->arg_names ? o->arg_names[k] : NULL;
    if (name && strpbrk(name, ":\n"))
      name = NULL;
    char shown[160];
    ts_rt_io_path(shown, sizeof shown, name, k, NULL, 0);
    ts_buf why = {0};
    bool ok = ts_rt_io_passable(decl, &why);
    if (!ok) {
      ts_buf tn = {0};
      ts_type_print(&tn, decl);
      ts_diag_error(e->d, "forward's argument %u (%s) of type %s cannot cross the C ABI: %s", k + 1, shown,
                    tn.data ? tn.data : "?", why.data ? why.data : "out of memory");
      ts_buf_free(&tn);
    }
    ts_buf_free(&why);
    if (!ok)
      return false;
    /* the runtime reads the type back with ts_type_parse: it must come
     * back the same */
    ts_buf tt = {0};
    ts_type_print(&tt, decl);
    ts_arena ta;
    ts_arena_init(&ta, 0);
    ts_diag td = {0};
    td.max_errors = 1;
    const ts_type *back = tt.failed ? NULL : ts_type_parse(&ta, tt.data ? tt.data : "", tt.len, &td);
    ok = back && ts_type_equal(back, decl);
    if (!ok && !tt.failed)
      ts_diag_error(e->d, "forward's argument %u (%s) of type %s does not read back from its text", k + 1, shown,
                    tt.data ? tt.data : "?");
    ts_diag_free(&td);
    ts_arena_release(&ta);
    bool oom = tt.failed;
    ts_buf_printf(sig, "%s: %s\n", name ? name : "", tt.data ? tt.data : "");
    ts_buf_free(&tt);
    if (!ok)
      return oom ? ts_en_oom(e) : false;
    ts_buf_printf(text, "%s%s: ", k ? ", " : "", shown);
    ts_type_print(text, decl);
    w.named = decl->kind == TS_TY_OPTIONAL || decl->kind == TS_TY_STR || !ts_rt_io_leaf(decl);
    w.name = name;
    w.arg = k;
    w.depth = 0;
    if (o->arg_forms) {
      ok = ts_en_specs_form(&w, o->arg_forms[k], decl, 0);
    } else {
      /* compiled without an example: what the graph's input type says */
      const ts_type *t = in ? in->type : ts_block_input(g->block, has_self + k)->type;
      ok = ts_en_specs_template(&w, t, 0);
      fixed = fixed && ts_rt_io_template_slots(t) == 1 && (t->kind != TS_TY_OPTIONAL || ts_rt_io_leaf(t));
    }
    if (!ok) {
      if (!ins->oom)
        ts_diag_error(e->d, "internal error: argument %u's form does not fit the compiled graph's inputs", k + 1);
      return ins->oom ? ts_en_oom(e) : false;
    }
  }
  ts_buf_puts(text, ")\n");
  if (o->arg_forms && w.leaf != ts_block_ninputs(g->block)) {
    ts_diag_error(e->d, "internal error: the forms have %u leaves, the compiled graph %u inputs", w.leaf - 1,
                  ts_block_ninputs(g->block) - 1);
    return false;
  }
  *nslots = fixed ? (int32_t)ins->n : -1;
  e->stats->num_inputs = *nslots;
  if (!fixed)
    ts_buf_puts(text, "inputs: how many depends on the values (a list or an Optional compiled without an "
                      "example); the specs below are of one form, a list's with one element\n");
  for (uint32_t i = 0; i < ins->n; i++) {
    ts_buf_printf(text, "input %u", i);
    if (ins->v[i].path)
      ts_buf_printf(text, " (%s)", ins->v[i].path);
    ts_buf_puts(text, ": ");
    ts_en_spec_text(text, &ins->v[i]);
    ts_buf_putc(text, '\n');
  }
  if (sig->failed || text->failed)
    return ts_en_oom(e);
  return true;
}

/* The spec table: { i32 kind, i32 dtype, i32 ndim, ptr sizes } per entry. */
static LLVMValueRef ts_en_spec_table(ts_en *e, const ts_en_specs *s, const char *what) {
  ts_cg_module *m = e->m;
  LLVMTypeRef el[4] = {m->t_i32, m->t_i32, m->t_i32, m->t_ptr};
  LLVMTypeRef ty = LLVMStructTypeInContext(m->ctx, el, 4, 0);
  LLVMValueRef *rows = malloc((s->n ? s->n : 1) * sizeof *rows);
  if (!rows)
    return NULL;
  char name[96];
  for (uint32_t i = 0; i < s->n; i++) {
    const ts_en_spec *sp = &s->v[i];
    LLVMValueRef sz = LLVMConstNull(m->t_ptr);
    if (sp->nsizes) {
      snprintf(name, sizeof name, "%s.%s%u.sizes", e->o->name, what, i);
      sz = ts_en_global_i64s(e, name, sp->sizes, sp->nsizes);
    }
    LLVMValueRef f[4] = {ts_en_i32(e, (uint32_t)sp->kind), ts_en_i32(e, (uint32_t)sp->dtype),
                         ts_en_i32(e, (uint32_t)sp->ndim), sz};
    rows[i] = LLVMConstNamedStruct(ty, f, 4);
  }
  LLVMValueRef init = LLVMConstArray(ty, rows, s->n);
  free(rows);
  snprintf(name, sizeof name, "%s.%s", e->o->name, what);
  return ts_cg_module_const(e->m, name, init, 0);
}

/* ------------------------------------------------------- the memory plan */

static bool ts_en_is_group_output(ts_en *e, const ts_value *v) {
  const ts_node *n = v->node;
  return n && ts_node_is(n, TS_K_prim_FusionGroup) && e->kernel[n->id];
}

/* Worth planning: outputs of compiled groups, and the first output of a
 * runtime kernel (memplan.c leaves out views of the node's inputs). */
static bool ts_en_plan_want(void *arg, const ts_value *v) {
  ts_en *e = arg;
  const ts_node *n = v->node;
  if (!n || n->owner != e->g->block || ts_node_is(n, TS_K_prim_Param))
    return false;
  if (ts_en_is_group_output(e, v))
    return true;
  return v->offset == 0 && !ts_node_is(n, TS_K_prim_Constant) && !ts_node_is(n, TS_K_prim_FusionGroup) &&
         !n->nblocks && n->op && ts_node_schema(n);
}

static bool ts_en_same_geometry(const ts_type *a, const ts_type *b) {
  if (a->kind != TS_TY_TENSOR || b->kind != TS_TY_TENSOR || !a->tensor || !b->tensor)
    return false;
  const ts_tensor_info *x = a->tensor, *y = b->tensor;
  if (x->rank != y->rank || !x->sizes || !y->sizes || ts_dtype_size((ts_dtype)x->dtype) != ts_dtype_size((ts_dtype)y->dtype))
    return false;
  for (int32_t i = 0; i < x->rank; i++)
    if (x->sizes[i] != y->sizes[i])
      return false;
  return true;
}

/* A compiled group reads and writes element i at the same index when the
 * input has the output's shape and is contiguous (ts_cg_type_nbytes says
 * so); memplan.c checks that no other operand may alias it. */
static bool ts_en_plan_inplace(void *arg, const ts_node *n, const ts_value *in, const ts_value *out) {
  ts_en *e = arg;
  return ts_node_is(n, TS_K_prim_FusionGroup) && e->kernel[n->id] && ts_en_same_geometry(in->type, out->type) &&
         ts_cg_type_nbytes(in->type);
}

/* -------------------------------------------------------- emitting code */

static LLVMValueRef ts_en_slot(ts_en *e, const ts_value *v) {
  uint32_t s = e->slot[v->id];
  LLVMValueRef idx = ts_en_i64(e, s);
  return LLVMBuildInBoundsGEP2(e->b, e->t_iv, e->frame, &idx, 1, "");
}

static void ts_en_release(ts_en *e, const ts_value *v) {
  LLVMValueRef a[1] = {ts_en_slot(e, v)};
  LLVMBuildCall2(e->b, e->ty_slot1, e->f_release, a, 1, "");
}

static void ts_en_copy(ts_en *e, LLVMValueRef dst, LLVMValueRef src) {
  LLVMValueRef a[2] = {dst, src};
  LLVMBuildCall2(e->b, e->ty_slot2, e->f_copy, a, 2, "");
}

/* Branches to the failure block unless ok. */
static void ts_en_check(ts_en *e, LLVMValueRef ok) {
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "");
  LLVMBuildCondBr(e->b, ok, next, e->fail);
  LLVMPositionBuilderAtEnd(e->b, next);
}

/* Fills the scratch array `arr` with the slots of vals. */
static void ts_en_fill(ts_en *e, LLVMValueRef arr, ts_value *const *vals, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    LLVMValueRef idx = ts_en_i64(e, i);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, e->m->t_ptr, arr, &idx, 1, "");
    LLVMBuildStore(e->b, ts_en_slot(e, vals[i]), p);
  }
}

static bool ts_en_block(ts_en *e, const ts_block *blk);

static bool ts_en_call(ts_en *e, const ts_node *n) {
  uint32_t k = e->num[n->id];
  int64_t off = -1;
  uint64_t nb = 0;
  if (n->noutputs && e->plan.offset[n->outputs[0]->id] >= 0) {
    off = e->plan.offset[n->outputs[0]->id];
    /* the tensor's own size: the runtime takes the planned buffer for an
     * allocation of exactly this many bytes (plan.nbytes is rounded up) */
    nb = ts_cg_type_nbytes(n->outputs[0]->type);
  }
  ts_en_fill(e, e->pin, n->inputs, n->ninputs);
  ts_en_fill(e, e->pout, n->outputs, n->noutputs);
  LLVMValueRef a[9] = {e->st,    e->ctx,  ts_en_i32(e, k), e->pin, ts_en_i32(e, n->ninputs), e->pout,
                       ts_en_i32(e, n->noutputs), ts_en_i64(e, off), ts_en_i64(e, (int64_t)nb)};
  ts_en_check(e, LLVMBuildCall2(e->b, e->ty_call, e->f_call, a, 9, ""));
  e->stats->ncalls++;
  return true;
}

static bool ts_en_fusion(ts_en *e, const ts_node *n) {
  uint32_t k = e->num[n->id];
  const ts_tensor_info *ti = n->outputs[0]->type->tensor;
  char name[96];
  snprintf(name, sizeof name, "%s.fg%u.sizes", e->o->name, k);
  LLVMValueRef sizes = ts_en_global_i64s(e, name, ti->sizes, (uint32_t)ti->rank);
  int32_t *dts = malloc((n->noutputs + 1) * sizeof *dts);
  int64_t *offs = malloc((n->noutputs + 1) * sizeof *offs);
  if (!sizes || !dts || !offs) {
    free(dts);
    free(offs);
    return ts_en_oom(e);
  }
  for (uint32_t j = 0; j < n->noutputs; j++) {
    dts[j] = n->outputs[j]->type->tensor->dtype;
    offs[j] = e->plan.offset[n->outputs[j]->id];
  }
  snprintf(name, sizeof name, "%s.fg%u.dtypes", e->o->name, k);
  LLVMValueRef gd = ts_en_global_ints(e, name, e->m->t_i32, NULL, dts, n->noutputs);
  snprintf(name, sizeof name, "%s.fg%u.offsets", e->o->name, k);
  LLVMValueRef go = ts_en_global_i64s(e, name, offs, n->noutputs);
  free(dts);
  free(offs);
  if (!gd || !go)
    return ts_en_oom(e);
  /* the inputs' slots, then the outputs', in one array */
  ts_en_fill(e, e->pin, n->inputs, n->ninputs);
  for (uint32_t j = 0; j < n->noutputs; j++) {
    LLVMValueRef idx = ts_en_i64(e, n->ninputs + j);
    LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, e->m->t_ptr, e->pin, &idx, 1, "");
    LLVMBuildStore(e->b, ts_en_slot(e, n->outputs[j]), p);
  }
  LLVMValueRef a[12] = {e->st,   e->ctx, ts_en_i32(e, k), e->kernel[n->id], ts_en_i32(e, e->m->nlevels),
                        e->pin,  ts_en_i32(e, n->ninputs), ts_en_i32(e, n->noutputs), ts_en_i32(e, (uint32_t)ti->rank),
                        sizes,   gd,     go};
  ts_en_check(e, LLVMBuildCall2(e->b, e->ty_fusion, e->f_fusion, a, 12, ""));
  e->stats->nkernels++;
  return true;
}

/* Releases what block blk defined (its inputs and its nodes' outputs). */
static void ts_en_release_block(ts_en *e, const ts_block *blk) {
  for (uint32_t i = 0; i < ts_block_ninputs(blk); i++)
    ts_en_release(e, ts_block_input(blk, i));
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next)
    for (uint32_t j = 0; j < n->noutputs; j++)
      ts_en_release(e, n->outputs[j]);
}

static LLVMValueRef ts_en_get_bool(ts_en *e, uint32_t k, const ts_value *v) {
  LLVMValueRef a[5] = {e->st, e->ctx, ts_en_i32(e, k), ts_en_slot(e, v), e->bool_tmp};
  ts_en_check(e, LLVMBuildCall2(e->b, e->ty_getb, e->f_getb, a, 5, ""));
  LLVMValueRef byte = LLVMBuildLoad2(e->b, e->m->t_i8, e->bool_tmp, "");
  return LLVMBuildICmp(e->b, LLVMIntNE, byte, LLVMConstInt(e->m->t_i8, 0, 0), "");
}

static bool ts_en_if(ts_en *e, const ts_node *n) {
  uint32_t k = e->num[n->id];
  LLVMValueRef c = ts_en_get_bool(e, k, n->inputs[0]);
  LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "then");
  LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "else");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "endif");
  LLVMBuildCondBr(e->b, c, bt, bf);
  for (uint32_t bi = 0; bi < 2; bi++) {
    const ts_block *blk = n->blocks[bi];
    LLVMPositionBuilderAtEnd(e->b, bi ? bf : bt);
    if (!ts_en_block(e, blk))
      return false;
    for (uint32_t j = 0; j < n->noutputs; j++)
      ts_en_copy(e, ts_en_slot(e, n->outputs[j]), ts_en_slot(e, ts_block_output(blk, j)));
    ts_en_release_block(e, blk);
    LLVMBuildBr(e->b, join);
  }
  LLVMPositionBuilderAtEnd(e->b, join);
  return true;
}

/* prim::Loop(max_trip, cond, init...) with body (i, carried...) ->
 * (cond, next...). The loop's outputs hold the carried values. */
static bool ts_en_loop(ts_en *e, const ts_node *n) {
  uint32_t k = e->num[n->id];
  const ts_block *body = n->blocks[0];
  for (uint32_t j = 0; j < n->noutputs; j++)
    ts_en_copy(e, ts_en_slot(e, n->outputs[j]), ts_en_slot(e, n->inputs[2 + j]));
  LLVMValueRef a[5] = {e->st, e->ctx, ts_en_i32(e, k), ts_en_slot(e, n->inputs[0]), e->int_tmp};
  ts_en_check(e, LLVMBuildCall2(e->b, e->ty_geti, e->f_geti, a, 5, ""));
  LLVMValueRef max = LLVMBuildLoad2(e->b, e->m->t_i64, e->int_tmp, "max");
  LLVMValueRef c0 = ts_en_get_bool(e, k, n->inputs[1]);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "loop");
  LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(e->m->ctx, e->fn, "endloop");
  LLVMBuildBr(e->b, head);
  LLVMPositionBuilderAtEnd(e->b, head);
  LLVMValueRef i = LLVMBuildPhi(e->b, e->m->t_i64, "i");
  LLVMValueRef c = LLVMBuildPhi(e->b, e->m->t_i1, "c");
  LLVMValueRef go = LLVMBuildAnd(e->b, c, LLVMBuildICmp(e->b, LLVMIntSLT, i, max, ""), "");
  LLVMBuildCondBr(e->b, go, bodyb, exit);
  LLVMPositionBuilderAtEnd(e->b, bodyb);
  LLVMValueRef sa[2] = {ts_en_slot(e, ts_block_input(body, 0)), i};
  LLVMBuildCall2(e->b, e->ty_setint, e->f_setint, sa, 2, "");
  for (uint32_t j = 0; j < n->noutputs; j++)
    ts_en_copy(e, ts_en_slot(e, ts_block_input(body, 1 + j)), ts_en_slot(e, n->outputs[j]));
  if (!ts_en_block(e, body))
    return false;
  LLVMValueRef cn = ts_en_get_bool(e, k, ts_block_output(body, 0));
  for (uint32_t j = 0; j < n->noutputs; j++)
    ts_en_copy(e, ts_en_slot(e, n->outputs[j]), ts_en_slot(e, ts_block_output(body, 1 + j)));
  ts_en_release_block(e, body);
  LLVMValueRef inext = LLVMBuildAdd(e->b, i, ts_en_i64(e, 1), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->b);
  LLVMBuildBr(e->b, head);
  LLVMValueRef iv[2] = {ts_en_i64(e, 0), inext}, cv[2] = {c0, cn};
  LLVMBasicBlockRef from[2] = {pre, latch};
  LLVMAddIncoming(i, iv, from, 2);
  LLVMAddIncoming(c, cv, from, 2);
  LLVMPositionBuilderAtEnd(e->b, exit);
  return true;
}

static bool ts_en_node(ts_en *e, const ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_Constant: {
    if (!n->noutputs)
      return true;
    LLVMValueRef a[3] = {e->st, ts_en_i32(e, e->num[n->id]), ts_en_slot(e, n->outputs[0])};
    LLVMBuildCall2(e->b, e->ty_const, e->f_const, a, 3, "");
    return true;
  }
  case TS_K_prim_If:
    return ts_en_if(e, n);
  case TS_K_prim_Loop:
    return ts_en_loop(e, n);
  default:
    if (ts_node_is(n, TS_K_prim_FusionGroup) && e->kernel[n->id])
      return ts_en_fusion(e, n);
    if (ts_node_is(n, TS_K_prim_FusionGroup))
      e->stats->ninterp_groups++;
    return ts_en_call(e, n);
  }
}

/* The position in blk of the node that holds the use u (a use in a nested
 * block counts at its owner in blk); -1 for the block's return. */
static const ts_node *ts_en_user_in(const ts_block *blk, const ts_node *user) {
  while (user && user->owner != blk)
    user = user->owner ? user->owner->owner_node : NULL;
  return user;
}

typedef struct ts_en_death {
  uint32_t pos; /* the node of the block after which the value dies */
  const ts_value *v;
} ts_en_death;

static int ts_en_death_cmp(const void *a, const void *b) {
  const ts_en_death *x = a, *y = b;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Emits blk's nodes; each value a node of blk defines is released after
 * the last node of blk that uses it (a use in a nested block counts at
 * the node holding that block), or right away if nothing uses it. Values
 * the block returns, and the block's inputs, are left to the caller
 * (ts_en_release_block, or the frame's release at the end). */
static bool ts_en_block(ts_en *e, const ts_block *blk) {
  uint32_t n = 0, nv = 0;
  for (const ts_node *x = ts_block_first(blk); x != blk->ret; x = x->next) {
    n++;
    nv += x->noutputs;
  }
  ts_en_death *dies = malloc((nv + 1) * sizeof *dies);
  const ts_node **order = malloc((n + 1) * sizeof *order);
  if (!dies || !order) {
    free(dies);
    free(order);
    return ts_en_oom(e);
  }
  uint32_t i = 0, nd = 0;
  for (const ts_node *x = ts_block_first(blk); x != blk->ret; x = x->next, i++)
    order[i] = x;
  for (i = 0; i < n; i++) {
    const ts_node *x = order[i];
    for (uint32_t j = 0; j < x->noutputs; j++) {
      const ts_value *v = x->outputs[j];
      uint32_t last = i;
      bool returned = false;
      for (uint32_t u = 0; u < v->nuses; u++) {
        const ts_node *h = ts_en_user_in(blk, v->uses[u].user);
        if (!h || h == blk->ret)
          returned = true;
        else if (e->pos[h->id] > last)
          last = e->pos[h->id];
      }
      if (!returned)
        dies[nd++] = (ts_en_death){last, v};
    }
  }
  qsort(dies, nd, sizeof *dies, ts_en_death_cmp);
  bool ok = true;
  uint32_t di = 0;
  for (i = 0; ok && i < n; i++) {
    ok = ts_en_node(e, order[i]);
    for (; ok && di < nd && dies[di].pos == i; di++)
      ts_en_release(e, dies[di].v);
  }
  free(dies);
  free(order);
  return ok;
}

/* ------------------------------------------------- runtime declarations */

static void ts_en_declare(ts_en *e) {
  ts_cg_module *m = e->m;
  LLVMTypeRef P = m->t_ptr, I32 = m->t_i32, I64 = m->t_i64, I1 = m->t_i1, V = m->t_void;
  LLVMTypeRef call[9] = {P, P, I32, P, I32, P, I32, I64, I64};
  e->ty_call = LLVMFunctionType(I1, call, 9, 0);
  e->f_call = ts_cg_module_extern(m, "ts_rt_aot_call", e->ty_call);
  LLVMTypeRef cst[3] = {P, I32, P};
  e->ty_const = LLVMFunctionType(V, cst, 3, 0);
  e->f_const = ts_cg_module_extern(m, "ts_rt_aot_const", e->ty_const);
  LLVMTypeRef fu[12] = {P, P, I32, P, I32, P, I32, I32, I32, P, P, P};
  e->ty_fusion = LLVMFunctionType(I1, fu, 12, 0);
  e->f_fusion = ts_cg_module_extern(m, "ts_rt_aot_fusion", e->ty_fusion);
  LLVMTypeRef s1[1] = {P}, s2[2] = {P, P}, si[2] = {P, I64}, gb[5] = {P, P, I32, P, P};
  e->ty_slot1 = LLVMFunctionType(V, s1, 1, 0);
  e->f_release = ts_cg_module_extern(m, "ts_rt_aot_release_slot", e->ty_slot1);
  e->ty_slot2 = LLVMFunctionType(V, s2, 2, 0);
  e->f_copy = ts_cg_module_extern(m, "ts_rt_aot_copy_slot", e->ty_slot2);
  e->ty_setint = LLVMFunctionType(V, si, 2, 0);
  e->f_setint = ts_cg_module_extern(m, "ts_rt_aot_set_int", e->ty_setint);
  e->ty_getb = LLVMFunctionType(I1, gb, 5, 0);
  e->f_getb = ts_cg_module_extern(m, "ts_rt_aot_get_bool", e->ty_getb);
  e->ty_geti = LLVMFunctionType(I1, gb, 5, 0);
  e->f_geti = ts_cg_module_extern(m, "ts_rt_aot_get_int", e->ty_geti);
}

/* Slots for every value of g's blocks (not of fusion subgraphs). */
static void ts_en_number_values(ts_en *e, const ts_block *blk) {
  for (uint32_t i = 0; i < ts_block_ninputs(blk); i++)
    e->slot[ts_block_input(blk, i)->id] = e->nslots++;
  uint32_t pos = 0;
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next) {
    e->pos[n->id] = pos++;
    for (uint32_t j = 0; j < n->noutputs; j++)
      e->slot[n->outputs[j]->id] = e->nslots++;
    for (uint32_t b = 0; b < n->nblocks; b++)
      ts_en_number_values(e, n->blocks[b]);
    if (n->ninputs > e->maxin)
      e->maxin = n->ninputs;
    if (n->ninputs + n->noutputs > e->maxin)
      e->maxin = n->ninputs + n->noutputs;
    if (n->noutputs > e->maxout)
      e->maxout = n->noutputs;
  }
}

/* Whether every node the entry runs can run there; the first that cannot
 * is reported in d (a note: the graph then runs in the interpreter). */
static bool ts_en_supported(const ts_block *blk, ts_diag *d) {
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next) {
    if (ts_node_is(n, TS_K_prim_Constant))
      continue;
    if (ts_node_is(n, TS_K_prim_If) || ts_node_is(n, TS_K_prim_Loop)) {
      for (uint32_t b = 0; b < n->nblocks; b++)
        if (!ts_en_supported(n->blocks[b], d))
          return false;
      continue;
    }
    if (!ts_rt_aot_node_supported(n, d))
      return false;
  }
  return true;
}

static bool ts_en_entry(ts_en *e) {
  ts_cg_module *m = e->m;
  ts_graph *g = e->g;
  LLVMTypeRef params[4] = {m->t_ptr, m->t_ptr, m->t_ptr, m->t_ptr};
  char name[96];
  snprintf(name, sizeof name, "%s.entry", e->o->name);
  e->fn = LLVMAddFunction(m->mod, name, LLVMFunctionType(m->t_i1, params, 4, 0));
  LLVMSetLinkage(e->fn, LLVMPrivateLinkage);
  e->st = LLVMGetParam(e->fn, 0);
  e->ctx = LLVMGetParam(e->fn, 1);
  e->args = LLVMGetParam(e->fn, 2);
  e->rets = LLVMGetParam(e->fn, 3);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(m->ctx, e->fn, "entry");
  LLVMPositionBuilderAtEnd(e->b, entry);
  e->frame = LLVMBuildArrayAlloca(e->b, e->t_iv, ts_en_i64(e, e->nslots ? e->nslots : 1), "frame");
  LLVMSetAlignment(e->frame, 16);
  e->pin = LLVMBuildArrayAlloca(e->b, m->t_ptr, ts_en_i64(e, e->maxin + 1), "ins");
  e->pout = LLVMBuildArrayAlloca(e->b, m->t_ptr, ts_en_i64(e, e->maxout + 1), "outs");
  e->bool_tmp = LLVMBuildAlloca(e->b, m->t_i8, "b");
  e->int_tmp = LLVMBuildAlloca(e->b, m->t_i64, "n");
  LLVMBuildMemSet(e->b, e->frame, LLVMConstInt(m->t_i8, 0, 0), ts_en_i64(e, (int64_t)e->nslots * 16), 16);
  uint32_t nout = ts_block_noutputs(g->block);
  if (nout)
    LLVMBuildMemSet(e->b, e->rets, LLVMConstInt(m->t_i8, 0, 0), ts_en_i64(e, (int64_t)nout * 16), 8);
  e->fail = LLVMAppendBasicBlockInContext(m->ctx, e->fn, "fail");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->ctx, e->fn, "done");
  for (uint32_t i = 0; i < ts_block_ninputs(g->block); i++) {
    LLVMValueRef idx = ts_en_i64(e, i);
    ts_en_copy(e, ts_en_slot(e, ts_block_input(g->block, i)), LLVMBuildInBoundsGEP2(e->b, e->t_iv, e->args, &idx, 1, ""));
  }
  if (!ts_en_block(e, g->block))
    return false;
  for (uint32_t j = 0; j < nout; j++) {
    LLVMValueRef idx = ts_en_i64(e, j);
    ts_en_copy(e, LLVMBuildInBoundsGEP2(e->b, e->t_iv, e->rets, &idx, 1, ""), ts_en_slot(e, ts_block_output(g->block, j)));
  }
  LLVMBuildBr(e->b, done);
  /* both ways out release the whole frame (released slots are None) */
  for (int w = 0; w < 2; w++) {
    LLVMBasicBlockRef from = w ? done : e->fail;
    LLVMPositionBuilderAtEnd(e->b, from);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(m->ctx, e->fn, "free");
    LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(m->ctx, e->fn, "ret");
    LLVMBuildBr(e->b, loop);
    LLVMPositionBuilderAtEnd(e->b, loop);
    LLVMValueRef i = LLVMBuildPhi(e->b, m->t_i64, "");
    LLVMValueRef p = LLVMBuildInBoundsGEP2(e->b, e->t_iv, e->frame, &i, 1, "");
    LLVMBuildCall2(e->b, e->ty_slot1, e->f_release, &p, 1, "");
    LLVMValueRef in = LLVMBuildAdd(e->b, i, ts_en_i64(e, 1), "");
    LLVMValueRef zero = ts_en_i64(e, 0);
    LLVMAddIncoming(i, &zero, &from, 1);
    LLVMAddIncoming(i, &in, &loop, 1);
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntULT, in, ts_en_i64(e, e->nslots), ""), loop, out);
    LLVMPositionBuilderAtEnd(e->b, out);
    LLVMBuildRet(e->b, LLVMConstInt(m->t_i1, (unsigned long long)w, 0));
  }
  return true;
}

/* ------------------------------------------------------------- wrappers */

typedef struct ts_en_wrap {
  const char *suffix, *target;
  int ret; /* 0 void, 1 i32, 2 i64, 3 ptr */
  /* the target's arguments after the descriptor: p ptr, i i32, l i64 (the
   * wrapper's own parameters), G the GPU image from NAME.cuda_image (not a
   * parameter: nvptx.c's ts_cg_cuda_embed fills the slot; NULL without one) */
  const char *params;
} ts_en_wrap;

static const ts_en_wrap ts_en_wraps[] = {
    {"init", "ts_rt_aot_init", 1, ""},
    {"release", "ts_rt_aot_release", 0, ""},
    {"num_inputs", "ts_rt_aot_num_inputs", 1, ""},
    {"num_outputs", "ts_rt_aot_num_outputs", 1, ""},
    {"input_spec", "ts_rt_aot_input_spec", 1, "ip"},
    {"output_spec", "ts_rt_aot_output_spec", 1, "ip"},
    {"arena_size", "ts_rt_aot_arena_size", 2, ""},
    {"set_threads", "ts_rt_aot_set_threads", 0, "i"},
    {"set_device", "ts_rt_aot_set_device", 1, "Gp"},
    {"device_stats", "ts_rt_aot_device_stats", 1, "p"},
    {"run", "ts_rt_aot_run", 1, "pipip"},
    {"run_static", "ts_rt_aot_run_static", 1, "pipipl"},
    {"last_error", "ts_rt_aot_last_error", 3, ""},
    {"last_bailout", "ts_rt_aot_last_bailout", 1, ""},
    {"profile", "ts_rt_aot_profile", 1, "i"},
    {"profile_rows", "ts_rt_aot_profile_rows", 1, "pi"},
};

static void ts_en_wrappers(ts_en *e, LLVMValueRef desc) {
  ts_cg_module *m = e->m;
  char name[128];
  snprintf(name, sizeof name, "%s.cuda_image", e->o->name);
  LLVMValueRef img = ts_cg_module_const(m, name, LLVMConstNull(m->t_ptr), 0);
  for (size_t w = 0; w < sizeof ts_en_wraps / sizeof ts_en_wraps[0]; w++) {
    const ts_en_wrap *x = &ts_en_wraps[w];
    LLVMTypeRef ps[8], tps[8];
    uint32_t np = 0, nt = 1;
    tps[0] = m->t_ptr;
    for (const char *c = x->params; *c; c++) {
      LLVMTypeRef ty = *c == 'p' || *c == 'G' ? m->t_ptr : *c == 'i' ? m->t_i32 : m->t_i64;
      tps[nt++] = ty;
      if (*c != 'G')
        ps[np++] = ty;
    }
    LLVMTypeRef rt = x->ret == 0 ? m->t_void : x->ret == 1 ? m->t_i32 : x->ret == 2 ? m->t_i64 : m->t_ptr;
    LLVMTypeRef fty = LLVMFunctionType(rt, ps, np, 0), tty = LLVMFunctionType(rt, tps, nt, 0);
    snprintf(name, sizeof name, "%s_%s", e->o->name, x->suffix);
    LLVMValueRef f = LLVMAddFunction(m->mod, name, fty);
    LLVMValueRef t = ts_cg_module_extern(m, x->target, tty);
    LLVMPositionBuilderAtEnd(e->b, LLVMAppendBasicBlockInContext(m->ctx, f, ""));
    LLVMValueRef a[8];
    a[0] = desc;
    uint32_t k = 0;
    for (const char *c = x->params; *c; c++)
      a[1 + (c - x->params)] = *c == 'G' ? LLVMBuildLoad2(e->b, m->t_ptr, img, "") : LLVMGetParam(f, k++);
    LLVMValueRef r = LLVMBuildCall2(e->b, tty, t, a, nt, "");
    if (x->ret == 0)
      LLVMBuildRetVoid(e->b);
    else
      LLVMBuildRet(e->b, r);
  }
}

/* ---------------------------------------------------------------- build */

void ts_cg_stats_free(ts_cg_stats *st) {
  ts_buf_free(&st->specs);
  ts_buf_free(&st->notes);
}

static bool ts_en_lower_groups(ts_en *e, const ts_block *blk) {
  for (const ts_node *n = ts_block_first(blk); n != blk->ret; n = n->next) {
    for (uint32_t b = 0; b < n->nblocks; b++)
      if (!ts_en_lower_groups(e, n->blocks[b]))
        return false;
    if (!ts_node_is(n, TS_K_prim_FusionGroup))
      continue;
    char name[96];
    snprintf(name, sizeof name, "code generation (fusion group of node %u)", e->num[n->id]);
    if (ts_pass_past_deadline(e->o->deadline, e->o->time_limit, name, e->d))
      return false;
    snprintf(name, sizeof name, "%s.kernel%u", e->o->name, e->num[n->id]);
    ts_diag why = {0};
    why.max_errors = 1;
    /* one copy per x86-64 level in the portable default: the runtime picks
     * one by the CPU it runs on (ts_rt_aot_fusion) from this table */
    LLVMValueRef copies[TS_CG_LEVELS];
    uint32_t nc = ts_cg_fusion_kernels(e->m, n, name, copies, &why);
    if (nc) {
      snprintf(name, sizeof name, "%s.kernels%u", e->o->name, e->num[n->id]);
      e->kernel[n->id] = ts_cg_module_const(e->m, name, LLVMConstArray(e->m->t_ptr, copies, nc), 0);
    }
    if (!nc)
      ts_buf_printf(&e->stats->notes, "fusion group %u (node %u) runs in the interpreter: %s", e->stats->ninterp_groups + 1,
                    e->num[n->id], why.text.data ? why.text.data : "(no reason)\n");
    ts_diag_free(&why);
  }
  return true;
}

bool ts_cg_model_build(ts_cg_module *m, ts_graph *g0, ts_graph *fb0, const ts_cg_options *o, uint64_t arena_heap,
                       ts_cg_stats *stats, ts_diag *d) {
  double t0 = ts_en_now();
  ts_en e = {.m = m, .o = o, .d = d, .stats = stats};
  ts_buf gtext = {0}, ftext = {0};
  ts_en_weights w = {0};
  ts_en_specs ins = {0}, outs = {0};
  ts_buf sig = {0};
  int32_t nslots = 0;
  ts_node **tcn = NULL;
  bool ok = false;
  LLVMTypeRef ivf[2] = {m->t_i64, m->t_i32};
  e.t_iv = LLVMStructTypeInContext(m->ctx, ivf, 2, 0);
  e.b = LLVMCreateBuilderInContext(m->ctx);
  ts_en_declare(&e);

  if (!ts_en_split_tensor_lists(&e, g0->block) || (fb0 && !ts_en_split_tensor_lists(&e, fb0->block)))
    goto out;
  if (!(e.g = ts_en_reparse(&e, g0, "compiled graph", &gtext)))
    goto out;
  if (fb0 && !(e.fb = ts_en_reparse(&e, fb0, "fallback graph", &ftext)))
    goto out;
  ts_graph *g = e.g;
  /* which constants runs may write: decided here, on the graphs as init
   * reads them back, so that the runtime need not analyse them */
  if (!ts_pass_mark_never_written(g, d) || (e.fb && !ts_pass_mark_never_written(e.fb, d)))
    goto out;

  /* weights: the graph's tensor constants, then the fallback's */
  uint32_t nt = ts_rt_aot_tensor_consts(g, NULL), nf = e.fb ? ts_rt_aot_tensor_consts(e.fb, NULL) : 0;
  if (!(tcn = calloc(nt + nf + 1, sizeof *tcn))) {
    ts_en_oom(&e);
    goto out;
  }
  ts_rt_aot_tensor_consts(g, tcn);
  if (e.fb)
    ts_rt_aot_tensor_consts(e.fb, tcn + nt);
  if (!ts_en_weights_add(&e, &w, tcn, nt + nf))
    goto out;
  stats->weight_bytes = w.bytes.len;

  /* numbering, slots */
  uint32_t nn = ts_rt_aot_number_nodes(g, NULL);
  ts_node **nodes = calloc(nn + 1, sizeof *nodes);
  e.num = calloc(g->next_node_id + 1, sizeof *e.num);
  e.kernel = calloc(g->next_node_id + 1, sizeof *e.kernel);
  e.pos = calloc(g->next_node_id + 1, sizeof *e.pos);
  e.slot = malloc((g->next_value_id + 1) * sizeof *e.slot);
  if (!nodes || !e.num || !e.kernel || !e.slot || !e.pos) {
    free(nodes);
    ts_en_oom(&e);
    goto out;
  }
  ts_rt_aot_number_nodes(g, nodes);
  for (uint32_t i = 0; i < nn; i++) {
    e.num[nodes[i]->id] = i;
  }
  free(nodes);
  memset(e.slot, 0xff, (g->next_value_id + 1) * sizeof *e.slot);
  ts_en_number_values(&e, g->block);
  stats->nnodes = nn;

  /* specs */
  if (!ts_en_inputs(&e, &ins, &sig, &nslots))
    goto out;
  for (uint32_t i = 0; i < ts_block_noutputs(g->block); i++)
    if (!ts_en_spec_of(&outs, ts_block_output(g->block, i)->type)) {
      ts_en_oom(&e);
      goto out;
    }
  if (outs.dynamic)
    ts_buf_puts(&stats->specs, "outputs: known when the model runs\n");
  else
    for (uint32_t i = 0; i < outs.n; i++) {
      ts_buf_printf(&stats->specs, "output %u: ", i);
      ts_en_spec_text(&stats->specs, &outs.v[i]);
      ts_buf_putc(&stats->specs, '\n');
    }

  /* the entry function, unless some node can only run in the interpreter */
  ts_diag why = {0};
  bool compiled = ts_en_supported(g->block, &why);
  if (!compiled) {
    stats->interp_only = true;
    ts_buf_printf(&stats->notes, "the graph runs in the embedded interpreter: %s",
                  why.text.data ? why.text.data : "\n");
  }
  ts_diag_free(&why);
  if (compiled) {
    if (!ts_en_lower_groups(&e, g->block))
      goto out;
    if (!ts_cg_memplan_build(g, ts_en_plan_want, ts_en_plan_inplace, &e, &e.plan, d))
      goto out;
    stats->arena_plan_bytes = e.plan.arena_size;
    stats->nplanned = e.plan.nplanned;
    stats->ninplace = e.plan.ninplace;
    if (!ts_en_entry(&e))
      goto out;
  }
  /* run_static lays out a run's own state in the arena too (reentrant runs):
   * the graph's inputs, and the arguments too when it takes their leaves */
  uint32_t nvals = ts_block_ninputs(g->block) + (o->arg_forms ? o->nargs + 1 : 0);
  arena_heap += ts_rt_aot_call_bytes(nvals, ts_block_noutputs(g->block));
  stats->arena_heap_bytes = arena_heap;

  /* the descriptor */
  {
    char name[96];
    snprintf(name, sizeof name, "%s.name", o->name);
    LLVMValueRef gname = ts_en_cstring(&e, name, o->name, strlen(o->name));
    snprintf(name, sizeof name, "%s.graph", o->name);
    LLVMValueRef ggraph = ts_en_cstring(&e, name, gtext.data, gtext.len);
    LLVMValueRef gfb = LLVMConstNull(m->t_ptr);
    if (e.fb) {
      snprintf(name, sizeof name, "%s.fallback", o->name);
      gfb = ts_en_cstring(&e, name, ftext.data, ftext.len);
    }
    snprintf(name, sizeof name, "%s.weights", o->name);
    LLVMValueRef gw = ts_en_global_bytes(&e, name, w.bytes.data ? w.bytes.data : "", w.bytes.len, 64);
    LLVMValueRef gtc = ts_en_tconst_table(&e, &w);
    LLVMValueRef gin = ts_en_spec_table(&e, &ins, "inputs");
    LLVMValueRef gout = ts_en_spec_table(&e, &outs, "outputs");
    if (!gtc || !gin || !gout) {
      ts_en_oom(&e);
      goto out;
    }
    LLVMTypeRef P = m->t_ptr, I32 = m->t_i32, I64 = m->t_i64;
    LLVMTypeRef df[27] = {I32, P, P, I64, P, I64, P, I64, P, I32, I32, I32, P,
                          I32, P, I32, P, I64, I64, P, P, I64, P, I64, I32, I32, P};
    LLVMTypeRef dty = LLVMStructTypeInContext(m->ctx, df, 27, 0);
    /* the runtime's struct, field for field */
    static const size_t offs[27] = {
        offsetof(ts_rt_aot_desc, abi),          offsetof(ts_rt_aot_desc, name),
        offsetof(ts_rt_aot_desc, graph),        offsetof(ts_rt_aot_desc, graph_len),
        offsetof(ts_rt_aot_desc, fallback),     offsetof(ts_rt_aot_desc, fallback_len),
        offsetof(ts_rt_aot_desc, weights),      offsetof(ts_rt_aot_desc, weights_len),
        offsetof(ts_rt_aot_desc, tconsts),      offsetof(ts_rt_aot_desc, ntconsts_graph),
        offsetof(ts_rt_aot_desc, ntconsts_fallback), offsetof(ts_rt_aot_desc, nnodes),
        offsetof(ts_rt_aot_desc, entry),        offsetof(ts_rt_aot_desc, ninputs),
        offsetof(ts_rt_aot_desc, inputs),       offsetof(ts_rt_aot_desc, noutputs),
        offsetof(ts_rt_aot_desc, outputs),      offsetof(ts_rt_aot_desc, arena_plan),
        offsetof(ts_rt_aot_desc, arena_heap),   offsetof(ts_rt_aot_desc, state),
        offsetof(ts_rt_aot_desc, archive),      offsetof(ts_rt_aot_desc, archive_len),
        offsetof(ts_rt_aot_desc, signature),    offsetof(ts_rt_aot_desc, signature_len),
        offsetof(ts_rt_aot_desc, leaves),       offsetof(ts_rt_aot_desc, nslots),
        offsetof(ts_rt_aot_desc, module_ops)};
    for (unsigned i = 0; i < 27; i++)
      if (LLVMOffsetOfElement(m->td, dty, i) != offs[i]) {
        ts_diag_error(d, "internal error: the descriptor's field %u is at %llu, the runtime has it at %zu", i,
                      (unsigned long long)LLVMOffsetOfElement(m->td, dty, i), offs[i]);
        goto out;
      }
    /* a graph the entry function cannot run may need the module itself */
    LLVMValueRef garch = LLVMConstNull(P), gops = LLVMConstNull(P);
    uint64_t archive_len = 0;
    if (!compiled && o->archive) {
      snprintf(name, sizeof name, "%s.archive", o->name);
      garch = ts_en_global_bytes(&e, name, o->archive, o->archive_len, 64);
      archive_len = o->archive_len;
      stats->archive_bytes = archive_len;
      /* the loader (loader/loader.h), named only here: an object without
       * its archive does not link it */
      gops = LLVMGetNamedGlobal(m->mod, "ts_rt_model_aot_ops");
      if (!gops) {
        gops = LLVMAddGlobal(m->mod, P, "ts_rt_model_aot_ops");
        LLVMSetGlobalConstant(gops, 1);
      }
    }
    snprintf(name, sizeof name, "%s.signature", o->name);
    LLVMValueRef gsig = ts_en_cstring(&e, name, sig.data ? sig.data : "", sig.len);
    LLVMValueRef f[27] = {ts_en_i32(&e, TS_RT_AOT_ABI),
                          gname,
                          ggraph,
                          ts_en_i64(&e, (int64_t)gtext.len),
                          gfb,
                          ts_en_i64(&e, (int64_t)ftext.len),
                          gw,
                          ts_en_i64(&e, (int64_t)w.bytes.len),
                          gtc,
                          ts_en_i32(&e, nt),
                          ts_en_i32(&e, nf),
                          ts_en_i32(&e, nn),
                          compiled ? e.fn : LLVMConstNull(P),
                          ts_en_i32(&e, ins.n),
                          gin,
                          ts_en_i32(&e, outs.dynamic ? UINT32_MAX : outs.n),
                          gout,
                          ts_en_i64(&e, (int64_t)stats->arena_plan_bytes),
                          ts_en_i64(&e, (int64_t)arena_heap),
                          LLVMConstNull(P),
                          garch,
                          ts_en_i64(&e, (int64_t)archive_len),
                          gsig,
                          ts_en_i64(&e, (int64_t)sig.len),
                          ts_en_i32(&e, o->arg_forms != NULL),
                          ts_en_i32(&e, (uint32_t)nslots),
                          gops};
    snprintf(name, sizeof name, "%s.desc", o->name);
    LLVMValueRef desc = LLVMAddGlobal(m->mod, dty, name);
    LLVMSetInitializer(desc, LLVMConstNamedStruct(dty, f, 27));
    LLVMSetLinkage(desc, LLVMPrivateLinkage);
    ts_en_wrappers(&e, desc);
    /* NAME_signature: forward's argument names and types, for callers that
     * build the slots from a language's values (python/tsaot); an optional
     * symbol, newer than ABI version 2 */
    snprintf(name, sizeof name, "%s_signature", o->name);
    LLVMValueRef fsig = LLVMAddFunction(m->mod, name, LLVMFunctionType(P, NULL, 0, 0));
    LLVMPositionBuilderAtEnd(e.b, LLVMAppendBasicBlockInContext(m->ctx, fsig, ""));
    LLVMBuildRet(e.b, gsig);
    if (o->shared) {
      LLVMValueRef gn = ts_en_cstring(&e, "tsaot_model_name", o->name, strlen(o->name));
      LLVMSetLinkage(gn, LLVMExternalLinkage);
    }
  }
  stats->t_codegen = ts_en_now() - t0;
  ok = true;
out:
  if (e.b)
    LLVMDisposeBuilder(e.b);
  ts_cg_memplan_free(&e.plan);
  free(e.num);
  free(e.kernel);
  free(e.pos);
  free(e.slot);
  free(tcn);
  free(w.ents);
  free(w.tc);
  ts_buf_free(&w.bytes);
  ts_en_specs_free(&ins);
  ts_en_specs_free(&outs);
  ts_buf_free(&sig);
  ts_buf_free(&gtext);
  ts_buf_free(&ftext);
  ts_graph_free(e.g);
  ts_graph_free(e.fb);
  return ok;
}
