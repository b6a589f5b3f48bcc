/* tests/abi/abi_args.c: Optional, List, Tuple and str arguments through the
 * C ABI of generated libraries (include/tsaot.h's slots), called directly:
 *
 *   abi_args TSAOT ABI_FIXTURES WORKDIR
 *
 * Fixtures of tests/fixtures/abi (make_abi_fixtures.py) are compiled by the
 * build's tsaot, opened with tools/so_load.c and called with TSAOT_NONE
 * markers, list lengths and str bytes made with tsaot.h's helpers: their
 * input specs, PyTorch's outputs on the specialisation and off it (the
 * fallback interpreter, run and run_static), the refusals of a library
 * built with --no-fallback, a library compiled without an example, and
 * every malformed slot refused with TSAOT_E_INPUT and a reason naming it. */
#include "so_load.h"
#include "test.h"

#include "aot.h"
#include "npy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tsaot, *fixtures, *work;
static ts_rt_ctx ctx;

/* Compiles FIXTURES/<fix>/model.pt into WORK/<name>.so with the example
 * words of form `form` (NULL: none) and `extra` options, and opens it. */
static bool lib_open(ts_tool_so *so, const char *fix, const char *form, const char *extra, const char *name) {
  char cmd[8192], path[1024];
  int n = snprintf(cmd, sizeof cmd, "'%s' '%s/%s/model.pt' -o '%s/%s.so' --name %s %s", tsaot, fixtures, fix, work,
                   name, name, extra ? extra : "");
  if (form) {
    snprintf(path, sizeof path, "%s/%s/%s/args.txt", fixtures, fix, form);
    FILE *f = fopen(path, "r");
    char w[512];
    n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --example");
    while (f && fscanf(f, "%511s", w) == 1 && (size_t)n < sizeof cmd - 1024) {
      size_t len = strlen(w);
      if (len > 4 && !strcmp(w + len - 4, ".npy"))
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s/%s/%s/%s'", fixtures, fix, form, w);
      else
        n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s'", w);
    }
    if (f)
      fclose(f);
    else
      fprintf(stderr, "abi_args: cannot read %s\n", path);
  }
  if (system(cmd) != 0) {
    fprintf(stderr, "abi_args: failed: %s\n", cmd);
    return false;
  }
  char why[1024];
  snprintf(path, sizeof path, "%s/%s.so", work, name);
  if (!ts_tool_so_open(so, path, why, sizeof why)) {
    fprintf(stderr, "abi_args: %s\n", why);
    return false;
  }
  return true;
}

/* The arrays the tests read, kept until the end (the DLTensors view them). */
static ts_rt_tensor *kept[256];
static int nkept;

/* FIXTURES/<fix>/<form>/<file> as a DLTensor. */
static DLTensor arr(const char *fix, const char *form, const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s/%s", fixtures, fix, form, file);
  DLTensor dl = tsaot_none();
  ts_rt_tensor *t = ts_rt_npy_read(&ctx, path);
  if (!TS_CHECK(t != NULL) || !TS_CHECK(nkept < 256)) {
    fprintf(stderr, "  %s: %s\n", path, ctx.err.data ? ctx.err.data : "");
    return dl;
  }
  kept[nkept++] = t;
  ts_rt_tensor_to_dl(t, &dl);
  return dl;
}

/* Whether got (a run's output) is PyTorch's FIXTURES/<fix>/<form>/out<k>.npy. */
static bool same_out(const DLTensor *got, const char *fix, const char *form, int k) {
  char file[32];
  snprintf(file, sizeof file, "out%d.npy", k);
  DLTensor want = arr(fix, form, file);
  if (want.ndim != got->ndim || want.dtype.code != got->dtype.code || want.dtype.bits != got->dtype.bits)
    return false;
  int64_t n = 1;
  for (int d = 0; d < want.ndim; d++) {
    if (want.shape[d] != got->shape[d])
      return false;
    n *= want.shape[d];
  }
  if (want.dtype.code != kDLFloat || want.dtype.bits != 32)
    return memcmp(want.data, got->data, (size_t)(n * want.dtype.bits / 8)) == 0;
  const float *w = want.data, *g = got->data;
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(g[i] - w[i]) <= 1e-5f + 1e-4f * fabsf(w[i])))
      return false;
  return true;
}

/* Runs so on in[0..n): TSAOT_OK, PyTorch's outputs of <fix>/<form>, and
 * last_bailout as `bail`. */
static void check_run(const ts_tool_so *so, const DLTensor *in, int n, const char *fix, const char *form, int bail,
                      int line) {
  DLManagedTensor *out[8];
  int nout = 0;
  int rc = so->run(in, n, out, 8, &nout);
  char what[128];
  snprintf(what, sizeof what, "run of %s/%s (line %d)", fix, form, line);
  if (!ts_test_check(rc == TSAOT_OK, __FILE__, line, what)) {
    fprintf(stderr, "  rc %d: %s\n", rc, so->last_error());
    return;
  }
  ts_test_check(so->last_bailout() == bail, __FILE__, line, bail ? "a bailout" : "no bailout");
  if (so->last_bailout() != bail)
    fprintf(stderr, "  last_error: %s\n", so->last_error());
  for (int k = 0; k < nout; k++) {
    ts_test_check(same_out(&out[k]->dl_tensor, fix, form, k), __FILE__, line, "PyTorch's output");
    out[k]->deleter(out[k]);
  }
}
#define RUN_OK(so, in, n, fix, form, bail) check_run((so), (in), (n), (fix), (form), (bail), __LINE__)

/* Runs so on in[0..n): refused with `want` and a last_error containing why. */
static void check_refused(const ts_tool_so *so, const DLTensor *in, int n, int want, const char *why, int line) {
  DLManagedTensor *out[8];
  int nout = 0;
  int rc = so->run(in, n, out, 8, &nout);
  for (int k = 0; k < nout; k++)
    out[k]->deleter(out[k]);
  bool ok = rc == want && strstr(so->last_error(), why) != NULL;
  if (!ts_test_check(ok, __FILE__, line, why))
    fprintf(stderr, "  rc %d (want %d), last_error \"%s\"\n", rc, want, so->last_error());
}
#define REFUSED(so, in, n, why) check_refused((so), (in), (n), TSAOT_E_INPUT, (why), __LINE__)

static bool spec_is(const ts_tool_so *so, int i, int kind, int ndim, int64_t size0) {
  tsaot_spec sp;
  if (so->input_spec(i, &sp) != TSAOT_OK)
    return false;
  bool ok = sp.kind == kind && sp.ndim == ndim;
  if (ok && (kind & TSAOT_SPEC_KIND_MASK) == TSAOT_SPEC_LENGTH)
    ok = sp.shape && sp.shape[0] == size0 && sp.dtype.code == kDLInt && sp.dtype.bits == 64;
  else if (ok && ndim > 0)
    ok = sp.shape && sp.shape[0] == size0;
  if (!ok)
    fprintf(stderr, "  spec %d: kind 0x%x ndim %d shape[0] %lld\n", i, (unsigned)sp.kind, (int)sp.ndim,
            sp.shape ? (long long)sp.shape[0] : -99LL);
  return ok;
}

/* nested: forward(xs: Optional[List[Tensor]], pair: Tuple[Tensor, Optional[Tensor]]),
 * compiled for xs of 2 tensors and both of pair. */
static void test_nested(void) {
  ts_tool_so so, nf, open;
  if (!TS_CHECK(lib_open(&so, "nested", "full", NULL, "nested_full")))
    return;
  int64_t two = 2;
  DLTensor x1 = arr("nested", "full", "in0.npy"), x2 = arr("nested", "full", "in1.npy");
  DLTensor a = arr("nested", "full", "in2.npy"), b = arr("nested", "full", "in3.npy");
  DLTensor full[6] = {tsaot_int64(&two), x1, x2, a, b, b};

  /* the specs of the specialisation */
  TS_CHECK_INTEQ(so.num_inputs(), 5);
  TS_CHECK(spec_is(&so, 0, TSAOT_SPEC_LENGTH | TSAOT_SPEC_OPTIONAL, 0, 2));
  TS_CHECK(spec_is(&so, 1, TSAOT_SPEC_TENSOR, 2, 2));
  TS_CHECK(spec_is(&so, 2, TSAOT_SPEC_TENSOR, 1, 3));
  TS_CHECK(spec_is(&so, 3, TSAOT_SPEC_TENSOR, 2, 2));
  TS_CHECK(spec_is(&so, 4, TSAOT_SPEC_TENSOR | TSAOT_SPEC_OPTIONAL, 2, 2));
  tsaot_spec sp;
  TS_CHECK_INTEQ(so.input_spec(5, &sp), TSAOT_E_INPUT);

  /* on the specialisation, and off it: xs None and pair[1] None */
  RUN_OK(&so, full, 5, "nested", "full", 0);
  DLTensor none_a = arr("nested", "none", "in0.npy");
  DLTensor nones[3] = {TSAOT_NONE_INIT, none_a, tsaot_none()};
  RUN_OK(&so, nones, 3, "nested", "none", 1);
  TS_CHECK_HAS(so.last_error(), "input 0 (xs): expected a list of 2, got None");
  /* a marker's other fields are not read */
  DLTensor odd = tsaot_none();
  odd.device.device_type = (DLDeviceType)99;
  odd.dtype.code = 77;
  nones[2] = odd;
  RUN_OK(&so, nones, 3, "nested", "none", 1);

  /* run_static, on and off */
  size_t asize = so.arena_size();
  void *arena = aligned_alloc(TSAOT_ARENA_ALIGN, (asize + 63) & ~(size_t)63);
  float buf[6];
  int64_t shape[2] = {2, 3};
  DLTensor out = {buf, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  if (TS_CHECK(arena != NULL)) {
    TS_CHECK_INTEQ(so.run_static(full, 5, &out, 1, arena, asize), TSAOT_OK);
    TS_CHECK(same_out(&out, "nested", "full", 0));
    TS_CHECK_INTEQ(so.run_static(nones, 3, &out, 1, arena, asize), TSAOT_OK);
    TS_CHECK(same_out(&out, "nested", "none", 0));
    TS_CHECK_INTEQ(so.last_bailout(), 1);
  }
  free(arena);

  /* what a caller can get wrong: each refused, naming the slot */
  DLTensor bad[6];
  memcpy(bad, full, sizeof bad);
  bad[3] = tsaot_none();
  REFUSED(&so, bad, 5, "input 3 (pair[0]): None given for a parameter of type Tensor");
  int64_t neg = -1, seven = 7;
  memcpy(bad, full, sizeof bad);
  bad[0] = tsaot_int64(&neg);
  REFUSED(&so, bad, 5, "input 0 (xs): a list length of -1, below 0");
  bad[0] = tsaot_int64(&seven);
  REFUSED(&so, bad, 5, "input 0 (xs): a list length of 7, more than the inputs left after it");
  bad[0] = x2; /* a 1-d float32 where the length goes */
  REFUSED(&so, bad, 5, "input 0 (xs): expected a list's length (a 0-d int64 array), got a 1-d float32 array");
  REFUSED(&so, full, 6, "6 inputs given, the arguments take 5");
  REFUSED(&so, full, 3, "input 3 (pair[0]): missing: 3 inputs given, the arguments need more");
  REFUSED(&so, NULL, 5, "the inputs are NULL");
  memcpy(bad, full, sizeof bad);
  bad[2].data = NULL; /* not a marker: ndim is 1 */
  REFUSED(&so, bad, 5, "input 2 (xs[1]): a tensor of 12 bytes whose data is NULL");
  memcpy(bad, full, sizeof bad);
  bad[3].ndim = -1; /* a marker only with data NULL */
  REFUSED(&so, bad, 5, "input 3 (pair[0]): a tensor of -1 dimensions");
  /* still fine after all that */
  RUN_OK(&so, full, 5, "nested", "full", 0);

  /* --no-fallback: off the specialisation is an error naming the slot */
  if (TS_CHECK(lib_open(&nf, "nested", "full", "--no-fallback", "nested_nf"))) {
    REFUSED(&nf, nones, 3, "input 0 (xs): expected a list of 2, got None");
    int64_t three = 3;
    DLTensor longer[6] = {tsaot_int64(&three), x1, x2, x2, a, b};
    REFUSED(&nf, longer, 6, "input 0 (xs): expected a list of 2, got 3");
    DLTensor half[5] = {tsaot_int64(&two), x1, x2, a, tsaot_none()};
    REFUSED(&nf, half, 5, "input 4 (pair[1]): expected f32[2,3], got None");
    RUN_OK(&nf, full, 5, "nested", "full", 0);
    nf.release();
  }

  /* no example: any list length and None run compiled code; the specs are
   * one form, a list's with one element */
  if (TS_CHECK(lib_open(&open, "nested", NULL, NULL, "nested_open"))) {
    TS_CHECK_INTEQ(open.num_inputs(), -1);
    TS_CHECK(spec_is(&open, 0, TSAOT_SPEC_LENGTH | TSAOT_SPEC_OPTIONAL, 0, -1));
    TS_CHECK(spec_is(&open, 1, TSAOT_SPEC_TENSOR, -1, 0));
    TS_CHECK(spec_is(&open, 2, TSAOT_SPEC_TENSOR, -1, 0));
    TS_CHECK(spec_is(&open, 3, TSAOT_SPEC_TENSOR | TSAOT_SPEC_OPTIONAL, -1, 0));
    TS_CHECK_INTEQ(open.input_spec(4, &sp), TSAOT_E_INPUT);
    RUN_OK(&open, full, 5, "nested", "full", 0);
    RUN_OK(&open, nones, 3, "nested", "none", 0);
    open.release();
  }
  so.release();
}

/* str_branch: forward(x: Tensor, mode: str), compiled for mode "relu"; the
 * str's value is not fixed, so every str runs compiled code. */
static void test_str(void) {
  ts_tool_so so;
  if (!TS_CHECK(lib_open(&so, "str_branch", "relu", NULL, "str_branch")))
    return;
  TS_CHECK_INTEQ(so.num_inputs(), 2);
  TS_CHECK(spec_is(&so, 1, TSAOT_SPEC_STR, 1, -1));
  DLTensor x = arr("str_branch", "relu", "in0.npy");
  int64_t n;
  DLTensor in[2] = {x, tsaot_str("relu", &n)};
  n = 4;
  RUN_OK(&so, in, 2, "str_branch", "relu", 0);
  const char *neg = "n\xc3\xa9gatif";
  int64_t nneg = (int64_t)strlen(neg);
  in[1] = tsaot_str(neg, &nneg);
  RUN_OK(&so, in, 2, "str_branch", "neg", 0);
  /* any other str, a 4-byte character included: the last branch */
  const char *smile = "\xf0\x9f\x98\x80";
  int64_t nsmile = 4;
  in[1] = tsaot_str(smile, &nsmile);
  RUN_OK(&so, in, 2, "str_branch", "bytes", 0);
  /* bytes through a stride: "relu" in every other byte */
  const char *spread = "rxexlxux";
  int64_t four = 4, two = 2;
  in[1] = tsaot_str(spread, &four);
  in[1].strides = &two;
  RUN_OK(&so, in, 2, "str_branch", "relu", 0);
  in[1].strides = NULL;

  /* not UTF-8 as Python's encoder writes it: each refused, as PyTorch
   * cannot be given it */
  static const struct {
    const char *bytes, *why;
  } bad[] = {
      {"\xff", "input 1 (mode): the str is not valid UTF-8 (byte 0, 0xff)"},
      {"ab\xc0\xaf", "the str is not valid UTF-8 (byte 2, 0xc0)"},         /* overlong '/' */
      {"\xe0\x80\xaf", "the str is not valid UTF-8 (byte 0, 0xe0)"},        /* overlong */
      {"\xed\xa0\x80", "the str is not valid UTF-8 (byte 0, 0xed)"},        /* a surrogate */
      {"\xf4\x90\x80\x80", "the str is not valid UTF-8 (byte 0, 0xf4)"},    /* past U+10FFFF */
      {"ok\xe2\x82", "the str is not valid UTF-8 (byte 2, 0xe2)"},          /* cut short */
      {"\xe2\x28\xa1", "the str is not valid UTF-8 (byte 0, 0xe2)"},        /* a bad continuation */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int64_t len = (int64_t)strlen(bad[i].bytes);
    in[1] = tsaot_str(bad[i].bytes, &len);
    REFUSED(&so, in, 2, bad[i].why);
  }
  int8_t sbytes[4] = {'r', 'e', 'l', 'u'};
  in[1] = tsaot_str((const char *)sbytes, &four);
  in[1].dtype.code = kDLInt; /* int8, not uint8 */
  REFUSED(&so, in, 2, "input 1 (mode): expected a str (a 1-d uint8 array of UTF-8 bytes), got a 1-d int8 array");
  in[1] = tsaot_none();
  REFUSED(&so, in, 2, "input 1 (mode): None given for a parameter of type str");
  so.release();
}

/* gru_cell: forward(input, hx: Optional[Tensor]), compiled for hx None. */
static void test_gru(void) {
  ts_tool_so so;
  if (!TS_CHECK(lib_open(&so, "gru_cell", "nohx", NULL, "gru_nohx")))
    return;
  TS_CHECK_INTEQ(so.num_inputs(), 2);
  TS_CHECK(spec_is(&so, 1, TSAOT_SPEC_NONE | TSAOT_SPEC_OPTIONAL, 0, 0));
  DLTensor in[2] = {arr("gru_cell", "nohx", "in0.npy"), TSAOT_NONE_INIT};
  TS_CHECK(tsaot_is_none(&in[1]) && !tsaot_is_none(&in[0]));
  RUN_OK(&so, in, 2, "gru_cell", "nohx", 0);
  DLTensor hx[2] = {arr("gru_cell", "hx", "in0.npy"), arr("gru_cell", "hx", "in1.npy")};
  RUN_OK(&so, hx, 2, "gru_cell", "hx", 1);
  TS_CHECK_HAS(so.last_error(), "input 1 (hx): expected None, got f32[3,6]");
  so.release();
}

/* opt_numbers: forward(x, k: Optional[int], offset: Optional[float]),
 * compiled for both given. */
static void test_numbers(void) {
  ts_tool_so so;
  if (!TS_CHECK(lib_open(&so, "opt_numbers", "given", NULL, "opt_numbers")))
    return;
  TS_CHECK(spec_is(&so, 1, TSAOT_SPEC_INT | TSAOT_SPEC_OPTIONAL, 0, 0));
  TS_CHECK(spec_is(&so, 2, TSAOT_SPEC_FLOAT | TSAOT_SPEC_OPTIONAL, 0, 0));
  int64_t k = 3;
  DLTensor in[3] = {arr("opt_numbers", "given", "in0.npy"), tsaot_int64(&k), arr("opt_numbers", "given", "in2.npy")};
  RUN_OK(&so, in, 3, "opt_numbers", "given", 0);
  DLTensor nones[3] = {arr("opt_numbers", "none", "in0.npy"), tsaot_none(), tsaot_none()};
  RUN_OK(&so, nones, 3, "opt_numbers", "none", 1);
  TS_CHECK_HAS(so.last_error(), "input 1 (k): expected an int, got None");
  /* an int given a float: the argument's type refuses it */
  in[1] = in[2];
  REFUSED(&so, in, 3, "input 1 (k): expected an int (a 0-d int64 array), got a 0-d float64 array");
  so.release();
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: abi_args TSAOT ABI_FIXTURES WORKDIR\n");
    return 2;
  }
  tsaot = argv[1];
  fixtures = argv[2];
  work = argv[3];
  ts_rt_ctx_init(&ctx, 1);
  test_nested();
  test_str();
  test_gru();
  test_numbers();
  for (int i = 0; i < nkept; i++)
    ts_rt_tensor_release(kept[i]);
  ts_rt_ctx_free(&ctx);
  return ts_test_finish();
}
