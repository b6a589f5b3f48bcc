/* tests/unit/test_rt_adapt.c: in-place and out= overloads from the
 * out-of-place op: ir/variant.c's pairing by alias annotations, kernel.c's
 * binding of runtime/adapt.c's generic kernels (explicit kernels first),
 * and what only a direct call shows: an in-place view growing self's rank
 * past the room its allocation had, and resize_output's warning. The
 * values of the adapted ops are checked against PyTorch's by unit.ops
 * (tests/fixtures/ops/inplace/). */
#include "runtime.h"
#include "test.h"

#include <string.h>

static ts_rt_ctx ctx;

static const ts_schema *schema(const char *kind, const char *overload) {
  ts_kind k = ts_kind_lookup(kind, strlen(kind));
  const ts_schema *s = k == TS_K_OTHER ? NULL : ts_op_find_overload(k, overload);
  if (!TS_CHECK(s != NULL))
    fprintf(stderr, "  no schema %s.%s\n", kind, overload);
  return s;
}

/* s must pair with base (kind.overload) as form `kind`, writing nouts. */
static void check_pair(const char *kind, const char *overload, ts_variant_kind want, const char *bkind,
                       const char *boverload, uint32_t nouts) {
  const ts_schema *s = schema(kind, overload);
  if (!s)
    return;
  ts_variant v = ts_schema_variant(s);
  if (!TS_CHECK_INTEQ(v.kind, want))
    fprintf(stderr, "  %s.%s\n", kind, overload);
  if (want == TS_VARIANT_NONE) {
    TS_CHECK(v.base == NULL);
    return;
  }
  TS_CHECK(v.base == schema(bkind, boverload));
  TS_CHECK_INTEQ(v.nouts, nouts);
}

static void test_pairing(void) {
  check_pair("aten::cumsum_", "", TS_VARIANT_INPLACE, "aten::cumsum", "", 1);
  /* no pow_.Tensor_Scalar: the only pow overload of (Tensor, Scalar) */
  check_pair("aten::pow_", "Scalar", TS_VARIANT_INPLACE, "aten::pow", "Tensor_Scalar", 1);
  check_pair("aten::pow_", "Tensor", TS_VARIANT_INPLACE, "aten::pow", "Tensor_Tensor", 1);
  /* unsqueeze(Tensor(a) self, int dim) -> Tensor(a): a view */
  check_pair("aten::unsqueeze_", "", TS_VARIANT_INPLACE_VIEW, "aten::unsqueeze", "", 1);
  check_pair("aten::t_", "", TS_VARIANT_INPLACE_VIEW, "aten::t", "", 1);
  check_pair("aten::mm", "out", TS_VARIANT_OUT, "aten::mm", "", 1);
  check_pair("aten::max", "dim_max", TS_VARIANT_OUT, "aten::max", "dim", 2);
  check_pair("aten::sort", "values", TS_VARIANT_OUT, "aten::sort", "", 2);
  /* copy_ is copy's in-place form (its own kernel wins at binding) */
  check_pair("aten::copy_", "", TS_VARIANT_INPLACE, "aten::copy", "", 1);
  /* not forms of anything: out-of-place overloads */
  check_pair("aten::add", "Tensor", TS_VARIANT_NONE, NULL, NULL, 0);
  check_pair("aten::mm", "", TS_VARIANT_NONE, NULL, NULL, 0);
  TS_CHECK_INTEQ(ts_schema_variant(NULL).kind, TS_VARIANT_NONE);
}

static void test_binding(void) {
  ts_diag d = {0};
  bool ok = ts_rt_kernels_init(&d);
  if (!TS_CHECK(ok))
    fprintf(stderr, "%s", d.text.data ? d.text.data : "");
  ts_diag_free(&d);
  /* adapted: a form without a table entry whose base has one */
  TS_CHECK(ts_rt_kernel_adapted_from(schema("aten::mm", "out")) == schema("aten::mm", ""));
  TS_CHECK(ts_rt_kernel_adapted_from(schema("aten::unsqueeze_", "")) == schema("aten::unsqueeze", ""));
  TS_CHECK(ts_rt_kernel_by_name("aten::mm.out") != NULL);
  TS_CHECK(ts_rt_kernel_by_name("aten::mm.out") != ts_rt_kernel_by_name("aten::unsqueeze_"));
  /* explicit kernels keep priority: add_ has its own fast path */
  TS_CHECK(ts_rt_kernel_adapted_from(schema("aten::add_", "Tensor")) == NULL);
  TS_CHECK(ts_rt_kernel_by_name("aten::add_.Tensor") != NULL);
  TS_CHECK(ts_rt_kernel_adapted_from(schema("aten::add", "Tensor")) == NULL);
  /* never listed among the table entries */
  uint32_t n = 0;
  const ts_rt_kernel_def *const *all = ts_rt_kernels_all(&n);
  int listed = 0;
  for (uint32_t i = 0; i < n; i++)
    listed += !strcmp(all[i]->schema, "aten::mm.out") || !strcmp(all[i]->schema, "aten::unsqueeze_");
  TS_CHECK_INTEQ(listed, 0);
  TS_CHECK(ts_rt_kernels_adapted() >= 2);
}

/* x = torch.arange(3.); x.unsqueeze_(0); x.unsqueeze_(2): rank 1 -> 3, the
 * sizes/strides move out of the tensor's allocation (ASan checks both the
 * writes and the free). */
static void test_inplace_view_grows(void) {
  int64_t n3 = 3;
  ts_rt_tensor *x = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &n3, true);
  if (!TS_CHECK(x != NULL))
    return;
  ts_rt_kernel_fn unsq = ts_rt_kernel_by_name("aten::unsqueeze_");
  if (!TS_CHECK(unsq != NULL)) {
    ts_rt_tensor_release(x);
    return;
  }
  for (int64_t dim = 0; dim <= 2; dim += 2) {
    ts_iv in[2] = {ts_iv_tensor(x), ts_iv_int(dim)}, out[1];
    ts_rt_call call = {.in = in, .nin = 2, .out = out, .nout = 1};
    if (!TS_CHECK(unsq(&ctx, &call)))
      break;
    TS_CHECK(out[0].tag == TS_IV_TENSOR && out[0].u.t == x);
    ts_iv_release(out[0]);
  }
  /* torch: x.shape (1, 3, 1), x.stride() (3, 1, 1) */
  TS_CHECK_INTEQ(x->ndim, 3);
  if (x->ndim == 3) {
    TS_CHECK(x->sizes[0] == 1 && x->sizes[1] == 3 && x->sizes[2] == 1);
    TS_CHECK(x->strides[0] == 3 && x->strides[1] == 1 && x->strides[2] == 1);
  }
  ts_rt_tensor_release(x);
}

/* a = torch.ones(2, 2); torch.mm(a, a, out=o) for o of shape [5] (resized,
 * with the deprecation warning) and of shape [0] (resized silently). */
static void test_out_resize(void) {
  int64_t s22[2] = {2, 2}, s5 = 5, s0 = 0;
  ts_rt_tensor *a = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 2, s22, true);
  ts_rt_tensor *o5 = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &s5, true);
  ts_rt_tensor *o0 = ts_rt_tensor_new(&ctx, TS_DT_FLOAT32, 1, &s0, true);
  ts_rt_kernel_fn mm_out = ts_rt_kernel_by_name("aten::mm.out");
  if (TS_CHECK(a && o5 && o0 && mm_out)) {
    for (int i = 0; i < 4; i++)
      ((float *)ts_rt_tensor_data(a))[i] = 1.0f;
    ts_rt_tensor *outs[2] = {o5, o0};
    for (int k = 0; k < 2; k++) {
      size_t before = ctx.out.len;
      ts_iv in[3] = {ts_iv_tensor(a), ts_iv_tensor(a), ts_iv_tensor(outs[k])}, out[1];
      ts_rt_call call = {.in = in, .nin = 3, .out = out, .nout = 1};
      if (!TS_CHECK(mm_out(&ctx, &call)))
        break;
      TS_CHECK(out[0].u.t == outs[k]);
      ts_iv_release(out[0]);
      ts_rt_tensor *o = outs[k];
      TS_CHECK(o->ndim == 2 && o->sizes[0] == 2 && o->sizes[1] == 2);
      TS_CHECK(ts_rt_tensor_is_contiguous(o));
      const float *v = ts_rt_tensor_data(o);
      TS_CHECK(v[0] == 2.0f && v[3] == 2.0f);
      const char *printed = ctx.out.data ? ctx.out.data + before : "";
      if (k == 0)
        TS_CHECK_HAS(printed, "UserWarning: An output with one or more elements was resized since it had shape [5], "
                              "which does not match the required output shape [2, 2].");
      else
        TS_CHECK_INTEQ(ctx.out.len, before);
    }
  }
  ts_rt_tensor_release(a);
  ts_rt_tensor_release(o5);
  ts_rt_tensor_release(o0);
}

int main(void) {
  ts_rt_ctx_init(&ctx, 1);
  test_pairing();
  test_binding();
  test_inplace_view_grows();
  test_out_resize();
  TS_CHECK(!ctx.failed);
  if (ctx.failed)
    fprintf(stderr, "ctx error: %s\n", ctx.err.data);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
