/* tests/unit/test_pass_shapes.c: input specs, symbolic sizes in the text
 * format, the shape rule table, and shape propagation checked against what
 * really happens:
 *
 * - every case of tests/fixtures/ops/cases.txt (PyTorch 1.13's own results,
 *   see test_ops.c) whose schema has a shape rule becomes a one-node graph
 *   whose inputs carry the arguments' types (strides included) and whose
 *   scalar and list arguments are constants; after shape-prop, each refined
 *   output type must agree with PyTorch's result (dtype and sizes) and with
 *   the runtime kernel's result (dtype, sizes and, where the type has them,
 *   strides);
 * - every model of tests/fixtures (and of ../shared/zoo when present) is
 *   specialised to its example inputs three ways (concrete sizes, every
 *   size a named symbol, every size unknown), every refined tensor of the
 *   top-level block is added to the graph's output, the graph is run, and
 *   each value must fit its type (a symbol standing for one value
 *   throughout the run).
 *
 *   test_pass_shapes [-v]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "loader.h"
#include "npy.h"
#include "op_cases.h"
#include "passes.h"
#include "shape_rules.h"
#include "test.h"

#ifndef TSAOT_SOURCE_DIR
#define TSAOT_SOURCE_DIR "."
#endif

#define MAX_ARGS 64

static bool verbose;

/* ------------------------------------------------------------- specs */

static char *type_str(const ts_type *t) {
  static char buf[512];
  ts_buf b = {0};
  ts_type_print(&b, t);
  snprintf(buf, sizeof buf, "%s", b.data ? b.data : "");
  ts_buf_free(&b);
  return buf;
}

static void test_specs(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  struct {
    const char *spec, *type;
  } ok[] = {
      {"f32[1,3,224,224]", "Float(1, 3, 224, 224, strides=[150528, 50176, 224, 1], requires_grad=0, device=cpu)"},
      {"i64[]", "Long(requires_grad=0, device=cpu)"},
      {" f16 [ 2 , 3 ] ", "Half(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"},
      {"bool[0]", "Bool(0, strides=[1], requires_grad=0, device=cpu)"},
      {"u8[4]", "Byte(4, strides=[1], requires_grad=0, device=cpu)"},
      {"i8[4]", "Char(4, strides=[1], requires_grad=0, device=cpu)"},
      {"i16[4]", "Short(4, strides=[1], requires_grad=0, device=cpu)"},
      {"i32[4]", "Int(4, strides=[1], requires_grad=0, device=cpu)"},
      {"bf16[4]", "BFloat16(4, strides=[1], requires_grad=0, device=cpu)"},
      {"f64[4]", "Double(4, strides=[1], requires_grad=0, device=cpu)"},
      {"f32[?,3]", "Float(*, 3, requires_grad=0, device=cpu)"},
  };
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    ts_diag d = {0};
    const ts_type *t = ts_pass_spec_parse(&a, ok[i].spec, strlen(ok[i].spec), &d);
    if (TS_CHECK(t))
      TS_CHECK_STREQ(type_str(t), ok[i].type);
    TS_CHECK_INTEQ(d.errors, 0);
    ts_diag_free(&d);
  }
  /* a name is a symbol, the same in every spec; different names differ */
  const ts_type *n1 = ts_pass_spec_parse(&a, "f32[N,3]", 8, NULL);
  const ts_type *n2 = ts_pass_spec_parse(&a, "i64[N]", 6, NULL);
  const ts_type *m = ts_pass_spec_parse(&a, "f32[M,N]", 8, NULL);
  if (TS_CHECK(n1 && n2 && m)) {
    TS_CHECK(n1->tensor->sizes[0] <= -2);
    TS_CHECK(n1->tensor->sizes[0] == n2->tensor->sizes[0]);
    TS_CHECK(m->tensor->sizes[1] == n1->tensor->sizes[0] && m->tensor->sizes[0] != n1->tensor->sizes[0]);
    TS_CHECK(!n1->tensor->strides);
  }
  struct {
    const char *spec, *msg;
  } bad[] = {
      {"f32[1,3", "expected ',' or ']' at column 8"},
      {"f31[1]", "unknown dtype"},
      {"[1]", "expected a dtype"},
      {"f32(1)", "expected '[' at column 4"},
      {"f32[1,-2]", "negative size at column 7"},
      {"f32[1,,2]", "expected a size (an integer, a name or '?') at column 7"},
      {"f32[1] x", "unexpected text after ']' at column 8"},
      {"f32[abcdefghijk]", "size name longer than 10 characters"},
      {"f32[99999999999999999999]", "size too large"},
      {"", "expected a dtype"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ts_diag d = {0};
    const ts_type *t = ts_pass_spec_parse(&a, bad[i].spec, strlen(bad[i].spec), &d);
    TS_CHECK(!t);
    if (TS_CHECK(d.errors == 1 && d.text.data)) {
      TS_CHECK(strstr(d.text.data, bad[i].msg) != NULL);
      TS_CHECK(strstr(d.text.data, bad[i].spec) != NULL);
      if (!strstr(d.text.data, bad[i].msg))
        fprintf(stderr, "  got: %s\n", d.text.data);
    }
    ts_diag_free(&d);
  }
  /* rank above 64 */
  char big[400];
  size_t n = (size_t)snprintf(big, sizeof big, "f32[1");
  for (int k = 0; k < 64; k++)
    n += (size_t)snprintf(big + n, sizeof big - n, ",1");
  snprintf(big + n, sizeof big - n, "]");
  TS_CHECK(!ts_pass_spec_parse(&a, big, strlen(big), NULL));

  /* of a tensor: contiguous strides whatever the tensor's */
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  int64_t sizes[2] = {2, 3};
  ts_rt_tensor *t = ts_rt_tensor_new(&c, TS_DT_INT32, 2, sizes, true);
  int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
  ts_rt_tensor *v = t ? ts_rt_tensor_view(&c, t, 0, 2, tsz, tst) : NULL;
  const ts_type *st = v ? ts_pass_spec_of_tensor(&a, v) : NULL;
  if (TS_CHECK(st))
    TS_CHECK_STREQ(type_str(st), "Int(3, 2, strides=[2, 1], requires_grad=0, device=cpu)");
  if (v)
    ts_rt_tensor_release(v);
  if (t)
    ts_rt_tensor_release(t);
  ts_rt_ctx_free(&c);
  ts_arena_release(&a);
}

/* SS(-n) in types: printed and read back */
static void test_symbol_text(void) {
  ts_arena a;
  ts_arena_init(&a, 0);
  const char *txt = "Float(SS(-2), 3, SS(-17), *, requires_grad=0, device=cpu)";
  ts_diag d = {0};
  const ts_type *t = ts_type_parse(&a, txt, strlen(txt), &d);
  if (TS_CHECK(t && t->tensor && t->tensor->rank == 4)) {
    TS_CHECK(t->tensor->sizes[0] == -2 && t->tensor->sizes[2] == -17 && t->tensor->sizes[3] == -1);
    TS_CHECK_STREQ(type_str(t), txt);
  }
  ts_diag_free(&d);
  const char *bad[] = {"Float(SS(-1))", "Float(SS(0))", "Float(SS(2))", "Float(SS(-2)"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ts_diag e = {0};
    TS_CHECK(!ts_type_parse(&a, bad[i], strlen(bad[i]), &e));
    TS_CHECK(e.errors > 0);
    ts_diag_free(&e);
  }
  /* a symbol is one particular size: not a subtype of another size */
  const ts_type *s2 = ts_type_parse(&a, "Float(SS(-2))", 13, NULL), *s3 = ts_type_parse(&a, "Float(SS(-3))", 13, NULL);
  const ts_type *c4 = ts_type_parse(&a, "Float(4)", 8, NULL), *any = ts_type_parse(&a, "Float(*)", 8, NULL);
  if (TS_CHECK(s2 && s3 && c4 && any)) {
    TS_CHECK(!ts_type_is_subtype(c4, s2));
    TS_CHECK(!ts_type_is_subtype(s3, s2));
    TS_CHECK(ts_type_is_subtype(s2, s2));
    TS_CHECK(ts_type_is_subtype(s2, any) && ts_type_is_subtype(c4, any));
  }
  ts_arena_release(&a);
}

static void test_rule_table(void) {
  ts_diag d = {0};
  TS_CHECK(ts_sr_init(&d));
  TS_CHECK_INTEQ(d.errors, 0);
  ts_diag_free(&d);
  uint32_t n = 0;
  const ts_sr_def *const *all = ts_sr_all(&n);
  TS_CHECK(n > 300);
  /* every entry is bound to its schema */
  for (uint32_t i = 0; i < n; i++) {
    const char *name = all[i]->schema;
    const char *dot = strchr(strstr(name, "::") + 2, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    ts_kind k = ts_kind_lookup(name, len);
    const ts_schema *s = ts_op_find_overload(k, dot ? dot + 1 : "");
    if (!TS_CHECK(s && ts_sr_rule_for(s) == all[i]->fn))
      fprintf(stderr, "  rule %s\n", name);
  }
  if (verbose) {
    printf("shape rules: %u\n", n);
    /* schemas returning tensors without a rule (out= overloads aside) */
    for (int k = 0; k < TS_K_COUNT; k++) {
      uint32_t ns = 0;
      const ts_schema *const *ss = ts_op_schemas((ts_kind)k, &ns);
      for (uint32_t i = 0; i < ns; i++) {
        bool tensor = false;
        for (uint32_t r = 0; r < ss[i]->nrets; r++)
          tensor = tensor || ss[i]->rets[r].type->kind == TS_TY_TENSOR ||
                   (ss[i]->rets[r].type->kind == TS_TY_LIST && ss[i]->rets[r].type->elems[0]->kind == TS_TY_TENSOR);
        size_t ol = strlen(ss[i]->overload);
        bool out = ol >= 3 && !strcmp(ss[i]->overload + ol - 3, "out");
        if (tensor && !out && !ts_sr_rule_for(ss[i]))
          printf("  no rule: %s%s%s\n", ss[i]->name, ol ? "." : "", ss[i]->overload);
      }
    }
  }
}

/* ------------------------------------------------------- op cases */

/* Whether a graph can take value v (of list KIND list_kind, if a list) as an
 * input or a constant: not Uninitialized, a tuple or a dict, and a list only
 * of a kind oc_arg builds, holding no lists. */
static bool oc_taken(ts_iv v, const char *list_kind) {
  switch (v.tag) {
  case TS_IV_NONE:
  case TS_IV_INT:
  case TS_IV_DOUBLE:
  case TS_IV_BOOL:
  case TS_IV_STR:
  case TS_IV_DEVICE:
  case TS_IV_TENSOR:
    return true;
  case TS_IV_LIST:
    if (!list_kind || (strcmp(list_kind, "int") && strcmp(list_kind, "float") && strcmp(list_kind, "bool") &&
                       strcmp(list_kind, "Tensor") && strcmp(list_kind, "opt")))
      return false;
    for (uint32_t k = 0; k < v.u.l->n; k++)
      if (!oc_taken(v.u.l->items[k], NULL))
        return false;
    return true;
  default:
    return false;
  }
}

/* Reads an arg or out value of the manifest into *v if a graph can take it
 * (see oc_taken); *list_kind (if not NULL) gets a list's KIND (NULL if v is
 * no list). */
static bool oc_graph_value(oc_env *e, oc_toks *tk, ts_iv *v, const char **list_kind) {
  const char *kind = tk->i + 1 < tk->n && !strcmp(tk->t[tk->i], "L") ? tk->t[tk->i + 1] : NULL;
  if (list_kind)
    *list_kind = kind;
  if (oc_value(e, tk, v, NULL, NULL) && oc_taken(*v, kind))
    return true;
  ts_iv_release(*v);
  return false;
}

/* The refined type of a runtime tensor: dtype, sizes, its strides. */
static const ts_type *oc_tensor_type(ts_arena *a, const ts_rt_tensor *t) {
  ts_tensor_info ti = {.dtype = t->dtype, .requires_grad = 0, .undefined = -1, .device = {TS_DEV_CPU, -1},
                       .rank = t->ndim, .sizes = t->sizes, .strides = t->strides};
  return ts_type_tensor(a, &ti);
}

/* A graph input (tensors) or a constant (the rest) for one argument. */
static ts_value *oc_arg(ts_graph *g, ts_node *at, ts_iv v, const char *list_kind) {
  ts_arena *a = ts_graph_arena(g);
  ts_cval cv = {.kind = TS_CV_NONE};
  switch (v.tag) {
  case TS_IV_TENSOR: return ts_block_add_input(g->block, oc_tensor_type(a, v.u.t));
  case TS_IV_NONE: break;
  case TS_IV_INT: cv.kind = TS_CV_INT, cv.i = v.u.i; break;
  case TS_IV_DOUBLE: cv.kind = TS_CV_FLOAT, cv.f = v.u.d; break;
  case TS_IV_BOOL: cv.kind = TS_CV_BOOL, cv.i = v.u.b; break;
  case TS_IV_STR: cv.kind = TS_CV_STR, cv.s = v.u.s->data, cv.len = v.u.s->len; break;
  case TS_IV_DEVICE: cv.kind = TS_CV_DEVICE, cv.dev = v.u.dev; break;
  case TS_IV_LIST: {
    ts_rt_list *l = v.u.l;
    if (!strcmp(list_kind, "int") || !strcmp(list_kind, "float")) {
      bool isint = !strcmp(list_kind, "int");
      ts_node *n = ts_node_new(g, TS_K_prim_Constant, 1);
      if (!n)
        return NULL;
      int64_t is[256];
      double fs[256];
      if (l->n > 256)
        return NULL;
      for (uint32_t k = 0; k < l->n; k++) {
        is[k] = l->items[k].tag == TS_IV_INT ? l->items[k].u.i : 0;
        fs[k] = l->items[k].tag == TS_IV_DOUBLE ? l->items[k].u.d : (double)is[k];
      }
      if (isint ? !ts_node_set_is(n, "value", is, l->n) : !ts_node_set_fs(n, "value", fs, l->n))
        return NULL;
      ts_value_set_type(n->outputs[0], ts_type_list(a, ts_type_leaf(isint ? TS_TY_INT : TS_TY_FLOAT)));
      ts_node_insert_before(n, at);
      return n->outputs[0];
    }
    const ts_type *et = !strcmp(list_kind, "bool")     ? ts_type_leaf(TS_TY_BOOL)
                        : !strcmp(list_kind, "Tensor") ? ts_type_leaf(TS_TY_TENSOR)
                                                       : ts_type_optional(a, ts_type_leaf(TS_TY_TENSOR));
    ts_node *n = ts_node_new(g, TS_K_prim_ListConstruct, 1);
    if (!n)
      return NULL;
    ts_node_insert_before(n, at);
    for (uint32_t k = 0; k < l->n; k++) {
      ts_value *x = oc_arg(g, n, l->items[k], "");
      if (!x || !ts_node_add_input(n, x))
        return NULL;
    }
    ts_value_set_type(n->outputs[0], ts_type_list(a, et));
    return n->outputs[0];
  }
  default: return NULL;
  }
  return ts_pass_const_insert(at, &cv);
}

typedef struct oc_stats {
  int cases, checked, refined, unrefined, failed, skipped;
} oc_stats;

/* Whether a refined tensor type fits tensor x; with `strides` its strides
 * too (dims of size 1 aside). The reason in why if not. */
static bool oc_fits(const ts_type *t, const ts_rt_tensor *x, bool strides, ts_buf *why, const char *what) {
  const ts_tensor_info *ti = t->tensor;
  if (!ti)
    return true;
  if (ti->dtype != TS_DT_NONE && ti->dtype != x->dtype) {
    ts_buf_printf(why, "%s: dtype %s, type says %s", what, ts_dtype_name((ts_dtype)x->dtype),
                  ts_dtype_name((ts_dtype)ti->dtype));
    return false;
  }
  if (ti->rank < 0)
    return true;
  bool ok = ti->rank == x->ndim;
  for (int32_t k = 0; ok && k < ti->rank; k++)
    ok = ti->sizes[k] < 0 || ti->sizes[k] == x->sizes[k];
  for (int32_t k = 0; ok && strides && ti->strides && k < ti->rank; k++)
    ok = x->sizes[k] <= 1 || ti->strides[k] == x->strides[k];
  if (!ok) {
    ts_buf_printf(why, "%s: [", what);
    for (int32_t k = 0; k < x->ndim; k++)
      ts_buf_printf(why, "%s%lld", k ? ", " : "", (long long)x->sizes[k]);
    ts_buf_puts(why, "] strides [");
    for (int32_t k = 0; k < x->ndim; k++)
      ts_buf_printf(why, "%s%lld", k ? ", " : "", (long long)x->strides[k]);
    ts_buf_puts(why, "], type says ");
    ts_type_print(why, t);
  }
  return ok;
}

/* Checks the refined output types of a one-node graph for case k. */
static void oc_check(oc_env *e, oc_stats *st, const char *name, const ts_schema *s, ts_iv *in, uint32_t nin,
                     const char **kinds, ts_iv *expect, uint32_t nexpect) {
  ts_graph *g = ts_graph_new(0);
  ts_kind kind = ts_kind_lookup(s->name, strlen(s->name));
  ts_node *n = g ? ts_node_new(g, kind, s->nrets) : NULL;
  if (!n) {
    st->skipped++;
    ts_graph_free(g);
    return;
  }
  ts_block_append_node(g->block, n);
  bool ok = true;
  for (uint32_t i = 0; ok && i < nin; i++) {
    ts_value *v = oc_arg(g, n, in[i], kinds[i] ? kinds[i] : "");
    ok = v && ts_node_add_input(n, v);
  }
  for (uint32_t r = 0; ok && r < s->nrets; r++) {
    const ts_type *rt = s->rets[r].type;
    if (rt->kind != TS_TY_TENSOR && !(rt->kind == TS_TY_LIST && rt->elems[0]->kind == TS_TY_TENSOR))
      ok = false;
    else
      ts_value_set_type(n->outputs[r], rt);
  }
  for (uint32_t r = 0; ok && r < s->nrets; r++)
    ok = ts_block_add_output(g->block, n->outputs[r]);
  ts_diag d = {0};
  if (!ok || ts_node_schema(n) != s || !ts_graph_verify(g, &d)) {
    st->skipped++;
    if (verbose)
      printf("  not taken: %s (%s)\n", name, !ok ? "arguments" : d.errors ? "verify" : "another overload");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  st->checked++;
  if (!TS_CHECK(ts_pass_shape_prop(g, NULL, 0, &d))) {
    fprintf(stderr, "  %s: shape-prop failed: %s\n", name, d.text.data ? d.text.data : "");
    ts_diag_free(&d);
    ts_graph_free(g);
    return;
  }
  ts_diag_free(&d);
  /* the runtime's result */
  ts_iv out[MAX_ARGS];
  ts_rt_call call = {.in = in, .nin = nin, .out = out, .nout = s->nrets, .node = NULL};
  ts_rt_kernel_fn fn = ts_rt_kernel_for(s);
  ts_rt_clear_error(e->c);
  bool ran = fn && fn(e->c, &call);
  bool refined = false, good = true;
  e->why.len = 0;
  for (uint32_t r = 0; r < s->nrets; r++) {
    const ts_type *t = n->outputs[r]->type;
    char what[64];
    if (t->kind == TS_TY_TENSOR && t->tensor) {
      refined = true;
      snprintf(what, sizeof what, "output %u vs PyTorch", r);
      if (r < nexpect && expect[r].tag == TS_IV_TENSOR)
        good = good && oc_fits(t, expect[r].u.t, false, &e->why, what);
      snprintf(what, sizeof what, "output %u vs the kernel", r);
      if (ran && out[r].tag == TS_IV_TENSOR)
        good = good && oc_fits(t, out[r].u.t, true, &e->why, what);
    } else if (t->kind == TS_TY_LIST && t->elems[0]->tensor) {
      refined = true;
      ts_iv lists[2] = {r < nexpect ? expect[r] : ts_iv_none(), ran ? out[r] : ts_iv_none()};
      for (int w = 0; w < 2; w++) {
        if (lists[w].tag != TS_IV_LIST)
          continue;
        for (uint32_t k = 0; k < lists[w].u.l->n; k++) {
          snprintf(what, sizeof what, "output %u[%u] vs %s", r, k, w ? "the kernel" : "PyTorch");
          if (lists[w].u.l->items[k].tag == TS_IV_TENSOR)
            good = good && oc_fits(t->elems[0], lists[w].u.l->items[k].u.t, w == 1, &e->why, what);
        }
      }
    }
  }
  if (ran)
    for (uint32_t r = 0; r < s->nrets; r++)
      ts_iv_release(out[r]);
  if (refined)
    st->refined++;
  else
    st->unrefined++;
  if (!TS_CHECK(good)) {
    st->failed++;
    ts_buf b = {0};
    ts_graph_print(&b, g);
    fprintf(stderr, "  %s: %s\n%s", name, e->why.data ? e->why.data : "", b.data ? b.data : "");
    ts_buf_free(&b);
  } else if (verbose && !refined) {
    printf("  unrefined: %s\n", name);
  }
  ts_graph_free(g);
}

/* The cases of one folder of tests/fixtures/ops (oc_dirs_list). */
static void test_op_cases_in(const char *dir, oc_stats *stp) {
  ts_rt_ctx c;
  oc_env e = {.c = &c};
  char *man = oc_open(&e, dir);
  if (!TS_CHECK(man))
    return;
  ts_rt_ctx_init(&c, 1);
  oc_stats st = *stp;
  static oc_toks tk;
  char name[256] = "", schema[256] = "";
  ts_iv in[MAX_ARGS], expect[MAX_ARGS];
  const char *kinds[MAX_ARGS];
  uint32_t nin = 0, nexpect = 0;
  bool usable = false, error_case = false;
  char *save = NULL;
  for (char *line = strtok_r(man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#')
      continue;
    oc_split(line, &tk);
    const char *w = oc_next(&tk);
    if (!w)
      continue;
    if (!strcmp(w, "case")) {
      snprintf(name, sizeof name, "%s", oc_next(&tk) ? tk.t[1] : "");
      snprintf(schema, sizeof schema, "%s", oc_next(&tk) ? tk.t[2] : "");
      nin = nexpect = 0;
      usable = true;
      error_case = false;
      st.cases++;
    } else if (!strcmp(w, "arg") && usable) {
      if (nin == MAX_ARGS || !oc_graph_value(&e, &tk, &in[nin], &kinds[nin]))
        usable = false;
      else
        nin++;
    } else if (!strcmp(w, "out") && usable) {
      if (nexpect == MAX_ARGS || !oc_graph_value(&e, &tk, &expect[nexpect], NULL))
        usable = false;
      else
        nexpect++;
    } else if (!strcmp(w, "error")) {
      error_case = true;
    } else if (!strcmp(w, "end")) {
      const char *dot = strchr(strstr(schema, "::") ? strstr(schema, "::") + 2 : schema, '.');
      size_t len = dot ? (size_t)(dot - schema) : strlen(schema);
      ts_kind k = ts_kind_lookup(schema, len);
      const ts_schema *s = k == TS_K_OTHER ? NULL : ts_op_find_overload(k, dot ? dot + 1 : "");
      if (usable && !error_case && s && ts_sr_rule_for(s))
        oc_check(&e, &st, name, s, in, nin, kinds, expect, nexpect);
      else if (s && ts_sr_rule_for(s)) {
        st.skipped++;
        if (verbose && !error_case)
          printf("  not taken: %s\n", name);
      }
      for (uint32_t i = 0; i < nin; i++)
        ts_iv_release(in[i]);
      for (uint32_t i = 0; i < nexpect; i++)
        ts_iv_release(expect[i]);
      nin = nexpect = 0;
      usable = false;
      e.why.len = 0;
    }
  }
  *stp = st;
  oc_close(&e);
  ts_rt_ctx_free(&c);
  free(man);
}

static void test_op_cases(void) {
  oc_dirs dirs = {0};
  if (!TS_CHECK(oc_dirs_list(TSAOT_SOURCE_DIR "/tests/fixtures/ops", &dirs)))
    return;
  oc_stats st = {0};
  for (int i = 0; i < dirs.n; i++)
    test_op_cases_in(dirs.v[i], &st);
  oc_dirs_free(&dirs);
  printf("op cases: %d, with a rule and checked %d (refined %d, left unrefined %d), failed %d, not taken %d\n",
         st.cases, st.checked, st.refined, st.unrefined, st.failed, st.skipped);
  TS_CHECK(st.checked > 500);
  TS_CHECK_INTEQ(st.failed, 0);
}

/* ------------------------------------------------------------ models */

typedef enum mc_mode { MC_CONCRETE, MC_NAMED, MC_UNKNOWN } mc_mode;

typedef struct mc_syms {
  int64_t sym[4096], val[4096];
  int n;
} mc_syms;

/* x fits t, a symbol meaning the same size in every value of the run. */
static bool mc_fits(const ts_type *t, const ts_rt_tensor *x, mc_syms *syms, ts_buf *why, const char *what) {
  if (!oc_fits(t, x, true, why, what))
    return false;
  const ts_tensor_info *ti = t->tensor;
  if (!ti || ti->rank != x->ndim)
    return true;
  for (int32_t k = 0; k < ti->rank; k++) {
    if (ti->sizes[k] > -2)
      continue;
    int i = 0;
    while (i < syms->n && syms->sym[i] != ti->sizes[k])
      i++;
    if (i == syms->n && syms->n < 4096) {
      syms->sym[i] = ti->sizes[k];
      syms->val[syms->n++] = x->sizes[k];
    } else if (i < syms->n && syms->val[i] != x->sizes[k]) {
      ts_buf_printf(why, "%s: SS(%lld) is %lld here but was %lld before", what, (long long)ti->sizes[k],
                    (long long)x->sizes[k], (long long)syms->val[i]);
      return false;
    }
  }
  return true;
}

/* A spec for tensor t: its sizes, or names standing for them, or "?". */
static const ts_type *mc_spec(ts_arena *a, const ts_rt_tensor *t, mc_mode mode) {
  if (mode == MC_CONCRETE)
    return ts_pass_spec_of_tensor(a, t);
  static const char *const names[] = {"bool", "u8", "i8", "i16", "i32", "i64", "f16", "f32", "f64", "bf16"};
  static const ts_dtype dts[] = {TS_DT_BOOL, TS_DT_UINT8, TS_DT_INT8, TS_DT_INT16, TS_DT_INT32,
                                 TS_DT_INT64, TS_DT_FLOAT16, TS_DT_FLOAT32, TS_DT_FLOAT64, TS_DT_BFLOAT16};
  const char *dn = NULL;
  for (size_t i = 0; i < sizeof dts / sizeof *dts; i++)
    if (dts[i] == t->dtype)
      dn = names[i];
  if (!dn)
    return NULL;
  char buf[1024];
  size_t n = (size_t)snprintf(buf, sizeof buf, "%s[", dn);
  for (int32_t k = 0; k < t->ndim && n < sizeof buf - 32; k++)
    n += mode == MC_NAMED ? (size_t)snprintf(buf + n, sizeof buf - n, "%sD%lld", k ? "," : "", (long long)t->sizes[k])
                          : (size_t)snprintf(buf + n, sizeof buf - n, "%s?", k ? "," : "");
  snprintf(buf + n, sizeof buf - n, "]");
  return ts_pass_spec_parse(a, buf, strlen(buf), NULL);
}

/* The argument for a parameter of type ty from an example array. */
static ts_iv mc_arg(ts_rt_tensor *t, const ts_type *ty) {
  while (ty->kind == TS_TY_OPTIONAL)
    ty = ty->elems[0];
  ts_dtype dt = (ts_dtype)t->dtype;
  const void *p = ts_rt_tensor_data(t);
  if (t->ndim == 0 && (ty->kind == TS_TY_INT || ty->kind == TS_TY_NUMBER) && ts_rt_dtype_is_integral(dt, false))
    return ts_iv_int(ts_rt_load_i64(p, dt));
  if (t->ndim == 0 && (ty->kind == TS_TY_FLOAT || ty->kind == TS_TY_NUMBER))
    return ts_iv_double(ts_rt_load_f64(p, dt));
  if (t->ndim == 0 && ty->kind == TS_TY_BOOL)
    return ts_iv_bool(ts_rt_load_i64(p, dt) != 0);
  ts_rt_tensor_retain(t);
  return ts_iv_tensor(t);
}

/* Runs a model's forward specialised to its inputs, every refined tensor
 * of the top-level block returned too, and checks them. Returns the number
 * of values checked (-1: the model could not run). */
static int mc_check_model(const char *dir, mc_mode mode, int *refined_out) {
  char path[1024];
  snprintf(path, sizeof path, "%s/model.pt", dir);
  ts_diag d = {0};
  ts_rt_model *m = ts_rt_model_load(path, &d);
  ts_graph *orig = m ? ts_rt_model_graph(m, "forward", &d) : NULL;
  ts_graph *g = orig ? ts_graph_copy(orig) : NULL;
  int result = -1;
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 1);
  ts_iv args[16];
  uint32_t nargs = 0;
  const ts_type *types[17] = {NULL};
  if (!g)
    goto done;
  uint32_t nin = ts_block_ninputs(g->block);
  for (uint32_t i = 1; i < nin && i <= 16; i++) {
    snprintf(path, sizeof path, "%s/in%u.npy", dir, i - 1);
    struct stat sb;
    if (stat(path, &sb) != 0)
      break;
    ts_rt_tensor *t = ts_rt_npy_read(&c, path);
    if (!t)
      goto done;
    const ts_type *pt = ts_block_input(g->block, i)->type;
    args[nargs++] = mc_arg(t, pt);
    if (args[nargs - 1].tag == TS_IV_TENSOR && pt->kind == TS_TY_TENSOR)
      types[i] = mc_spec(ts_graph_arena(g), t, mode);
    ts_rt_tensor_release(t);
  }
  if (!TS_CHECK(ts_pass_shape_prop(g, types, nin, &d))) {
    fprintf(stderr, "  %s: shape-prop failed: %s\n", dir, d.text.data ? d.text.data : "");
    goto done;
  }
  /* return (out, v1, ..., vn) */
  ts_block *top = g->block;
  ts_node *tc = ts_node_new(g, TS_K_prim_TupleConstruct, 1);
  if (!tc || ts_block_noutputs(top) != 1)
    goto done;
  ts_node_add_input(tc, ts_block_output(top, 0));
  int refined = 0;
  for (ts_node *n = ts_block_first(top); n != top->ret; n = n->next)
    for (uint32_t k = 0; k < n->noutputs && tc->ninputs < 60; k++) {
      const ts_type *t = n->outputs[k]->type;
      if (t->kind == TS_TY_TENSOR && t->tensor && !ts_node_is(n, TS_K_prim_Constant)) {
        ts_node_add_input(tc, n->outputs[k]);
        refined++;
      }
    }
  for (uint32_t k = 1; k < nin; k++) {
    ts_value *v = ts_block_input(top, k);
    if (v->type->kind == TS_TY_TENSOR && v->type->tensor && tc->ninputs < 64)
      ts_node_add_input(tc, v);
  }
  const ts_type *et[64];
  for (uint32_t k = 0; k < tc->ninputs; k++)
    et[k] = tc->inputs[k]->type;
  ts_value_set_type(tc->outputs[0], ts_type_tuple(ts_graph_arena(g), tc->ninputs, et));
  ts_node_insert_before(tc, top->ret);
  ts_node_replace_input(top->ret, 0, tc->outputs[0]);
  if (!TS_CHECK(ts_graph_verify(g, &d)))
    goto done;
  ts_iv ret = ts_iv_none();
  ts_buf where = {0};
  if (!ts_rt_model_run_graph(m, &c, "forward", g, args, nargs, &ret, &where)) {
    /* a model whose run fails with these inputs is not a test of shapes */
    if (verbose)
      printf("  %s: does not run: %s\n", dir, c.err.data ? c.err.data : "");
    ts_buf_free(&where);
    goto done;
  }
  ts_buf_free(&where);
  mc_syms syms = {.n = 0};
  ts_buf why = {0};
  int checked = 0;
  for (uint32_t k = 1; ret.tag == TS_IV_TUPLE && k < ret.u.tup->n; k++) {
    ts_iv x = ret.u.tup->items[k];
    const ts_value *v = tc->inputs[k];
    char what[256];
    snprintf(what, sizeof what, "%s (mode %d): %%%s", dir, (int)mode, v->name ? v->name : "?");
    if (x.tag != TS_IV_TENSOR)
      continue;
    checked++;
    if (!TS_CHECK(mc_fits(v->type, x.u.t, &syms, &why, what))) {
      fprintf(stderr, "  %s\n", why.data ? why.data : "");
      why.len = 0;
    }
  }
  ts_buf_free(&why);
  ts_iv_release(ret);
  *refined_out = refined;
  result = checked;
done:
  for (uint32_t i = 0; i < nargs; i++)
    ts_iv_release(args[i]);
  ts_diag_free(&d);
  ts_graph_free(g);
  ts_rt_model_free(m);
  ts_rt_ctx_free(&c);
  return result;
}

static void mc_check_dir(const char *root, bool required) {
  DIR *dir = opendir(root);
  if (!dir) {
    if (required)
      TS_CHECK(!"fixtures folder missing");
    else
      printf("models: %s not present, skipped\n", root);
    return;
  }
  char *names[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(dir)) && n < 256;)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(dir);
  int models = 0, values = 0;
  for (int i = 0; i < n; i++) {
    char path[1024], pt[1100], in0[1100];
    snprintf(path, sizeof path, "%s/%s", root, names[i]);
    snprintf(pt, sizeof pt, "%s/model.pt", path);
    snprintf(in0, sizeof in0, "%s/in0.npy", path);
    struct stat sb;
    if (stat(pt, &sb) == 0 && stat(in0, &sb) == 0) {
      for (int mode = 0; mode < 3; mode++) {
        int refined = 0, got = mc_check_model(path, (mc_mode)mode, &refined);
        if (got >= 0) {
          values += got;
          if (mode == 0)
            models++;
          if (verbose)
            printf("  %s mode %d: %d values checked\n", names[i], mode, got);
        }
      }
    }
    free(names[i]);
  }
  printf("models in %s: %d run, %d refined values checked against the run\n", root, models, values);
  if (required)
    TS_CHECK(models >= 10);
}

int main(int argc, char **argv) {
  verbose = argc > 1 && !strcmp(argv[1], "-v");
  ts_diag d = {0};
  if (!TS_CHECK(ts_rt_kernels_init(&d)))
    fprintf(stderr, "%s\n", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  test_specs();
  test_symbol_text();
  test_rule_table();
  test_op_cases();
  mc_check_dir(TSAOT_SOURCE_DIR "/tests/fixtures", true);
  mc_check_dir(TSAOT_SOURCE_DIR "/../shared/zoo", false);
  return ts_test_finish();
}
