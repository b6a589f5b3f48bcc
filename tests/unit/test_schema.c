/* tests/unit/test_schema.c: the FunctionSchema parser and printer, and the
 * op table built from ir/ops.def. */
#include "ir.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ts_arena arena;

/* Parses `text`, which must succeed without diagnostics. */
static const ts_schema *parse_ok(const char *text) {
  ts_diag d = {0};
  const ts_schema *s = ts_schema_parse(&arena, text, &d);
  if (!TS_CHECK(s != NULL) || !TS_CHECK_INTEQ(d.errors, 0))
    fprintf(stderr, "  schema: %s\n%s", text, d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  return s;
}

/* print(parse(text)) must be `want` (NULL: text itself). */
static void check_print(const char *text, const char *want) {
  const ts_schema *s = parse_ok(text);
  if (!s)
    return;
  ts_buf b = {0};
  ts_schema_print(&b, s);
  TS_CHECK_STREQ(b.data, want ? want : text);
  ts_buf_free(&b);
}

/* `text` must fail with one diagnostic that contains `want`. */
static void check_bad(const char *text, const char *want) {
  ts_diag d = {0};
  const ts_schema *s = ts_schema_parse(&arena, text, &d);
  TS_CHECK(s == NULL);
  TS_CHECK_INTEQ(d.errors, 1);
  if (!TS_CHECK(d.text.data && strstr(d.text.data, want)))
    fprintf(stderr, "  schema: %s\n  wanted: %s\n  got: %s", text, want, d.text.data ? d.text.data : "(nothing)\n");
  ts_diag_free(&d);
}

static bool sets_are(const char *const *sets, uint32_t n, const char *a, const char *b) {
  uint32_t want = (a != NULL) + (b != NULL);
  return n == want && (!a || strcmp(sets[0], a) == 0) && (!b || strcmp(sets[1], b) == 0);
}

/* Every schema of the table prints back as written (they are PyTorch's own
 * printed forms), and the table's parsed copies agree. */
static void test_table_roundtrip(void) {
  ts_diag d = {0};
  TS_CHECK(ts_ops_init(&d));
  TS_CHECK_INTEQ(d.errors, 0);
  if (d.errors)
    fprintf(stderr, "%s", d.text.data);
  ts_diag_free(&d);
  int total = 0;
  for (int k = 0; k < TS_K_COUNT; k++) {
    const ts_opdef *op = ts_op_get((ts_kind)k);
    if (!TS_CHECK(op != NULL && op->kind == (ts_kind)k))
      continue;
    uint32_t n;
    const ts_schema *const *parsed = ts_op_schemas((ts_kind)k, &n);
    TS_CHECK_INTEQ(n, op->nschemas);
    for (uint32_t i = 0; i < op->nschemas; i++, total++) {
      check_print(op->schema_texts[i], NULL);
      if (i < n) {
        TS_CHECK_STREQ(parsed[i]->name, op->name);
        TS_CHECK_STREQ(parsed[i]->text, op->schema_texts[i]);
        TS_CHECK(ts_op_find_overload((ts_kind)k, parsed[i]->overload) == parsed[i]);
      }
    }
    if (op->nschemas == 0)
      TS_CHECK(op->flags & (TS_OPF_SPECIAL | TS_OPF_VARIADIC));
  }
  TS_CHECK(total > 500);
}

/* Kind names: every entry is found by name, other names are TS_K_OTHER, and
 * ops.def keeps each namespace sorted (the in-place kind a TS_PW row
 * declares follows its op, and is left out of the order). */
static void test_kinds(void) {
  const char *prev = NULL;
  for (int k = 0; k < TS_K_COUNT; k++) {
    const char *name = ts_kind_name((ts_kind)k);
    if (!TS_CHECK(name != NULL))
      continue;
    TS_CHECK_INTEQ(ts_kind_lookup(name, strlen(name)), k);
    ts_kind base = ts_op_functional_kind((ts_kind)k);
    if (base != TS_K_OTHER && (int)base == k - 1 && ts_pw_of_kind(base))
      continue;
    if (prev) {
      const char *c1 = strchr(prev, ':'), *c2 = strchr(name, ':');
      if ((c1 - prev) == (c2 - name) && strncmp(prev, name, (size_t)(c1 - prev)) == 0 &&
          !TS_CHECK(strcmp(prev, name) < 0))
        fprintf(stderr, "  ops.def out of order: %s before %s\n", prev, name);
    }
    prev = name;
  }
  TS_CHECK_STREQ(ts_kind_name(TS_K_aten_add), "aten::add");
  TS_CHECK_STREQ(ts_kind_name(TS_K_prim_If), "prim::If");
  TS_CHECK(ts_kind_name(TS_K_OTHER) == NULL);
  TS_CHECK(ts_op_get(TS_K_OTHER) == NULL);
  TS_CHECK_INTEQ(ts_kind_lookup("aten::add", 9), TS_K_aten_add);
  TS_CHECK_INTEQ(ts_kind_lookup("aten::add_", 10), TS_K_aten_add_);
  TS_CHECK_INTEQ(ts_kind_lookup("aten::add_.Tensor", 9), TS_K_aten_add); /* length bounds the name */
  TS_CHECK_INTEQ(ts_kind_lookup("prim::FusionGroup_0", 17), TS_K_prim_FusionGroup);
  const char *unknown[] = {"aten::ad", "aten::addx", "aten::", "prim", "", "my::op", "aten::ADD", "zzz::a", "a"};
  for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
    TS_CHECK_INTEQ(ts_kind_lookup(unknown[i], strlen(unknown[i])), TS_K_OTHER);
  TS_CHECK_INTEQ(ts_kind_lookup(NULL, 0), TS_K_OTHER);
  TS_CHECK(ts_op_get(TS_K_prim_RaiseException)->flags & TS_OPF_SIDE_EFFECT);
  TS_CHECK(ts_op_get(TS_K_aten_warn)->flags & TS_OPF_SIDE_EFFECT);
  TS_CHECK(ts_op_get(TS_K_prim_Print)->flags & TS_OPF_SIDE_EFFECT);
  TS_CHECK(!(ts_op_get(TS_K_aten_add)->flags & TS_OPF_SIDE_EFFECT));
  TS_CHECK(ts_op_get(TS_K_prim_ListConstruct)->flags & TS_OPF_VARIADIC);
  TS_CHECK_INTEQ(ts_op_get(TS_K_prim_If)->nschemas, 0);
  TS_CHECK(ts_op_find_overload(TS_K_aten_add, "Tensor") != NULL);
  TS_CHECK(ts_op_find_overload(TS_K_aten_add, "") != NULL);
  TS_CHECK(ts_op_find_overload(TS_K_aten_relu, NULL) != NULL);
  TS_CHECK(ts_op_find_overload(TS_K_aten_add, "nope") == NULL);
  TS_CHECK(ts_op_find_overload(TS_K_OTHER, "") == NULL);
  uint32_t n = 99;
  TS_CHECK(ts_op_schemas(TS_K_OTHER, &n) == NULL && n == 0);
}

/* The flags ts_ops_init derives from the alias annotations, and the ones
 * ops.def writes. */
static void test_derived_flags(void) {
  const ts_schema *view = ts_op_find_overload(TS_K_aten_view, "");
  const ts_schema *chunk = ts_op_find_overload(TS_K_aten_chunk, "");
  const ts_schema *reshape = ts_op_find_overload(TS_K_aten_reshape, "");
  const ts_schema *to = ts_op_find_overload(TS_K_aten_to, "dtype");
  const ts_schema *add = ts_op_find_overload(TS_K_aten_add, "Tensor");
  const ts_schema *add_out = ts_op_find_overload(TS_K_aten_add, "out");
  const ts_schema *add_ = ts_op_find_overload(TS_K_aten_add_, "Tensor");
  const ts_schema *getitem = ts_op_find_overload(TS_K_aten___getitem__, "t");
  if (!TS_CHECK(view && chunk && reshape && to && add && add_out && add_ && getitem))
    return;
  TS_CHECK(ts_op_is_view(view));
  TS_CHECK(ts_op_is_view(chunk)); /* Tensor(a)[] */
  TS_CHECK(!ts_op_is_view(reshape)); /* TS_OPF_MAY_COPY */
  TS_CHECK(!ts_op_is_view(to));
  TS_CHECK(!ts_op_is_view(add) && !ts_op_is_view(add_) && !ts_op_is_view(getitem));
  TS_CHECK(ts_op_is_inplace(add_) && !ts_op_is_inplace(add) && !ts_op_is_inplace(add_out));
  TS_CHECK(ts_op_is_out(add_out) && !ts_op_is_out(add) && !ts_op_is_out(add_));
  TS_CHECK(!ts_op_is_view(NULL) && !ts_op_is_inplace(NULL) && !ts_op_is_out(NULL));
  TS_CHECK(ts_op_get(TS_K_aten_view)->flags & TS_OPF_VIEW);
  TS_CHECK(!(ts_op_get(TS_K_aten_reshape)->flags & TS_OPF_VIEW));
  TS_CHECK(ts_op_get(TS_K_aten_reshape)->flags & TS_OPF_MAY_COPY);
  TS_CHECK(ts_op_get(TS_K_aten_add_)->flags & TS_OPF_INPLACE);
  TS_CHECK(ts_op_get(TS_K_aten_add)->flags & TS_OPF_OUT);
  TS_CHECK(ts_op_get(TS_K_aten_add)->flags & TS_OPF_HAS_INPLACE);
  TS_CHECK(!(ts_op_get(TS_K_aten_add_)->flags & TS_OPF_HAS_INPLACE));
  TS_CHECK_INTEQ(ts_op_inplace_kind(TS_K_aten_add), TS_K_aten_add_);
  TS_CHECK_INTEQ(ts_op_functional_kind(TS_K_aten_add_), TS_K_aten_add);
  TS_CHECK_INTEQ(ts_op_inplace_kind(TS_K_aten_view), TS_K_OTHER);
  TS_CHECK_INTEQ(ts_op_functional_kind(TS_K_aten_add), TS_K_OTHER);
  TS_CHECK_INTEQ(ts_op_inplace_kind(TS_K_OTHER), TS_K_OTHER);
  TS_CHECK(ts_op_get(TS_K_aten_dropout)->flags & TS_OPF_RANDOM);
  TS_CHECK(!(ts_op_get(TS_K_aten_add)->flags & TS_OPF_RANDOM));
  TS_CHECK(ts_op_get(TS_K_aten_detach)->flags & TS_OPF_GRAD_ONLY);
  /* every kind the table pairs is X and X_, and X_ writes its self */
  for (int k = 0; k < TS_K_COUNT; k++) {
    ts_kind ip = ts_op_inplace_kind((ts_kind)k);
    if (ip == TS_K_OTHER)
      continue;
    TS_CHECK_INTEQ(ts_op_functional_kind(ip), k);
    TS_CHECK(ts_op_get(ip)->flags & TS_OPF_INPLACE);
    size_t n = strlen(ts_kind_name((ts_kind)k));
    TS_CHECK(strncmp(ts_kind_name(ip), ts_kind_name((ts_kind)k), n) == 0 && strcmp(ts_kind_name(ip) + n, "_") == 0);
  }
}

static void test_basic(void) {
  const ts_schema *s = parse_ok("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  if (!s)
    return;
  TS_CHECK_STREQ(s->name, "aten::add");
  TS_CHECK_STREQ(s->overload, "Tensor");
  TS_CHECK_INTEQ(s->nargs, 3);
  TS_CHECK_INTEQ(s->nrets, 1);
  TS_CHECK(!s->vararg && !s->varret);
  TS_CHECK_STREQ(s->args[0].name, "self");
  TS_CHECK_STREQ(s->args[2].name, "alpha");
  TS_CHECK_INTEQ(s->args[0].type->kind, TS_TY_TENSOR);
  TS_CHECK_INTEQ(s->args[2].type->kind, TS_TY_NUMBER);
  TS_CHECK(!s->args[0].kwarg_only && !s->args[1].kwarg_only && s->args[2].kwarg_only);
  TS_CHECK(!s->args[0].has_default && s->args[2].has_default);
  TS_CHECK_INTEQ(s->args[2].def.kind, TS_DEF_INT);
  TS_CHECK_INTEQ(s->args[2].def.u.i, 1);
  TS_CHECK_INTEQ(s->args[0].list_len, -1);
  TS_CHECK(s->args[0].alias == NULL);
  TS_CHECK_STREQ(s->rets[0].name, "");
  TS_CHECK_INTEQ(s->rets[0].type->kind, TS_TY_TENSOR);

  s = parse_ok("aten::relu(Tensor self) -> Tensor");
  TS_CHECK(s && strcmp(s->overload, "") == 0 && strcmp(s->name, "aten::relu") == 0);
  s = parse_ok("noname(int a) -> int");
  TS_CHECK(s && strcmp(s->name, "noname") == 0);

  s = parse_ok("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  if (s && TS_CHECK_INTEQ(s->nrets, 2)) {
    TS_CHECK_STREQ(s->rets[0].name, "values");
    TS_CHECK_STREQ(s->rets[1].name, "indices");
    TS_CHECK(s->args[2].def.kind == TS_DEF_BOOL && !s->args[2].def.u.b);
  }
  s = parse_ok("aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih) -> (Tensor, Tensor)");
  TS_CHECK(s && s->nrets == 2 && s->args[1].type->kind == TS_TY_LIST &&
           s->args[1].type->elems[0]->kind == TS_TY_TENSOR);

  s = parse_ok("aten::format(str self, ...) -> str");
  TS_CHECK(s && s->vararg && !s->varret && s->nargs == 1);
  s = parse_ok("prim::TupleUnpack(Any tup) -> ...");
  TS_CHECK(s && !s->vararg && s->varret && s->nrets == 0 && s->args[0].type->kind == TS_TY_ANY);
  s = parse_ok("prim::Print(...) -> ()");
  TS_CHECK(s && s->vararg && s->nargs == 0 && s->nrets == 0 && !s->varret);
  s = parse_ok("prim::Foo(...) -> (Tensor, ...)");
  TS_CHECK(s && s->varret && s->nrets == 1);
  check_print("prim::Foo(...) -> (Tensor, ...)", NULL);
  check_print("prim::ChunkSizes(...) -> ...", NULL);
  check_print("prim::RaiseException(str msg, str? cls=None) -> ()", NULL);
  check_print("aten::foo(Tensor x, *) -> ()", "aten::foo(Tensor x) -> ()");
  check_print("aten::foo(Tensor x) -> (Tensor)", "aten::foo(Tensor x) -> Tensor");
  check_print("aten::foo(Tensor x) -> Tensor out", NULL);
  check_print(" aten::foo ( Tensor\tx ,int  y=1 )->Tensor ", "aten::foo(Tensor x, int y=1) -> Tensor");
  /* argument names may be Python keywords */
  check_print("aten::can_cast(ScalarType from, ScalarType to) -> bool", NULL);
}

static void test_types(void) {
  const ts_schema *s = parse_ok(
      "foo::types(Dict(str, Tensor) d, Future(t) f, Union(int, str) u, (Tensor, int) tup, Tensor?[] idx, "
      "Tensor[][] ll, Generator? g, Storage st, Stream s, complex c, Any a, AnyClassType? k, QScheme q, "
      "Capsule cap, Dimname n, t1 x, t2 y, RRef(t) r, __torch__.torch.classes.quantized.Conv2dPackedParamsBase p, "
      "AnyEnumType e, Layout l, MemoryFormat m, ScalarType st2, Device dev, SymInt si, SymInt[] sis, "
      "Tensor?[]? oi, None nn) -> ((str, t)[])");
  if (!s || !TS_CHECK_INTEQ(s->nargs, 28))
    return;
  const ts_arg *a = s->args;
  TS_CHECK(a[0].type->kind == TS_TY_DICT && a[0].type->elems[0]->kind == TS_TY_STR &&
           a[0].type->elems[1]->kind == TS_TY_TENSOR);
  TS_CHECK(a[1].type->kind == TS_TY_FUTURE && a[1].type->elems[0]->kind == TS_TY_VAR &&
           strcmp(a[1].type->elems[0]->name, "t") == 0);
  TS_CHECK(a[2].type->kind == TS_TY_UNION && a[2].type->n == 2);
  TS_CHECK(a[3].type->kind == TS_TY_TUPLE && a[3].type->n == 2 && a[3].type->elems[1]->kind == TS_TY_INT);
  TS_CHECK(a[4].type->kind == TS_TY_LIST && a[4].type->elems[0]->kind == TS_TY_OPTIONAL);
  TS_CHECK(a[5].type->kind == TS_TY_LIST && a[5].type->elems[0]->kind == TS_TY_LIST);
  TS_CHECK(a[6].type->kind == TS_TY_OPTIONAL && a[6].type->elems[0]->kind == TS_TY_GENERATOR);
  TS_CHECK_INTEQ(a[7].type->kind, TS_TY_STORAGE);
  TS_CHECK_INTEQ(a[8].type->kind, TS_TY_STREAM);
  TS_CHECK_INTEQ(a[9].type->kind, TS_TY_COMPLEX);
  TS_CHECK_INTEQ(a[10].type->kind, TS_TY_ANY);
  TS_CHECK(a[11].type->kind == TS_TY_OPTIONAL && a[11].type->elems[0]->kind == TS_TY_ANYCLASS);
  TS_CHECK_INTEQ(a[12].type->kind, TS_TY_QSCHEME);
  TS_CHECK_INTEQ(a[13].type->kind, TS_TY_CAPSULE);
  TS_CHECK_INTEQ(a[14].type->kind, TS_TY_STR); /* Dimname is a str */
  TS_CHECK(a[15].type->kind == TS_TY_VAR && strcmp(a[15].type->name, "t1") == 0);
  TS_CHECK(a[17].type->kind == TS_TY_RREF);
  TS_CHECK(a[18].type->kind == TS_TY_CLASS &&
           strcmp(a[18].type->name, "__torch__.torch.classes.quantized.Conv2dPackedParamsBase") == 0);
  TS_CHECK_INTEQ(a[19].type->kind, TS_TY_ANYENUM);
  TS_CHECK_INTEQ(a[20].type->kind, TS_TY_LAYOUT);
  TS_CHECK_INTEQ(a[21].type->kind, TS_TY_MEMORYFORMAT);
  TS_CHECK_INTEQ(a[22].type->kind, TS_TY_SCALARTYPE);
  TS_CHECK_INTEQ(a[23].type->kind, TS_TY_DEVICE);
  TS_CHECK_INTEQ(a[24].type->kind, TS_TY_SYMINT);
  TS_CHECK(a[25].type->kind == TS_TY_LIST && a[25].type->elems[0]->kind == TS_TY_SYMINT);
  /* an int value is a SymInt, an int[] a SymInt[] */
  TS_CHECK(ts_type_is_subtype(ts_type_leaf(TS_TY_INT), a[24].type));
  TS_CHECK(ts_type_is_subtype(ts_type_list(&arena, ts_type_leaf(TS_TY_INT)), a[25].type));
  TS_CHECK(a[26].type->kind == TS_TY_OPTIONAL && a[26].type->elems[0]->kind == TS_TY_LIST);
  TS_CHECK_INTEQ(a[27].type->kind, TS_TY_NONE);
  TS_CHECK(s->nrets == 1 && s->rets[0].type->kind == TS_TY_LIST && s->rets[0].type->elems[0]->kind == TS_TY_TUPLE);
  check_print("foo::types(Dict(str, Tensor) d, Future(t) f, Union(int, str) u, (Tensor, int) tup, Tensor?[] idx, "
              "Tensor[][] ll, Generator? g, Storage st, Stream s, complex c, Any a, AnyClassType? k, QScheme q, "
              "Capsule cap, Dimname n, t1 x, t2 y, RRef(t) r, __torch__.torch.classes.quantized.Conv2dPackedParamsBase "
              "p, AnyEnumType e, Layout l, MemoryFormat m, ScalarType st2, Device dev, SymInt si, SymInt[] sis, "
              "Tensor?[]? oi, None nn) -> ((str, t)[])",
              "foo::types(Dict(str, Tensor) d, Future(t) f, Union(int, str) u, (Tensor, int) tup, Tensor?[] idx, "
              "Tensor[][] ll, Generator? g, Storage st, Stream s, complex c, Any a, AnyClassType? k, QScheme q, "
              "Capsule cap, str n, t1 x, t2 y, RRef(t) r, __torch__.torch.classes.quantized.Conv2dPackedParamsBase "
              "p, AnyEnumType e, Layout l, MemoryFormat m, ScalarType st2, Device dev, SymInt si, SymInt[] sis, "
              "Tensor?[]? oi, NoneType nn) -> ((str, t)[])");
  /* a single tuple return keeps its extra parentheses */
  check_print("aten::popitem.str(Dict(str, t)(a!) self) -> ((str, t))", NULL);
  check_print("aten::items.str(Dict(str, t) self) -> ((str, t)[])", NULL);
  check_print("aten::f(int[2] x, int[1]? dim=None, int[2]? y) -> int[3]", NULL);
  s = parse_ok("aten::f(int[2] x, int[1]? dim=None) -> int[3]");
  if (s) {
    TS_CHECK(s->args[0].list_len == 2 && s->args[0].type->kind == TS_TY_LIST);
    TS_CHECK(s->args[1].list_len == 1 && s->args[1].type->kind == TS_TY_OPTIONAL &&
             s->args[1].type->elems[0]->kind == TS_TY_LIST);
    TS_CHECK(s->args[1].def.kind == TS_DEF_NONE_VALUE);
    TS_CHECK_INTEQ(s->rets[0].list_len, 3);
  }
}

static void test_alias(void) {
  const ts_schema *s = parse_ok("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  if (s) {
    const ts_alias *al = s->args[0].alias;
    TS_CHECK(al && al->is_write && sets_are(al->sets, al->nsets, "a", NULL) &&
             sets_are(al->after_sets, al->nafter, "a", NULL) && !al->contained);
    TS_CHECK(s->args[1].alias == NULL);
    TS_CHECK(s->rets[0].alias && s->rets[0].alias->is_write);
  }
  s = parse_ok("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]");
  if (s) {
    const ts_alias *al = s->args[0].alias;
    TS_CHECK(al && !al->is_write && sets_are(al->sets, al->nsets, "a", NULL) &&
             sets_are(al->after_sets, al->nafter, "*", NULL));
    al = s->rets[0].alias; /* the list has no set of its own; its elements are in a */
    TS_CHECK(al && al->nsets == 0 && !al->is_write && al->contained &&
             sets_are(al->contained->sets, al->contained->nsets, "a", NULL));
  }
  s = parse_ok("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)");
  if (s) {
    const ts_alias *al = s->args[0].alias;
    TS_CHECK(s->args[0].type->kind == TS_TY_LIST && s->args[0].type->elems[0]->kind == TS_TY_VAR);
    TS_CHECK(al && al->is_write && sets_are(al->sets, al->nsets, "a", NULL) && !al->contained);
    al = s->args[1].alias;
    TS_CHECK(al && !al->is_write && sets_are(al->sets, al->nsets, "c", NULL) &&
             sets_are(al->after_sets, al->nafter, "*", NULL));
  }
  s = parse_ok("aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()");
  if (s) {
    const ts_alias *al = s->args[3].alias;
    TS_CHECK(al && al->nsets == 0 && al->is_write && al->contained && al->contained->is_write &&
             sets_are(al->contained->sets, al->contained->nsets, "a", NULL));
    TS_CHECK(s->args[3].kwarg_only && s->nrets == 0);
  }
  s = parse_ok("aten::cpu(Tensor(a) self) -> Tensor(a|b)");
  TS_CHECK(s && s->rets[0].alias && sets_are(s->rets[0].alias->sets, s->rets[0].alias->nsets, "a", "b"));
  s = parse_ok("aten::values.str(Dict(str, t) self) -> t[](*)");
  TS_CHECK(s && s->rets[0].alias && sets_are(s->rets[0].alias->sets, s->rets[0].alias->nsets, "*", NULL));
  s = parse_ok("prim::unchecked_unwrap_optional(t(a)? optional) -> t(a)");
  TS_CHECK(s && s->args[0].type->kind == TS_TY_OPTIONAL && s->args[0].alias &&
           sets_are(s->args[0].alias->sets, s->args[0].alias->nsets, "a", NULL));
  s = parse_ok("aten::f(Tensor(a! -> a|b) x) -> ()");
  TS_CHECK(s && s->args[0].alias && s->args[0].alias->is_write &&
           sets_are(s->args[0].alias->after_sets, s->args[0].alias->nafter, "a", "b"));

  check_print("aten::cpu(Tensor(a) self) -> Tensor(b|a)", NULL); /* set order as written */
  check_print("aten::f(Tensor(a! -> a|b) x) -> ()", NULL);
  check_print("aten::f(Tensor(a|a) x, Tensor(b -> b) y, Tensor(*|c) z) -> ()",
              "aten::f(Tensor(a) x, Tensor(b) y, Tensor(*) z) -> ()");
  check_print("aten::f(Tensor(a!)[] x, Tensor(a)[](b) y, Tensor(a!)[2]? z, Any(a) w) -> ()", NULL);
  check_print("aten::f(Dict(str, t)(a!) self, t(c -> *) el, Tensor(a)? x) -> t[](*)", NULL);
}

static void test_defaults(void) {
  const char *text =
      "foo::bar(float eps=1e-05, float a=-inf, float b=inf, float c=nan, str r=\"mean\", str s='mean', "
      "int[] l=[0, 0], int[] e=[], float[] f=[1.0, 2], bool[] bb=[True, False], int[3] n=2, "
      "MemoryFormat m=contiguous_format, int red=Mean, ScalarType dt=long, Layout lay=strided, int neg=-3, "
      "Scalar sc=0.5, Tensor? t=None, Device? d=None, float one=1, Scalar sf=2.0, int[2] p=[1, 2], "
      "ScalarType? dt2=4, int big=-9223372036854775808, str esc=\"\\\"\\'\\\\ \\n\\t\\f\\v\\001\", "
      "Device dev=\"cuda:1\", Tensor x=None, bool[2] mask=True, float[2] fl=0.25) -> ()";
  const ts_schema *s = parse_ok(text);
  if (!s || !TS_CHECK_INTEQ(s->nargs, 29))
    return;
  const ts_arg *a = s->args;
  for (uint32_t i = 0; i < s->nargs; i++)
    TS_CHECK(a[i].has_default);
  TS_CHECK(a[0].def.kind == TS_DEF_FLOAT && a[0].def.u.f == 1e-05);
  TS_CHECK(a[1].def.kind == TS_DEF_FLOAT && isinf(a[1].def.u.f) && a[1].def.u.f < 0);
  TS_CHECK(a[2].def.kind == TS_DEF_FLOAT && isinf(a[2].def.u.f) && a[2].def.u.f > 0);
  TS_CHECK(a[3].def.kind == TS_DEF_FLOAT && isnan(a[3].def.u.f));
  TS_CHECK(a[4].def.kind == TS_DEF_STR && a[4].def.len == 4 && memcmp(a[4].def.u.s, "mean", 4) == 0);
  TS_CHECK(a[5].def.kind == TS_DEF_STR && a[5].def.len == 4 && memcmp(a[5].def.u.s, "mean", 4) == 0);
  TS_CHECK(a[6].def.kind == TS_DEF_INTS && a[6].def.len == 2 && a[6].def.u.is[0] == 0 && a[6].def.u.is[1] == 0);
  TS_CHECK(a[7].def.kind == TS_DEF_INTS && a[7].def.len == 0);
  TS_CHECK(a[8].def.kind == TS_DEF_FLOATS && a[8].def.len == 2 && a[8].def.u.fs[0] == 1.0 && a[8].def.u.fs[1] == 2.0);
  TS_CHECK(a[9].def.kind == TS_DEF_BOOLS && a[9].def.len == 2 && a[9].def.u.bs[0] && !a[9].def.u.bs[1]);
  TS_CHECK(a[10].def.kind == TS_DEF_INTS && a[10].def.len == 3 && a[10].def.u.is[2] == 2 && a[10].list_len == 3);
  TS_CHECK(a[11].def.kind == TS_DEF_ENUM && strcmp(a[11].def.u.s, "contiguous_format") == 0);
  TS_CHECK(a[12].def.kind == TS_DEF_ENUM && strcmp(a[12].def.u.s, "Mean") == 0);
  TS_CHECK(a[13].def.kind == TS_DEF_ENUM && strcmp(a[13].def.u.s, "long") == 0);
  TS_CHECK(a[14].def.kind == TS_DEF_ENUM && strcmp(a[14].def.u.s, "strided") == 0);
  TS_CHECK(a[15].def.kind == TS_DEF_INT && a[15].def.u.i == -3);
  TS_CHECK(a[16].def.kind == TS_DEF_FLOAT && a[16].def.u.f == 0.5);
  TS_CHECK(a[17].def.kind == TS_DEF_NONE_VALUE && a[18].def.kind == TS_DEF_NONE_VALUE);
  TS_CHECK(a[19].def.kind == TS_DEF_FLOAT && a[19].def.u.f == 1.0); /* float args read ints as floats */
  TS_CHECK(a[20].def.kind == TS_DEF_FLOAT && a[20].def.u.f == 2.0);
  TS_CHECK(a[21].def.kind == TS_DEF_INTS && a[21].def.len == 2 && a[21].def.u.is[1] == 2);
  TS_CHECK(a[22].def.kind == TS_DEF_INT && a[22].def.u.i == 4);
  TS_CHECK(a[23].def.kind == TS_DEF_INT && a[23].def.u.i == INT64_MIN);
  TS_CHECK(a[24].def.kind == TS_DEF_STR && a[24].def.len == 9 &&
           memcmp(a[24].def.u.s, "\"'\\ \n\t\f\v\001", 9) == 0);
  TS_CHECK(a[25].def.kind == TS_DEF_STR && strcmp(a[25].def.u.s, "cuda:1") == 0);
  TS_CHECK(a[26].def.kind == TS_DEF_NONE_VALUE);
  TS_CHECK(a[27].def.kind == TS_DEF_BOOLS && a[27].def.len == 2 && a[27].def.u.bs[1]);
  TS_CHECK(a[28].def.kind == TS_DEF_FLOATS && a[28].def.len == 2 && a[28].def.u.fs[1] == 0.25);
  check_print(text,
              "foo::bar(float eps=1.0000000000000001e-05, float a=-inf, float b=inf, float c=nan, str r=\"mean\", "
              "str s=\"mean\", int[] l=[0, 0], int[] e=[], float[] f=[1., 2.], bool[] bb=[True, False], int[3] n=2, "
              "MemoryFormat m=contiguous_format, int red=Mean, ScalarType dt=long, Layout lay=strided, int neg=-3, "
              "Scalar sc=0.5, Tensor? t=None, Device? d=None, float one=1., Scalar sf=2., int[2] p=[1, 2], "
              "ScalarType? dt2=4, int big=-9223372036854775808, str esc=\"\\\"\\'\\\\ \\n\\t\\f\\v\\001\", "
              "Device dev=\"cuda:1\", Tensor x=None, bool[2] mask=[True, True], float[2] fl=[0.25, 0.25]) -> ()");
  /* PyTorch's spellings of the same defaults print back unchanged */
  check_print("aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
              "int[2] dilation=1, int groups=1) -> Tensor",
              NULL);
  check_print("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor",
              NULL);
  check_print("aten::f(int[1] dim=[-2, -1], int[1] d2=[1], SymInt[] stride=[], float x=0.33333333333333331, "
              "Scalar s=-1, float y=10., int[2] z=[]) -> ()",
              NULL);
  /* a collapsed list must read back as the same list */
  check_print("aten::f(int[1] dim=[-1, -1], int[2] d=[3, 3]) -> ()", "aten::f(int[1] dim=[-1, -1], int[2] d=3) -> ()");
  check_print("aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str", NULL);
  check_print("aten::f(str s=\"\\x41\\101\\0\") -> ()", "aten::f(str s=\"AA\\000\") -> ()");
  const ts_schema *z = parse_ok("aten::f(str s=\"a\\000b\") -> ()");
  TS_CHECK(z && z->args[0].def.len == 3 && z->args[0].def.u.s[1] == 0 && z->args[0].def.u.s[2] == 'b');
}

static void test_malformed(void) {
  check_bad("", "expected an operator name");
  check_bad("aten::add Tensor self) -> Tensor", "expected '(' to start the argument list");
  check_bad("aten::add(Tensor self", "expected ')' or ',' in the argument list, found end of schema");
  check_bad("aten::add(Tensor self) Tensor", "expected '->' before the returns");
  check_bad("aten::add(Tensor self) ->", "expected a type, found end of schema");
  check_bad("aten::add(Foo self) -> Tensor", "<schema>:1:11: error: unknown type 'Foo'");
  check_bad("aten::add(Tensor) -> Tensor", "<schema>:1:17: error: expected an argument name, found ')'");
  check_bad("aten::add(Tensor self=1) -> Tensor", "expected None");
  check_bad("aten::add(int[] x=[1, 2) -> Tensor", "expected ']' to close the list default");
  check_bad("aten::add(int[] x=1) -> Tensor", "expected '[' to start a list default");
  check_bad("aten::add(str x=\"abc) -> Tensor", "unterminated string literal");
  check_bad("aten::add(str x=\"a\\qb\") -> Tensor", "unknown escape sequence");
  check_bad("aten::add(str x=\"a\\777\") -> Tensor", "octal escape out of range");
  check_bad("aten::add(int x=1.2.3) -> Tensor", "malformed number");
  check_bad("aten::add(int x=12abc) -> Tensor", "malformed number");
  check_bad("aten::add(int x=99999999999999999999) -> int", "integer default out of range");
  check_bad("aten::add(float x=-abc) -> ()", "expected a number after '-'");
  check_bad("aten::add(int x=) -> ()", "expected a default value, found ')'");
  check_bad("aten::add(int[] x=[1, True]) -> ()", "expected integers in an int list default");
  check_bad("aten::add(bool[] x=[1]) -> ()", "expected True or False");
  check_bad("aten::add(float[] x=[\"a\"]) -> ()", "expected numbers in a float list default");
  check_bad("aten::add(Tensor[] x=[None]) -> ()", "list defaults are only supported");
  check_bad("aten::add(Any x=1) -> ()", "cannot have a default value");
  check_bad("aten::add(Device x=1) -> ()", "expected a string literal naming a device");
  check_bad("aten::add(..., Tensor x) -> Tensor", "'...' must be the last element of the argument list");
  check_bad("aten::add(Tensor x) -> (Tensor, ..., Tensor)", "'...' must be the last element of the return list");
  check_bad("aten::add(Tensor x) -> Tensor extra junk", "expected the end of the schema, found 'junk'");
  check_bad("aten::(Tensor x) -> Tensor", "expected a name after '::'");
  check_bad("aten::add.(Tensor x) -> Tensor", "expected an overload name after '.'");
  check_bad("aten::add(Tensor(a x) -> Tensor", "expected ')' to close the alias annotation");
  check_bad("aten::add(Tensor(a|) x) -> Tensor", "expected an alias set name or '*'");
  check_bad("aten::add(int[99999] x) -> Tensor", "list size too large");
  check_bad("aten::add(int[x] x) -> Tensor", "expected a list size or ']'");
  check_bad("aten::add(Dict(str) x) -> ()", "expected ',' between the key and value types of Dict");
  check_bad("aten::add(Union() x) -> ()", "Union needs at least one type");
  check_bad("aten::add(__torch__ x) -> ()", "expected '.' after __torch__");
  check_bad("aten::add(Tensor x) -> Tensor\x01", "found byte 0x01");
  check_bad("aten::add(Tensor x) -> (Tensor", "expected ')' or ',' in the return list");
  /* every nesting level costs stack: deep types are refused */
  char deep[1024];
  strcpy(deep, "aten::f(");
  for (int i = 0; i < 100; i++)
    strcat(deep, "Future(");
  strcat(deep, "int");
  for (int i = 0; i < 100; i++)
    strcat(deep, ")");
  strcat(deep, " x) -> ()");
  check_bad(deep, "type nested too deeply");
  ts_diag d = {0};
  TS_CHECK(ts_schema_parse(&arena, NULL, &d) == NULL && d.errors == 1);
  ts_diag_free(&d);
  TS_CHECK(ts_schema_parse(&arena, "aten::f(", NULL) == NULL); /* no diag: still no crash */
  /* a diagnostic on the second line of a multi-line schema */
  check_bad("aten::f(int a,\n  Bad b) -> ()", "<schema>:2:3: error: unknown type 'Bad'");
  /* an exhausted arena is an error, not a crash */
  ts_arena small;
  ts_arena_init(&small, 64);
  ts_diag d2 = {0};
  TS_CHECK(ts_schema_parse(&small, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &d2) ==
           NULL);
  TS_CHECK(d2.text.data && strstr(d2.text.data, "out of memory"));
  ts_diag_free(&d2);
  ts_arena_release(&small);
}

/* Parses `text` (NUL-terminated). A failure must come with one diagnostic;
 * a success must print into something that parses and prints the same. */
static void check_no_crash(const char *text) {
  ts_arena a;
  ts_arena_init(&a, 1 << 20);
  ts_diag d = {0};
  const ts_schema *s = ts_schema_parse(&a, text, &d);
  if (!s) {
    TS_CHECK_INTEQ(d.errors, 1);
  } else {
    ts_buf b1 = {0}, b2 = {0};
    ts_schema_print(&b1, s);
    const ts_schema *s2 = ts_schema_parse(&a, b1.data, NULL);
    if (s2) {
      ts_schema_print(&b2, s2);
      if (!TS_CHECK_STREQ(b1.data, b2.data))
        fprintf(stderr, "  from: %s\n", text);
    }
    ts_buf_free(&b1);
    ts_buf_free(&b2);
  }
  ts_diag_free(&d);
  ts_arena_release(&a);
}

/* Every prefix of some schemas, and every single-byte edit from a small set
 * of troublesome bytes of the table's first schemas: no crash, no leak, and
 * a diagnostic for each failure (ASan and UBSan watch the rest). */
static void test_truncated_and_mutated(void) {
  const char *samples[] = {
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
      "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
      "aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str",
      "aten::f(float eps=1e-05, int[2] s=1, float[] f=[1.0, -inf], Dict(str, t)(a!) d, t[](a!) l) -> ((str, t)[])",
      "aten::format(str self, ...) -> (Tensor(a!)[], ...)",
  };
  char buf[512];
  for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
    size_t n = strlen(samples[i]);
    for (size_t len = 0; len < n; len++) {
      memcpy(buf, samples[i], len);
      buf[len] = 0;
      check_no_crash(buf);
    }
  }
  static const char edits[] = "()[]?!,*|.'\"-=> 9a\\";
  int checked = 0;
  for (int k = 0; k < TS_K_COUNT; k++) {
    const ts_opdef *op = ts_op_get((ts_kind)k);
    if (!op->nschemas)
      continue;
    const char *t = op->schema_texts[0];
    size_t n = strlen(t);
    if (n >= sizeof buf - 1)
      continue;
    for (size_t pos = 0; pos < n; pos += 3) {
      for (size_t e = 0; e < sizeof edits - 1; e += 2) {
        strcpy(buf, t);
        buf[pos] = edits[e];
        check_no_crash(buf);
        /* and with the byte deleted */
        memmove(buf + pos, t + pos + 1, n - pos);
        check_no_crash(buf);
        checked += 2;
      }
    }
  }
  TS_CHECK(checked > 1000);
}

/* ts_node_schema picks the overload whose arguments take the inputs. */
static void test_node_schema(void) {
  ts_graph *g = ts_graph_new(0);
  if (!TS_CHECK(g != NULL))
    return;
  ts_arena *ga = ts_graph_arena(g);
  const ts_type *tensor = ts_type_leaf(TS_TY_TENSOR);
  const ts_type *ity = ts_type_leaf(TS_TY_INT);
  const ts_type *fty = ts_type_leaf(TS_TY_FLOAT);
  int64_t sizes[2] = {2, 3};
  ts_tensor_info fi = {.dtype = TS_DT_FLOAT32, .requires_grad = -1, .undefined = -1, .device = {TS_DEV_NONE, -1},
                       .rank = 2, .sizes = sizes};
  ts_value *x = ts_block_add_input(g->block, tensor);
  ts_value *xf = ts_block_add_input(g->block, ts_type_tensor(ga, &fi));
  ts_value *i = ts_block_add_input(g->block, ity);
  ts_value *f = ts_block_add_input(g->block, fty);
  ts_value *il = ts_block_add_input(g->block, ts_type_list(ga, ity));
  ts_value *none = ts_block_add_input(g->block, ts_type_leaf(TS_TY_NONE));
  ts_value *b = ts_block_add_input(g->block, ts_type_leaf(TS_TY_BOOL));
  ts_value *oi = ts_block_add_input(g->block, ts_type_optional(ga, ity));

  struct {
    ts_kind kind;
    ts_value *in[6];
    uint32_t nout;
    const char *overload; /* NULL: no schema fits */
  } cases[] = {
      {TS_K_aten_add, {x, xf, i}, 1, "Tensor"},
      {TS_K_aten_add, {xf, x}, 1, "Tensor"}, /* alpha defaulted */
      {TS_K_aten_add, {x, i, i}, 1, "Scalar"},
      {TS_K_aten_add, {i, i}, 1, "int"},
      {TS_K_aten_add, {f, f}, 1, "float"},
      {TS_K_aten_add, {i, f}, 1, "int_float"},
      {TS_K_aten_add, {il, il}, 1, "t"},
      {TS_K_aten_add, {x}, 1, NULL},        /* other is required */
      {TS_K_aten_add, {x, x, i}, 2, NULL},  /* one return */
      {TS_K_aten_add, {b, b}, 1, NULL},     /* bool is no Scalar */
      {TS_K_aten_size, {x, i}, 1, "int"},
      {TS_K_aten_size, {x}, 1, ""},
      {TS_K_aten_chunk, {x, i, i}, 1, ""},
      {TS_K_aten_to, {x, i, b, b, none}, 1, "dtype"}, /* a ScalarType is an int at run time */
      {TS_K_aten_len, {il}, 1, "t"},
      {TS_K_aten___getitem__, {il, i}, 1, "t"},
      {TS_K_prim_unchecked_cast, {oi}, 1, ""},
      {TS_K_prim_dtype, {xf}, 1, ""},
      {TS_K_prim_TupleUnpack, {x}, 3, ""}, /* -> ... */
      {TS_K_aten_format, {x}, 1, NULL},   /* str self */
      {TS_K_prim_ListConstruct, {x, x}, 1, NULL}, /* no schema */
      {TS_K_aten_max_pool2d, {x, il, il, il, il, b}, 1, ""},
      {TS_K_aten_max_pool2d, {x, il}, 1, ""},
      /* exact arity first: sum(self, dtype=None), not sum.dim_IntList(self, dim=None) */
      {TS_K_aten_sum, {x, none}, 1, ""},
      {TS_K_aten_sum, {x, il, b, none}, 1, "dim_IntList"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    ts_node *n = ts_node_new(g, cases[c].kind, cases[c].nout);
    if (!TS_CHECK(n != NULL))
      continue;
    for (int k = 0; k < 6 && cases[c].in[k]; k++)
      ts_node_add_input(n, cases[c].in[k]);
    ts_block_append_node(g->block, n);
    const ts_schema *s = ts_node_schema(n);
    if (cases[c].overload) {
      if (TS_CHECK(s != NULL))
        TS_CHECK_STREQ(s->overload, cases[c].overload);
      else
        fprintf(stderr, "  case %zu: %s\n", c, ts_kind_name(cases[c].kind));
    } else if (!TS_CHECK(s == NULL)) {
      fprintf(stderr, "  case %zu: %s matched %s\n", c, ts_kind_name(cases[c].kind), s->text);
    }
  }
  /* a vararg schema takes any number of extra inputs */
  ts_node *fmt = ts_node_new(g, TS_K_aten_format, 1);
  ts_value *str = ts_block_add_input(g->block, ts_type_leaf(TS_TY_STR));
  ts_node_add_input(fmt, str);
  ts_node_add_input(fmt, x);
  ts_node_add_input(fmt, i);
  ts_block_append_node(g->block, fmt);
  TS_CHECK(ts_node_schema(fmt) != NULL);
  ts_node *other = ts_node_new_named(g, "my::op", 6, 1);
  TS_CHECK(other && ts_node_schema(other) == NULL);
  TS_CHECK(ts_node_schema(NULL) == NULL);
  ts_graph_free(g);
}

int main(void) {
  ts_arena_init(&arena, 0);
  test_table_roundtrip();
  test_kinds();
  test_derived_flags();
  test_basic();
  test_types();
  test_alias();
  test_defaults();
  test_malformed();
  test_truncated_and_mutated();
  test_node_schema();
  ts_arena_release(&arena);
  return ts_test_finish();
}
