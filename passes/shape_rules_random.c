/* passes/shape_rules_random.c: shape rules of the random ops
 * (runtime/kernels/random.c): factories of a size list (rand, randn,
 * randint, normal.float_float, randperm), _like forms and ops shaped as an
 * input (a new contiguous tensor), multinomial, the dropouts and rrelu,
 * fractional max pooling, and the in-place ones (self's type). */
#include <string.h>

#include "shape_rules.h"

/* The index of the schema argument named `name`, or -1. */
static int sr_rd_arg(const ts_sr_call *c, const char *name) {
  for (uint32_t i = 0; i < c->schema->nargs; i++)
    if (strcmp(c->schema->args[i].name, name) == 0) return (int)i;
  return -1;
}

/* The dtype argument or `dflt` (None given); TS_DT_NONE when not known. */
static int8_t sr_rd_dtype(const ts_sr_call *c, int8_t dflt) {
  int di = sr_rd_arg(c, "dtype");
  int8_t dt = TS_DT_NONE;
  if (di < 0) return dflt;
  if (!ts_sr_dtype_arg(c, (uint32_t)di, &dt)) return TS_DT_NONE;
  return dt == TS_DT_NONE ? dflt : dt;
}

/* A fresh CPU tensor of the int[] argument `size`, contiguous. */
static void sr_rd_sized(ts_sr_call *c, int8_t dflt) {
  int si = sr_rd_arg(c, "size");
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = sr_rd_dtype(c, dflt);
  out.device.type = TS_DEV_CPU;
  out.device.index = -1;
  out.requires_grad = 0;
  int64_t sizes[TS_SR_MAX_RANK];
  int32_t n;
  if (si >= 0 && ts_sr_size_list(c, (uint32_t)si, sizes, &n, TS_SR_MAX_RANK)) {
    for (int32_t k = 0; k < n; k++) {
      if (sizes[k] == -1) return; /* a negative size fails at run time */
      out.sizes[k] = sizes[k] == TS_SR_UNKNOWN ? -1 : sizes[k];
    }
    out.rank = n;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

static void sr_rd_float(ts_sr_call *c) { sr_rd_sized(c, TS_DT_FLOAT32); }
static void sr_rd_int64(ts_sr_call *c) { sr_rd_sized(c, TS_DT_INT64); }

/* A new contiguous tensor of input i's sizes, in the dtype argument's
 * dtype (if any) or the input's. */
static void sr_rd_like_input(ts_sr_call *c, uint32_t i) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, i, &in)) return;
  ts_sr_unknown(&out);
  out.dtype = sr_rd_dtype(c, in.dtype);
  out.device = in.device;
  out.requires_grad = 0;
  out.rank = in.rank;
  if (in.rank > 0) memcpy(out.sizes, in.sizes, (size_t)in.rank * sizeof *in.sizes);
  /* the _like factories keep a strided input's layout (preserve_format) */
  int mf = sr_rd_arg(c, "memory_format");
  int64_t fmt = 1;
  if (mf < 0 || (ts_sr_int(c, (uint32_t)mf, &fmt) && fmt == 0) || ts_sr_is_contiguous(&in))
    ts_sr_contiguous(&out);
  else if (!ts_sr_is_none(c, (uint32_t)mf) && !(ts_sr_int(c, (uint32_t)mf, &fmt) && fmt == 1))
    return; /* refused at run time */
  ts_sr_set(c, 0, &out);
}

static void sr_rd_like0(ts_sr_call *c) { sr_rd_like_input(c, 0); }
static void sr_rd_like1(ts_sr_call *c) { sr_rd_like_input(c, 1); }

/* normal.Tensor_Tensor(mean, std): broadcast, in mean's dtype */
static void sr_rd_normal_tt(ts_sr_call *c) {
  ts_sr_shape m, s;
  if (!ts_sr_tensor(c, 0, &m) || !ts_sr_tensor(c, 1, &s)) return;
  int8_t dt = m.dtype;
  if (!ts_sr_broadcast(&m, &s)) return;
  m.dtype = dt;
  m.requires_grad = 0;
  m.has_strides = false;
  ts_sr_contiguous(&m);
  ts_sr_set(c, 0, &m);
}

/* randperm(n, ...): [n] */
static void sr_rd_randperm(ts_sr_call *c) {
  ts_sr_shape out;
  ts_sr_unknown(&out);
  out.dtype = sr_rd_dtype(c, TS_DT_INT64);
  out.device.type = TS_DEV_CPU;
  out.device.index = -1;
  out.requires_grad = 0;
  int64_t n = -1;
  bool known = ts_sr_size(c, 0, &n);
  if (known && n == -1) return; /* fails at run time */
  out.rank = 1;
  out.sizes[0] = known ? n : -1;
  ts_sr_contiguous(&out);
  ts_sr_set(c, 0, &out);
}

/* multinomial(self [n] or [r, n], k, ...): [k] or [r, k] int64 */
static void sr_rd_multinomial(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in)) return;
  ts_sr_unknown(&out);
  out.dtype = TS_DT_INT64;
  out.device = in.device;
  out.requires_grad = 0;
  int64_t k;
  if (in.rank == 1 || in.rank == 2) {
    out.rank = in.rank;
    if (in.rank == 2) out.sizes[0] = in.sizes[0];
    out.sizes[in.rank - 1] = ts_sr_int(c, 1, &k) && k > 0 ? k : -1;
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
}

/* In place: self's type. */
static void sr_rd_self(ts_sr_call *c) {
  if (c->node->ninputs > 0 && c->node->inputs[0]->type->kind == TS_TY_TENSOR && c->node->noutputs > 0)
    ts_sr_set_type(c, 0, c->node->inputs[0]->type);
}

/* The dropouts and rrelu: self's sizes and dtype, a new tensor (or self
 * itself when not training), contiguous when self is. */
static void sr_rd_same(ts_sr_call *c) {
  ts_sr_shape in;
  if (!ts_sr_tensor(c, 0, &in)) return;
  if (!ts_sr_is_contiguous(&in)) in.has_strides = false;
  ts_sr_set(c, 0, &in);
}

/* fractional_max_pool2d/3d(self [N,] C, spatial..., kernel_size,
 * output_size, samples): (output, indices int64) of [N,] C, output_size */
static void sr_rd_frac(ts_sr_call *c) {
  ts_sr_shape in, out;
  if (!ts_sr_tensor(c, 0, &in)) return;
  int nd = strstr(c->schema->name, "3d") ? 3 : 2;
  int64_t os[3];
  int32_t n = 0;
  ts_sr_unknown(&out);
  out.dtype = in.dtype;
  out.device = in.device;
  out.requires_grad = 0;
  if ((in.rank == nd + 1 || in.rank == nd + 2) && ts_sr_int_list(c, 2, os, &n, 3) && (n == nd || n == 1)) {
    out.rank = in.rank;
    for (int32_t d = 0; d < in.rank - nd; d++) out.sizes[d] = in.sizes[d];
    for (int d = 0; d < nd; d++) out.sizes[in.rank - nd + d] = os[n == 1 ? 0 : d];
    ts_sr_contiguous(&out);
  }
  ts_sr_set(c, 0, &out);
  out.dtype = TS_DT_INT64;
  ts_sr_set(c, 1, &out);
}

const ts_sr_def ts_sr_rules_random[] = {
    {"aten::alpha_dropout", sr_rd_same},
    {"aten::alpha_dropout_", sr_rd_self},
    {"aten::bernoulli", sr_rd_like0},
    {"aten::bernoulli.p", sr_rd_like0},
    {"aten::bernoulli.Tensor", sr_rd_like0},
    {"aten::bernoulli_.Tensor", sr_rd_self},
    {"aten::bernoulli_.float", sr_rd_self},
    {"aten::cauchy_", sr_rd_self},
    {"aten::exponential_", sr_rd_self},
    {"aten::feature_alpha_dropout", sr_rd_same},
    {"aten::feature_alpha_dropout_", sr_rd_self},
    {"aten::fractional_max_pool2d", sr_rd_frac},
    {"aten::fractional_max_pool3d", sr_rd_frac},
    {"aten::geometric_", sr_rd_self},
    {"aten::log_normal_", sr_rd_self},
    {"aten::multinomial", sr_rd_multinomial},
    {"aten::normal.Tensor_float", sr_rd_like0},
    {"aten::normal.float_Tensor", sr_rd_like1},
    {"aten::normal.Tensor_Tensor", sr_rd_normal_tt},
    {"aten::normal.float_float", sr_rd_float},
    {"aten::normal_", sr_rd_self},
    {"aten::rand", sr_rd_float},
    {"aten::rand.generator", sr_rd_float},
    {"aten::rand.names", sr_rd_float},
    {"aten::rand.generator_with_names", sr_rd_float},
    {"aten::rand_like", sr_rd_like0},
    {"aten::randint", sr_rd_int64},
    {"aten::randint.generator", sr_rd_int64},
    {"aten::randint.low", sr_rd_int64},
    {"aten::randint.low_generator", sr_rd_int64},
    {"aten::randint_like", sr_rd_like0},
    {"aten::randint_like.low_dtype", sr_rd_like0},
    {"aten::randn", sr_rd_float},
    {"aten::randn.generator", sr_rd_float},
    {"aten::randn.names", sr_rd_float},
    {"aten::randn.generator_with_names", sr_rd_float},
    {"aten::randn_like", sr_rd_like0},
    {"aten::random_.from", sr_rd_self},
    {"aten::random_.to", sr_rd_self},
    {"aten::random_", sr_rd_self},
    {"aten::randperm", sr_rd_randperm},
    {"aten::randperm.generator", sr_rd_randperm},
    {"aten::rrelu", sr_rd_same},
    {"aten::uniform_", sr_rd_self},
    {NULL, NULL},
};
