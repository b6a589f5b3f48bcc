/* passes/shape_prop.c: shape propagation, as torch::jit::PropagateInputShapes
 * (passes/shape_analysis.cpp) with symbolic sizes as in
 * symbolic_shape_analysis.cpp.
 *
 * The graph's input types are set from the spec (one type per input; NULL
 * keeps the graph's own), then every node is visited in order: its outputs
 * are reset to their unshaped types and refined by the rule of its schema
 * (shape_rules.c), so a node without a rule ends with plain Tensor outputs,
 * never with a refinement left over from an earlier specialisation.
 * Structure the IR gives meaning to is handled here:
 *   prim::If       both blocks propagated; each output gets what the two
 *                  blocks' outputs have in common (TensorType::merge: sizes
 *                  that differ become unknown); a block that always raises
 *                  does not count;
 *   prim::Loop     the body is propagated with the carried values' types
 *                  merged with what the body gives back, until nothing
 *                  changes (at most 8 rounds, then the carried types are
 *                  reset to unshaped ones);
 *   lists, tuples  prim::ListConstruct / ListUnpack / TupleConstruct /
 *                  TupleUnpack / TupleIndex carry element types; a list's
 *                  element type is refined only while nothing can write to
 *                  the list (every use reads it), since an append would
 *                  make the refinement wrong;
 *   prim::ConstantChunk, prim::FusionGroup (inside the Subgraph, from the
 *                  node's input types), prim::unchecked_cast;
 *   resizes        as PyTorch's resized_alias_set: a tensor some node gives
 *                  other sizes in place (the in-place views unsqueeze_, t_,
 *                  transpose_, ...; resize_; an out= argument the result
 *                  does not provably fit) has one type at all of its uses,
 *                  so it and every value that may alias it (alias
 *                  analysis) keep only their dtype, device and
 *                  requires_grad, from the graph's inputs on. Out=
 *                  arguments are found after a first propagation (their
 *                  fit needs the types), which then runs again.
 *
 * Symbols: a size that is not known but is the same wherever it flows is a
 * symbol (a size <= -2, printed "SS(-2)"). Every unknown size of an input
 * (and every named size of a spec) becomes one, numbered -2, -3, ... in
 * order of appearance; rules carry them through (x + x, a view keeping
 * dimension 0, x.size(0) used as a size). Rules never make new symbols,
 * so a symbol means the same value everywhere in one run of the graph.
 *
 * Does less than PyTorch: no shape guards or specialisation on constant
 * inputs, no arithmetic on symbols beyond identities (s * 1, s + 0). */
#include "shape_rules.h"

#include <stdlib.h>
#include <string.h>

enum {
  SP_LOOP_ROUNDS = 8,
  /* deeper loops get one round, then unshaped carried values: rounds
   * multiply with nesting */
  SP_LOOP_DEEP = 3,
  SP_INT_DEPTH = 32, /* how far ts_sp_int_value follows definitions */
  SP_MAX_SYMBOLS = 1024,
};

typedef struct sp_list {
  const ts_value *v;
  uint32_t n;
  const ts_type *const *elems;
} sp_list;

struct ts_sp {
  ts_diag *d;
  bool oom;
  ts_graph *g;        /* the graph propagated (not a fusion group's subgraph) */
  ts_alias_db *db;    /* made when some node resizes a tensor */
  const ts_value **roots; /* the tensors nodes resize */
  uint32_t nroots, caproots;
  uint8_t *pinned;    /* by value id: may alias a root, so dtype only */
  uint32_t npinned;
  sp_list *lists; /* element types recorded by rules (chunk, split, ...) */
  uint32_t nlists, caplists;
  uint32_t loop_depth; /* loops nested around the node being visited */
  /* input symbols renumbered: from[k] -> -2 - k */
  int64_t sym_from[SP_MAX_SYMBOLS];
  uint32_t nsyms;
};

static bool sp_block(ts_sp *sp, ts_block *b);

/* ---------------------------------------------------------- types */

static ts_arena *sp_arena(const ts_value *v) { return &v->node->graph->arena; }

/* Sets v's type to t when t refines v's declared type (the same type once
 * tensor refinements are taken away); otherwise v keeps its type. */
static void sp_set(ts_sp *sp, ts_value *v, const ts_type *t) {
  if (!t)
    return;
  ts_arena *a = sp_arena(v);
  const ts_type *u = ts_type_unshaped(a, t), *cur = ts_type_unshaped(a, v->type);
  if (!u || !cur) {
    sp->oom = true;
    return;
  }
  if (ts_type_equal(u, cur))
    ts_value_set_type(v, t);
}

/* Resets v to its unshaped type. */
static void sp_unshape(ts_sp *sp, ts_value *v) {
  const ts_type *u = ts_type_unshaped(sp_arena(v), v->type);
  if (!u)
    sp->oom = true;
  else
    ts_value_set_type(v, u);
}


/* What two types have in common, for values that may be either (If and
 * Loop outputs); NULL when there is nothing better than the declared type.
 * Unlike ts_type_unify, a size known on one side only (or a symbol against
 * another size) becomes unknown. */
static const ts_type *sp_merge(ts_sp *sp, ts_arena *a, const ts_type *x, const ts_type *y) {
  if (ts_type_equal(x, y))
    return x;
  if (x->kind == TS_TY_TENSOR && y->kind == TS_TY_TENSOR) {
    const ts_type *t = ts_type_merge_tensors(a, x, y);
    if (!t)
      sp->oom = true;
    return t;
  }
  if (x->kind == TS_TY_NONE && y->kind == TS_TY_NONE)
    return x;
  if (x->kind == TS_TY_NONE || y->kind == TS_TY_NONE) {
    const ts_type *o = x->kind == TS_TY_NONE ? y : x;
    const ts_type *t = o->kind == TS_TY_OPTIONAL ? o : ts_type_optional(a, o);
    if (!t)
      sp->oom = true;
    return t;
  }
  if (x->kind == TS_TY_OPTIONAL || y->kind == TS_TY_OPTIONAL) {
    const ts_type *e = sp_merge(sp, a, x->kind == TS_TY_OPTIONAL ? x->elems[0] : x,
                                y->kind == TS_TY_OPTIONAL ? y->elems[0] : y);
    const ts_type *t = e ? ts_type_optional(a, e) : NULL;
    if (e && !t)
      sp->oom = true;
    return t;
  }
  if (x->kind == TS_TY_TUPLE && y->kind == TS_TY_TUPLE && x->n == y->n && !x->fields && !y->fields &&
      x->n <= TS_SR_MAX_RANK) {
    const ts_type *e[TS_SR_MAX_RANK];
    for (uint32_t i = 0; i < x->n; i++)
      if (!(e[i] = sp_merge(sp, a, x->elems[i], y->elems[i])))
        return NULL;
    const ts_type *t = ts_type_tuple(a, x->n, e);
    if (!t)
      sp->oom = true;
    return t;
  }
  return NULL;
}

/* ------------------------------------------------------- input symbols */

/* An input size as the run's symbol: named symbols of specs are numbered
 * in order of appearance, unknown sizes get a symbol each. */
static int64_t sp_symbol(ts_sp *sp, int64_t s) {
  if (s >= 0)
    return s;
  if (s <= -2)
    for (uint32_t k = 0; k < sp->nsyms; k++)
      if (sp->sym_from[k] == s)
        return -2 - (int64_t)k;
  if (sp->nsyms == SP_MAX_SYMBOLS)
    return -1;
  /* -1 is recorded as a symbol of its own that nothing else maps to */
  sp->sym_from[sp->nsyms] = s <= -2 ? s : INT64_MIN;
  return -2 - (int64_t)sp->nsyms++;
}

/* t with its sizes (and those of tensors inside tuples, lists and
 * optionals) turned into the run's symbols. */
static const ts_type *sp_symbolize(ts_sp *sp, ts_arena *a, const ts_type *t) {
  if (t->kind == TS_TY_TENSOR) {
    if (!t->tensor || t->tensor->rank <= 0 || t->tensor->rank > TS_SR_MAX_RANK)
      return t;
    int64_t sizes[TS_SR_MAX_RANK];
    bool changed = false;
    for (int32_t k = 0; k < t->tensor->rank; k++) {
      sizes[k] = sp_symbol(sp, t->tensor->sizes[k]);
      changed = changed || sizes[k] != t->tensor->sizes[k];
    }
    if (!changed)
      return t;
    ts_tensor_info ti = *t->tensor;
    ti.sizes = sizes;
    return ts_type_tensor(a, &ti);
  }
  if ((t->kind == TS_TY_OPTIONAL || t->kind == TS_TY_LIST) && t->n == 1) {
    const ts_type *e = sp_symbolize(sp, a, t->elems[0]);
    if (!e)
      return NULL;
    if (e == t->elems[0])
      return t;
    return t->kind == TS_TY_LIST ? ts_type_list(a, e) : ts_type_optional(a, e);
  }
  if (t->kind == TS_TY_TUPLE && !t->fields && t->n <= TS_SR_MAX_RANK) {
    const ts_type *e[TS_SR_MAX_RANK];
    bool changed = false;
    for (uint32_t k = 0; k < t->n; k++) {
      if (!(e[k] = sp_symbolize(sp, a, t->elems[k])))
        return NULL;
      changed = changed || e[k] != t->elems[k];
    }
    return changed ? ts_type_tuple(a, t->n, e) : t;
  }
  return t;
}

/* ------------------------------------------------------------ lists */

ts_value *const *ts_sp_list_items(const ts_value *list, uint32_t *n) {
  if (!ts_node_is(list->node, TS_K_prim_ListConstruct) || !ts_sp_list_read_only(list))
    return NULL;
  *n = list->node->ninputs;
  return list->node->inputs;
}

/* Whether a use of a list can only read it: a schema argument with no
 * write annotation (and nothing returned that could be the list or a
 * mutable list inside it), a ListUnpack, or the return of a graph. */
static bool sp_use_reads(const ts_value *list, const ts_use *u) {
  const ts_node *user = u->user;
  if (ts_node_is(user, TS_K_prim_ListUnpack))
    return true;
  if (ts_node_is(user, TS_K_prim_Return))
    return user->owner && !user->owner->owner_node;
  if (user->kind >= TS_K_COUNT || (ts_op_get(user->kind)->flags & TS_OPF_SPECIAL))
    return false;
  const ts_schema *s = ts_node_schema(user);
  if (!s || u->index >= s->nargs)
    return false;
  const ts_alias *al = s->args[u->index].alias;
  if (!al)
    return true;
  if (al->is_write || (al->contained && al->contained->is_write))
    return false;
  const ts_type *elem = list->type->kind == TS_TY_LIST ? list->type->elems[0] : NULL;
  bool elem_mutable = !elem || (elem->kind != TS_TY_TENSOR && ts_pass_type_mutable(elem));
  for (uint32_t r = 0; r < s->nrets; r++)
    if (s->rets[r].type->kind == TS_TY_LIST || (s->rets[r].type->kind == TS_TY_VAR && elem_mutable))
      return false; /* may hand out the list itself, or a list inside it */
  return true;
}

bool ts_sp_list_read_only(const ts_value *list) {
  for (uint32_t k = 0; k < list->nuses; k++)
    if (!sp_use_reads(list, &list->uses[k]))
      return false;
  return true;
}

bool ts_sp_record_list(ts_sp *sp, const ts_value *list, const ts_type *const *elems, uint32_t n) {
  for (uint32_t k = 0; k < sp->nlists; k++)
    if (sp->lists[k].v == list) {
      sp->lists[k].n = n;
      sp->lists[k].elems = elems;
      return true;
    }
  if (sp->nlists == sp->caplists) {
    uint32_t cap = sp->caplists ? sp->caplists * 2 : 16;
    sp_list *p = realloc(sp->lists, cap * sizeof *p);
    if (!p)
      return false;
    sp->lists = p;
    sp->caplists = cap;
  }
  sp->lists[sp->nlists++] = (sp_list){list, n, elems};
  return true;
}

static const sp_list *sp_find_list(const ts_sp *sp, const ts_value *list) {
  for (uint32_t k = 0; k < sp->nlists; k++)
    if (sp->lists[k].v == list)
      return &sp->lists[k];
  return NULL;
}

/* ------------------------------------------------------ int values */

/* The sizes of aten::size(t)'s tensor, or NULL. */
static const ts_tensor_info *sp_size_of(const ts_node *n) {
  if (!ts_node_is(n, TS_K_aten_size) || n->ninputs < 1 || n->inputs[0]->type->kind != TS_TY_TENSOR)
    return NULL;
  const ts_tensor_info *ti = n->inputs[0]->type->tensor;
  return ti && ti->rank >= 0 ? ti : NULL;
}

static bool sp_dim_size(const ts_tensor_info *ti, int64_t dim, int64_t *out) {
  int64_t d;
  if (!ts_sr_wrap_dim(dim, ti->rank, &d) || ti->rank == 0 || ti->sizes[d] == -1)
    return false;
  *out = ti->sizes[d];
  return true;
}

/* The value of an int: a constant, or derived from types; *sym tells a
 * symbol (a size <= -2 standing for an unknown) from a negative number. */
static bool sp_int(ts_sp *sp, const ts_value *v, int64_t *out, bool *sym, int depth) {
  *sym = false;
  if (ts_pass_const_int(v, out))
    return true;
  if (depth > SP_INT_DEPTH || v->type->kind != TS_TY_INT)
    return false;
  const ts_node *n = v->node;
  int64_t a, b, idx;
  bool sa, sb, si;
  const ts_tensor_info *ti;
  switch (n->kind) {
  case TS_K_aten_size:
    /* size.int(t, dim) */
    if (n->ninputs == 2 && (ti = sp_size_of(n)) && sp_int(sp, n->inputs[1], &idx, &si, depth + 1) && !si &&
        sp_dim_size(ti, idx, out)) {
      *sym = *out <= -2;
      return true;
    }
    return false;
  case TS_K_prim_ListUnpack:
    if (n->ninputs == 1 && (ti = sp_size_of(n->inputs[0]->node)) && (int64_t)n->noutputs == ti->rank &&
        sp_dim_size(ti, v->offset, out)) {
      *sym = *out <= -2;
      return true;
    }
    return false;
  case TS_K_aten___getitem__: {
    uint32_t cnt;
    ts_value *const *items;
    if (n->ninputs != 2 || !sp_int(sp, n->inputs[1], &idx, &si, depth + 1) || si)
      return false;
    if ((ti = sp_size_of(n->inputs[0]->node))) {
      if (!sp_dim_size(ti, idx, out))
        return false;
      *sym = *out <= -2;
      return true;
    }
    if ((items = ts_sp_list_items(n->inputs[0], &cnt)) && idx >= -(int64_t)cnt && idx < (int64_t)cnt)
      return sp_int(sp, items[idx < 0 ? idx + (int64_t)cnt : idx], out, sym, depth + 1);
    return false;
  }
  case TS_K_prim_dtype:
    if (n->ninputs == 1 && n->inputs[0]->type->kind == TS_TY_TENSOR && n->inputs[0]->type->tensor &&
        n->inputs[0]->type->tensor->dtype != TS_DT_NONE) {
      *out = n->inputs[0]->type->tensor->dtype;
      return true;
    }
    return false;
  case TS_K_aten_numel:
    if (n->ninputs == 1 && n->inputs[0]->type->kind == TS_TY_TENSOR && (ti = n->inputs[0]->type->tensor) &&
        ti->rank >= 0) {
      int64_t p = 1;
      for (int32_t k = 0; k < ti->rank; k++) {
        if (ti->sizes[k] < 0 || (ti->sizes[k] && p > INT64_MAX / ti->sizes[k]))
          return false;
        p *= ti->sizes[k];
      }
      *out = p;
      return true;
    }
    return false;
  case TS_K_aten_len:
    /* len(t): its first size */
    if (n->ninputs == 1 && n->inputs[0]->type->kind == TS_TY_TENSOR && (ti = n->inputs[0]->type->tensor) &&
        ti->rank > 0 && ti->sizes[0] != -1) {
      *out = ti->sizes[0];
      *sym = *out <= -2;
      return true;
    }
    return false;
  case TS_K_aten_dim:
    if (n->ninputs == 1 && n->inputs[0]->type->kind == TS_TY_TENSOR && n->inputs[0]->type->tensor &&
        n->inputs[0]->type->tensor->rank >= 0) {
      *out = n->inputs[0]->type->tensor->rank;
      return true;
    }
    return false;
  case TS_K_aten_Int:
  case TS_K_aten_IntImplicit:
  case TS_K_aten_ScalarImplicit:
    if (n->ninputs != 1)
      return false;
    if (ts_node_is(n->inputs[0]->node, TS_K_prim_NumToTensor) && n->inputs[0]->node->ninputs == 1)
      return sp_int(sp, n->inputs[0]->node->inputs[0], out, sym, depth + 1);
    return n->inputs[0]->type->kind == TS_TY_INT && sp_int(sp, n->inputs[0], out, sym, depth + 1);
  case TS_K_aten_add:
  case TS_K_aten_sub:
  case TS_K_aten_mul:
  case TS_K_aten_floordiv:
    if (n->ninputs != 2 || n->inputs[0]->type->kind != TS_TY_INT || n->inputs[1]->type->kind != TS_TY_INT)
      return false;
    if (!sp_int(sp, n->inputs[0], &a, &sa, depth + 1) || !sp_int(sp, n->inputs[1], &b, &sb, depth + 1))
      return false;
    if (sa || sb) {
      /* a symbol: only identities */
      int64_t k = sa ? b : a, s = sa ? a : b;
      if (sa && sb)
        return false;
      bool sub = n->kind == TS_K_aten_sub, fdiv = n->kind == TS_K_aten_floordiv;
      if ((n->kind == TS_K_aten_mul && k == 1) || (n->kind == TS_K_aten_add && k == 0) || (sa && sub && k == 0) ||
          (sa && fdiv && k == 1)) {
        *out = s;
        *sym = true;
        return true;
      }
      return false;
    }
    switch (n->kind) {
    case TS_K_aten_add:
      if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return false;
      *out = a + b;
      return true;
    case TS_K_aten_sub:
      if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return false;
      *out = a - b;
      return true;
    case TS_K_aten_mul:
      /* sizes: only non-negative products are of use */
      if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a))
        return false;
      *out = a * b;
      return true;
    default:
      if (b == 0 || (a == INT64_MIN && b == -1))
        return false;
      *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
      return true;
    }
  default: return false;
  }
}

bool ts_sp_int_value(ts_sp *sp, const ts_value *v, int64_t *out) {
  bool sym;
  return sp_int(sp, v, out, &sym, 0);
}

bool ts_sp_int_exact(ts_sp *sp, const ts_value *v, int64_t *out) {
  bool sym;
  return sp_int(sp, v, out, &sym, 0) && !sym;
}

static bool sp_may_be_none(const ts_type *t) {
  if (t->kind == TS_TY_NONE || t->kind == TS_TY_OPTIONAL || t->kind == TS_TY_ANY)
    return true;
  if (t->kind == TS_TY_UNION)
    for (uint32_t k = 0; k < t->n; k++)
      if (sp_may_be_none(t->elems[k]))
        return true;
  return false;
}

/* The value of a bool where the types decide it: constants, not/and/or,
 * and comparisons of ints (x.dim() == 4, x.size(1) != 3). */
static bool sp_bool(ts_sp *sp, const ts_value *v, bool *out, int depth) {
  if (ts_pass_const_bool(v, out))
    return true;
  if (depth > SP_INT_DEPTH || v->type->kind != TS_TY_BOOL)
    return false;
  const ts_node *n = v->node;
  bool x, y;
  if (n->kind == TS_K_aten___not__ && n->ninputs == 1) {
    if (!sp_bool(sp, n->inputs[0], &x, depth + 1))
      return false;
    *out = !x;
    return true;
  }
  if (n->ninputs != 2)
    return false;
  if (n->kind == TS_K_aten___is__ || n->kind == TS_K_aten___isnot__) {
    /* x is None, decided by the types (as the peephole does) */
    const ts_type *a = n->inputs[0]->type, *b = n->inputs[1]->type;
    bool an = a->kind == TS_TY_NONE, bn = b->kind == TS_TY_NONE;
    bool is;
    if (an && bn)
      is = true;
    else if ((an && !sp_may_be_none(b)) || (bn && !sp_may_be_none(a)))
      is = false;
    else
      return false;
    *out = n->kind == TS_K_aten___is__ ? is : !is;
    return true;
  }
  if ((n->kind == TS_K_aten___and__ || n->kind == TS_K_aten___or__) && n->inputs[0]->type->kind == TS_TY_BOOL &&
      n->inputs[1]->type->kind == TS_TY_BOOL) {
    bool kx = sp_bool(sp, n->inputs[0], &x, depth + 1), ky = sp_bool(sp, n->inputs[1], &y, depth + 1);
    bool dominant = n->kind == TS_K_aten___or__; /* true decides an or, false an and */
    if ((kx && x == dominant) || (ky && y == dominant)) {
      *out = dominant;
      return true;
    }
    if (!kx || !ky)
      return false;
    *out = !dominant;
    return true;
  }
  if (n->inputs[0]->type->kind != TS_TY_INT || n->inputs[1]->type->kind != TS_TY_INT)
    return false;
  int64_t a, b;
  bool sa, sb;
  if (!sp_int(sp, n->inputs[0], &a, &sa, depth + 1) || !sp_int(sp, n->inputs[1], &b, &sb, depth + 1))
    return false;
  if (sa || sb) {
    /* only the same symbol on both sides says anything */
    if (!sa || !sb || a != b)
      return false;
  }
  switch (n->kind) {
  case TS_K_aten_eq: *out = a == b; return true;
  case TS_K_aten_ne: *out = a != b; return true;
  case TS_K_aten_lt: *out = a < b; return true;
  case TS_K_aten_le: *out = a <= b; return true;
  case TS_K_aten_gt: *out = a > b; return true;
  case TS_K_aten_ge: *out = a >= b; return true;
  default: return false;
  }
}

/* ------------------------------------------------------------ nodes */

/* Whether a block always raises (a prim::RaiseException at its top level). */
static bool sp_block_raises(const ts_block *b) {
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next)
    if (ts_node_is(n, TS_K_prim_RaiseException))
      return true;
  return false;
}

static bool sp_if(ts_sp *sp, ts_node *n) {
  if (n->nblocks != 2)
    return true;
  ts_block *b0 = n->blocks[0], *b1 = n->blocks[1];
  if (!sp_block(sp, b0) || !sp_block(sp, b1))
    return false;
  bool r0 = sp_block_raises(b0), r1 = sp_block_raises(b1), cond;
  /* a condition the types decide: only the taken block's outputs count */
  if (n->ninputs == 1 && sp_bool(sp, n->inputs[0], &cond, 0)) {
    r0 = !cond;
    r1 = cond;
  }
  for (uint32_t i = 0; i < n->noutputs; i++) {
    sp_unshape(sp, n->outputs[i]);
    if (i >= ts_block_noutputs(b0) || i >= ts_block_noutputs(b1))
      continue;
    const ts_value *v0 = ts_block_output(b0, i), *v1 = ts_block_output(b1, i);
    /* a prim::Uninitialized is never read (the block's path ends in a
     * break, a return or a raise): the other block decides */
    bool u0 = r0 || ts_node_is(v0->node, TS_K_prim_Uninitialized);
    bool u1 = r1 || ts_node_is(v1->node, TS_K_prim_Uninitialized);
    const ts_type *t = u0 && !u1   ? v1->type
                       : u1 && !u0 ? v0->type
                                   : sp_merge(sp, sp_arena(n->outputs[i]), v0->type, v1->type);
    sp_set(sp, n->outputs[i], t);
  }
  return !sp->oom;
}

static bool sp_loop(ts_sp *sp, ts_node *n) {
  if (n->nblocks != 1 || n->ninputs < 2)
    return true;
  ts_block *body = n->blocks[0];
  uint32_t nc = n->ninputs - 2;
  if (ts_block_ninputs(body) != nc + 1 || ts_block_noutputs(body) != nc + 1 || n->noutputs != nc)
    return true;
  uint32_t rounds = sp->loop_depth < SP_LOOP_DEEP ? SP_LOOP_ROUNDS : 0;
  sp->loop_depth++;
  for (uint32_t round = 0;; round++) {
    for (uint32_t k = 0; k < nc; k++) {
      ts_value *p = ts_block_input(body, k + 1);
      if (round == 0 || round > rounds)
        sp_unshape(sp, p);
      if (round == 0)
        sp_set(sp, p, n->inputs[2 + k]->type);
    }
    if (!sp_block(sp, body)) {
      sp->loop_depth--;
      return false;
    }
    if (round > rounds)
      break;
    bool changed = false;
    for (uint32_t k = 0; k < nc; k++) {
      ts_value *p = ts_block_input(body, k + 1);
      const ts_value *bv = ts_block_output(body, k + 1);
      if (ts_node_is(bv->node, TS_K_prim_Uninitialized))
        continue; /* never read: the loop is left before */
      const ts_type *cur = p->type, *back = bv->type;
      const ts_type *m = sp_merge(sp, sp_arena(p), cur, back);
      if (sp->oom) {
        sp->loop_depth--;
        return false;
      }
      if (m && ts_type_equal(m, cur))
        continue;
      /* a merge that does not fit the declared type leaves it unshaped */
      sp_unshape(sp, p);
      sp_set(sp, p, m);
      changed = changed || !ts_type_equal(p->type, cur);
    }
    if (!changed)
      break;
  }
  sp->loop_depth--;
  /* at the fixed point a carried value's type covers both the initial
   * value (no iteration) and every body result */
  for (uint32_t k = 0; k < nc; k++) {
    sp_unshape(sp, n->outputs[k]);
    sp_set(sp, n->outputs[k], ts_block_input(body, k + 1)->type);
  }
  return !sp->oom;
}

/* prim::ListConstruct: a list of tensors nothing writes to gets the
 * elements' common type. */
static void sp_list_construct(ts_sp *sp, ts_node *n) {
  ts_value *o = n->outputs[0];
  sp_unshape(sp, o);
  if (o->type->kind != TS_TY_LIST || n->ninputs == 0 || !ts_sp_list_read_only(o))
    return;
  const ts_type *e = n->inputs[0]->type;
  for (uint32_t k = 1; k < n->ninputs && e; k++)
    e = sp_merge(sp, sp_arena(o), e, n->inputs[k]->type);
  const ts_type *t = e ? ts_type_list(sp_arena(o), e) : NULL;
  if (e && !t)
    sp->oom = true;
  sp_set(sp, o, t);
}

/* prim::ListUnpack: the list's elements where they are known one by one,
 * else the list's element type. */
static void sp_list_unpack(ts_sp *sp, ts_node *n) {
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_unshape(sp, n->outputs[k]);
  if (n->ninputs != 1)
    return;
  const ts_value *l = n->inputs[0];
  uint32_t cnt;
  ts_value *const *items = ts_sp_list_items(l, &cnt);
  const sp_list *rec = items ? NULL : sp_find_list(sp, l);
  for (uint32_t k = 0; k < n->noutputs; k++) {
    if (items && cnt == n->noutputs)
      sp_set(sp, n->outputs[k], items[k]->type);
    else if (rec && rec->n == n->noutputs)
      sp_set(sp, n->outputs[k], rec->elems[k]);
    else if (l->type->kind == TS_TY_LIST)
      sp_set(sp, n->outputs[k], l->type->elems[0]);
  }
}

static void sp_tuple_construct(ts_sp *sp, ts_node *n) {
  ts_value *o = n->outputs[0];
  sp_unshape(sp, o);
  if (o->type->kind != TS_TY_TUPLE || o->type->fields || o->type->n != n->ninputs || n->ninputs > TS_SR_MAX_RANK)
    return;
  const ts_type *e[TS_SR_MAX_RANK];
  for (uint32_t k = 0; k < n->ninputs; k++)
    e[k] = n->inputs[k]->type;
  const ts_type *t = ts_type_tuple(sp_arena(o), n->ninputs, e);
  if (!t)
    sp->oom = true;
  sp_set(sp, o, t);
}

static void sp_tuple_unpack(ts_sp *sp, ts_node *n) {
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_unshape(sp, n->outputs[k]);
  const ts_type *t = n->ninputs == 1 ? n->inputs[0]->type : NULL;
  if (!t || t->kind != TS_TY_TUPLE || t->n != n->noutputs)
    return;
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_set(sp, n->outputs[k], t->elems[k]);
}

static void sp_tuple_index(ts_sp *sp, ts_node *n) {
  sp_unshape(sp, n->outputs[0]);
  int64_t i;
  const ts_type *t = n->ninputs == 2 ? n->inputs[0]->type : NULL;
  if (!t || t->kind != TS_TY_TUPLE || !ts_pass_const_int(n->inputs[1], &i))
    return;
  if (i < 0)
    i += t->n;
  if (i >= 0 && i < (int64_t)t->n)
    sp_set(sp, n->outputs[0], t->elems[i]);
}

/* prim::ConstantChunk[chunks=N, dim=d](x): N outputs, as aten::chunk */
static void sp_constant_chunk(ts_sp *sp, ts_node *n) {
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_unshape(sp, n->outputs[k]);
  const ts_attr *ca = ts_node_attr(n, "chunks"), *da = ts_node_attr(n, "dim");
  if (n->ninputs != 1 || !ca || !da || ca->kind != TS_ATTR_INT || da->kind != TS_ATTR_INT)
    return;
  const ts_type *t = n->inputs[0]->type;
  int64_t d;
  if (t->kind != TS_TY_TENSOR || !t->tensor || t->tensor->rank < 1 || !ts_sr_wrap_dim(da->u.i, t->tensor->rank, &d))
    return;
  int64_t sizes[TS_SR_MAX_RANK * 4];
  uint32_t cnt = 0;
  if (t->tensor->sizes[d] >= 0)
    cnt = ts_sr_chunk_sizes(t->tensor->sizes[d], ca->u.i, sizes, sizeof sizes / sizeof *sizes);
  for (uint32_t k = 0; k < n->noutputs; k++) {
    int64_t sz[TS_SR_MAX_RANK];
    memcpy(sz, t->tensor->sizes, (size_t)t->tensor->rank * sizeof *sz);
    sz[d] = cnt == n->noutputs ? sizes[k] : -1;
    ts_tensor_info ti = *t->tensor;
    ti.sizes = sz;
    const ts_type *o = ts_type_tensor(sp_arena(n->outputs[k]), &ti);
    if (!o)
      sp->oom = true;
    sp_set(sp, n->outputs[k], o);
  }
}

/* prim::unchecked_cast / unchecked_unwrap_optional: the input's refinement
 * where it fits the output's type. */
static void sp_cast(ts_sp *sp, ts_node *n) {
  sp_unshape(sp, n->outputs[0]);
  if (n->ninputs != 1)
    return;
  const ts_type *t = n->inputs[0]->type;
  if (t->kind == TS_TY_OPTIONAL && n->outputs[0]->type->kind != TS_TY_OPTIONAL)
    t = t->elems[0];
  sp_set(sp, n->outputs[0], t);
}

/* prim::FusionGroup: the subgraph propagated from the node's inputs; its
 * outputs are the node's. Types cross arenas by copy. */
static bool sp_fusion_group(ts_sp *sp, ts_node *n) {
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_unshape(sp, n->outputs[k]);
  if (!a || a->kind != TS_ATTR_GRAPH || !a->u.g)
    return true;
  ts_graph *sub = a->u.g;
  ts_block *b = sub->block;
  if (ts_block_ninputs(b) != n->ninputs || ts_block_noutputs(b) != n->noutputs)
    return true;
  for (uint32_t k = 0; k < n->ninputs; k++) {
    ts_value *p = ts_block_input(b, k);
    sp_unshape(sp, p);
    const ts_type *t = ts_type_clone(&sub->arena, n->inputs[k]->type);
    if (!t)
      sp->oom = true;
    sp_set(sp, p, t);
  }
  if (!sp_block(sp, b))
    return false;
  for (uint32_t k = 0; k < n->noutputs; k++) {
    const ts_type *t = ts_type_clone(sp_arena(n->outputs[k]), ts_block_output(b, k)->type);
    if (!t)
      sp->oom = true;
    sp_set(sp, n->outputs[k], t);
  }
  return !sp->oom;
}

/* An op without a rule whose returns are arguments it writes (the out=
 * overloads: "Tensor(a!) out) -> Tensor(a!)") returns those arguments. */
static void sp_written_returns(ts_sp *sp, ts_node *n, const ts_schema *s) {
  for (uint32_t r = 0; r < s->nrets && r < n->noutputs; r++) {
    const ts_alias *ra = s->rets[r].alias;
    if (!ra || !ra->is_write || ra->nsets != 1)
      continue;
    for (uint32_t i = 0; i < s->nargs && i < n->ninputs; i++) {
      const ts_alias *aa = s->args[i].alias;
      if (aa && aa->is_write && aa->nsets == 1 && strcmp(aa->sets[0], ra->sets[0]) == 0) {
        sp_set(sp, n->outputs[r], n->inputs[i]->type);
        break;
      }
    }
  }
}

/* ------------------------------------------------------- resizes */

/* The inputs node n (of schema s) may give other sizes in place, as
 * [*first, *first + *count): self of an in-place view op (ts_schema_variant)
 * or of resize_, resize_as_, set_, as_strided_; the out arguments of an out=
 * overload (PyTorch's resizesInput). */
static void sp_resize_args(const ts_node *n, const ts_schema *s, uint32_t *first, uint32_t *count) {
  *first = *count = 0;
  if (!s)
    return;
  ts_variant v = ts_schema_variant(s);
  if (v.kind == TS_VARIANT_INPLACE_VIEW || !strcmp(s->name, "aten::resize_") ||
      !strcmp(s->name, "aten::resize_as_") || !strcmp(s->name, "aten::set_") ||
      !strcmp(s->name, "aten::as_strided_")) {
    *count = n->ninputs ? 1 : 0;
  } else if (v.kind == TS_VARIANT_OUT && n->ninputs >= v.nouts) {
    *first = n->ninputs - v.nouts;
    *count = v.nouts;
  }
}

static const ts_schema *sp_schema(const ts_node *n) {
  return n->kind < TS_K_COUNT && !(n->op && (n->op->flags & TS_OPF_SPECIAL)) ? ts_node_schema(n) : NULL;
}

static bool sp_add_root(ts_sp *sp, const ts_value *x) {
  for (uint32_t i = 0; i < sp->nroots; i++)
    if (sp->roots[i] == x)
      return false;
  if (sp->nroots == sp->caproots) {
    uint32_t cap = sp->caproots ? 2 * sp->caproots : 8;
    const ts_value **r = realloc(sp->roots, cap * sizeof *r);
    if (!r) {
      sp->oom = true;
      return false;
    }
    sp->roots = r;
    sp->caproots = cap;
  }
  sp->roots[sp->nroots++] = x;
  return true;
}

/* Whether output r of out= node n provably has the sizes its out argument x
 * had (then nothing is resized). */
static bool sp_out_fits(const ts_node *n, uint32_t r, const ts_value *x) {
  if (r >= n->noutputs)
    return false;
  const ts_tensor_info *a = x->type->tensor, *b = n->outputs[r]->type->tensor;
  if (!a || !b || a->rank < 0 || a->rank != b->rank || !a->sizes || !b->sizes)
    return false;
  for (int32_t i = 0; i < a->rank; i++)
    if (a->sizes[i] == -1 || a->sizes[i] != b->sizes[i])
      return false;
  return true;
}

/* Adds the roots of b's nodes: with `outs`, the out= arguments whose fit
 * the propagated types do not prove; else the others (they need no
 * types). Returns how many were new. */
static uint32_t sp_find_roots(ts_sp *sp, const ts_block *b, bool outs) {
  uint32_t added = 0;
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->nblocks; i++)
      added += sp_find_roots(sp, n->blocks[i], outs);
    const ts_schema *s = sp_schema(n);
    uint32_t first, count;
    sp_resize_args(n, s, &first, &count);
    if (!count || (ts_schema_variant(s).kind == TS_VARIANT_OUT) != outs)
      continue;
    bool ruled = ts_sr_rule_for(s) != NULL;
    for (uint32_t k = 0; k < count; k++) {
      const ts_value *x = n->inputs[first + k];
      if (x->type->kind != TS_TY_TENSOR || (outs && ruled && sp_out_fits(n, k, x)))
        continue;
      added += sp_add_root(sp, x);
    }
  }
  return added;
}

static void sp_mark_pinned(ts_sp *sp, const ts_value *v) {
  if (v->id >= sp->npinned)
    return;
  for (uint32_t i = 0; i < sp->nroots && !sp->pinned[v->id]; i++)
    sp->pinned[v->id] = v == sp->roots[i] || ts_alias_may_alias(sp->db, v, sp->roots[i]);
}

static void sp_mark_block(ts_sp *sp, const ts_block *b) {
  for (uint32_t i = 0; i < ts_block_ninputs(b); i++)
    sp_mark_pinned(sp, ts_block_input(b, i));
  for (const ts_node *n = ts_block_first(b); n != b->ret; n = n->next) {
    for (uint32_t i = 0; i < n->noutputs; i++)
      sp_mark_pinned(sp, n->outputs[i]);
    for (uint32_t i = 0; i < n->nblocks; i++)
      sp_mark_block(sp, n->blocks[i]);
  }
}

/* Marks every value that may alias a root. False if the alias db could not
 * be made (it said why). */
static bool sp_mark(ts_sp *sp) {
  if (!sp->nroots)
    return true;
  if (!sp->db && !(sp->db = ts_alias_db_new(sp->g, sp->d)))
    return false;
  free(sp->pinned);
  sp->npinned = sp->g->next_value_id;
  if (!(sp->pinned = calloc(sp->npinned ? sp->npinned : 1, 1))) {
    sp->oom = true;
    return true;
  }
  sp_mark_block(sp, sp->g->block);
  return true;
}

/* A marked value keeps only its dtype, device and requires_grad (tensors;
 * containers of tensors lose every refinement). */
static void sp_pin(ts_sp *sp, ts_value *v) {
  if (!sp->pinned || v->node->graph != sp->g || v->id >= sp->npinned || !sp->pinned[v->id])
    return;
  const ts_type *t = v->type;
  if (t->kind == TS_TY_TENSOR) {
    if (!t->tensor || t->tensor->rank < 0)
      return;
    ts_tensor_info ti = *t->tensor;
    ti.rank = -1;
    ti.sizes = NULL;
    ti.strides = NULL;
    const ts_type *u = ts_type_tensor(sp_arena(v), &ti);
    if (!u)
      sp->oom = true;
    else
      ts_value_set_type(v, u);
  } else {
    sp_unshape(sp, v);
  }
}

static bool sp_node_types(ts_sp *sp, ts_node *n);

static bool sp_node(ts_sp *sp, ts_node *n) {
  if (!sp_node_types(sp, n))
    return false;
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_pin(sp, n->outputs[k]);
  return !sp->oom;
}

static bool sp_node_types(ts_sp *sp, ts_node *n) {
  switch (n->kind) {
  case TS_K_prim_Constant:
  case TS_K_prim_Param:
    return true;
  case TS_K_prim_If: return sp_if(sp, n);
  case TS_K_prim_Loop: return sp_loop(sp, n);
  case TS_K_prim_ListConstruct: sp_list_construct(sp, n); return !sp->oom;
  case TS_K_prim_ListUnpack: sp_list_unpack(sp, n); return !sp->oom;
  case TS_K_prim_TupleConstruct: sp_tuple_construct(sp, n); return !sp->oom;
  case TS_K_prim_TupleUnpack: sp_tuple_unpack(sp, n); return !sp->oom;
  case TS_K_prim_TupleIndex: sp_tuple_index(sp, n); return !sp->oom;
  case TS_K_prim_ConstantChunk: sp_constant_chunk(sp, n); return !sp->oom;
  case TS_K_prim_unchecked_cast:
  case TS_K_prim_unchecked_unwrap_optional: sp_cast(sp, n); return !sp->oom;
  case TS_K_prim_FusionGroup: return sp_fusion_group(sp, n);
  default: break;
  }
  for (uint32_t k = 0; k < n->noutputs; k++)
    sp_unshape(sp, n->outputs[k]);
  for (uint32_t k = 0; k < n->nblocks; k++)
    if (!sp_block(sp, n->blocks[k]))
      return false;
  const ts_schema *s = n->kind < TS_K_COUNT ? ts_node_schema(n) : NULL;
  ts_sr_fn rule = ts_sr_rule_for(s);
  if (rule) {
    ts_sr_call c = {.node = n, .schema = s, .sp = sp};
    rule(&c);
    if (c.oom)
      sp->oom = true;
  } else if (s) {
    sp_written_returns(sp, n, s);
  }
  return !sp->oom;
}

static bool sp_block(ts_sp *sp, ts_block *b) {
  for (uint32_t i = 0; i < ts_block_ninputs(b); i++)
    sp_pin(sp, ts_block_input(b, i));
  for (ts_node *n = ts_block_first(b); n != b->ret; n = n->next)
    if (!sp_node(sp, n))
      return false;
  return true;
}

/* ------------------------------------------------------------- entry */

bool ts_pass_shape_prop(ts_graph *g, const ts_type *const *types, uint32_t ntypes, ts_diag *d) {
  if (!ts_sr_init(d)) {
    ts_diag_error(d, "shape-prop: the shape rule table is broken");
    return false;
  }
  ts_block *top = g->block;
  uint32_t nin = ts_block_ninputs(top);
  if (types && ntypes > nin) {
    ts_diag_error(d, "shape-prop: %u input types for a graph of %u inputs", ntypes, nin);
    return false;
  }
  ts_sp *sp = calloc(1, sizeof *sp);
  if (!sp) {
    ts_diag_error(d, "shape-prop: out of memory");
    return false;
  }
  sp->d = d;
  sp->g = g;
  const ts_type **init = calloc(nin ? nin : 1, sizeof *init);
  if (!init)
    sp->oom = true;
  bool ok = true;
  for (uint32_t i = 0; i < nin && ok && !sp->oom; i++) {
    ts_value *v = ts_block_input(top, i);
    const ts_type *t = types && i < ntypes && types[i] ? ts_type_clone(&g->arena, types[i]) : v->type;
    if (!t) {
      sp->oom = true;
      break;
    }
    if (types && i < ntypes && types[i]) {
      const ts_type *u = ts_type_unshaped(&g->arena, t), *cur = ts_type_unshaped(&g->arena, v->type);
      if (!u || !cur) {
        sp->oom = true;
        break;
      }
      if (cur->kind == TS_TY_OPTIONAL && ts_type_equal(u, cur->elems[0])) {
        /* a tensor given for an optional tensor */
        if (!(t = ts_type_optional(&g->arena, t))) {
          sp->oom = true;
          break;
        }
      } else if (!ts_type_equal(u, cur)) {
        ts_buf want = {0}, have = {0};
        ts_type_print(&want, v->type);
        ts_type_print(&have, t);
        ts_diag_error(d, "shape-prop: input %u ('%s') is of type %s; the spec %s does not fit it", i,
                      v->name ? v->name : "", want.data ? want.data : "?", have.data ? have.data : "?");
        ts_buf_free(&want);
        ts_buf_free(&have);
        ok = false;
        break;
      }
    }
    const ts_type *s = sp_symbolize(sp, &g->arena, t);
    if (!s) {
      sp->oom = true;
      break;
    }
    ts_value_set_type(v, s);
    init[i] = s;
  }
  /* resized tensors: those known from the graph alone, then (after a
   * propagation) out= arguments the result may not fit; once more while
   * that finds new ones */
  if (ok && !sp->oom) {
    sp_find_roots(sp, top, false);
    ok = sp_mark(sp);
  }
  while (ok && !sp->oom) {
    ok = sp_block(sp, top);
    if (!ok || sp->oom || !sp_find_roots(sp, top, true))
      break;
    for (uint32_t i = 0; i < nin; i++)
      ts_value_set_type(ts_block_input(top, i), init[i]);
    sp->nlists = 0;
    ok = sp_mark(sp);
  }
  if (sp->oom || !ts_graph_ok(g)) {
    ts_diag_error(d, "shape-prop: out of memory");
    ok = false;
  }
  ts_alias_db_free(sp->db);
  free(sp->pinned);
  free(sp->roots);
  free(init);
  free(sp->lists);
  free(sp);
  return ok;
}
