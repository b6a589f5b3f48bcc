/* tests/cuda/gpu_abi.c: the GPU run path (runtime/hosted/gpu.h) through the C ABI
 * (include/tsaot.h), on the stand-in driver and cuBLAS, without a GPU:
 *
 *   gpu_abi TSAOT FIXTURES WORKDIR LIBFAKE_CUDA LIBFAKE_CUBLAS
 *
 * The small MLP fixture (linear, relu, layer_norm, linear: kernels and
 * GEMMs) and pointwise_libm (fused kernels only, float32 and float64) are
 * compiled at test time with --device cuda --cuda-emulate, small_mlp also
 * without --device cuda, and checked:
 *
 *   1. set_device refuses bad names, a library without GPU code, a missing
 *      driver, a driver without devices and a device that is not there,
 *      each with TSAOT_E_DEVICE and its reason, and the model stays on the
 *      CPU;
 *   2. runs on "cuda" with host inputs give PyTorch's outputs as kDLCPU
 *      tensors, and device_stats counts the kernels and GEMMs they made;
 *   3. kDLCUDA inputs (the stand-in's device memory) are used in place; one
 *      on another device, or not contiguous, is refused;
 *   4. run_static is refused on cuda and works again after set_device("cpu");
 *   5. repeated runs give the same bits and the same live device memory,
 *      and release frees every device allocation;
 *   6. two threads running at once on cuda give the right results.
 *
 * The stand-in's state (live allocations, its cuMemAlloc) is reached with
 * dlopen of the same file the runtime opens, which also keeps it loaded
 * between set_device calls. */
#include "so_model.h"
#include "test.h"

#include "npy.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long fake_deviceptr;

/* the stand-in driver's functions the test calls itself */
static struct {
  void *h;
  long (*live_allocs)(void);
  int (*mem_alloc)(fake_deviceptr *, size_t);
  int (*mem_free)(fake_deviceptr);
  int (*htod)(fake_deviceptr, const void *, size_t);
} F;

#define GA_MAX_IO 4

/* A fixture compiled for the GPU, PyTorch's outputs and the bits of the
 * first good run (later runs must repeat them exactly: the emulated GPU is
 * deterministic). */
typedef struct gm {
  so_model m;
  char fixture[1024];
  double atol, rtol;
  int nwant;
  ts_rt_tensor *want[GA_MAX_IO];
  void *ref[GA_MAX_IO];
  size_t ref_bytes[GA_MAX_IO];
  /* the inputs copied into the stand-in's device memory, as kDLCUDA tensors */
  fake_deviceptr dev[GA_MAX_IO];
  DLTensor in_dev[GA_MAX_IO];
} gm;

static bool dl_sym(void *h, const char *name, void *fnp) {
  void *p = dlsym(h, name);
  if (!p) {
    fprintf(stderr, "gpu_abi: the stand-in lacks %s\n", name);
    return false;
  }
  /* POSIX: dlsym's address of a function is the function pointer's bits */
  memcpy(fnp, &p, sizeof p);
  return true;
}

static bool fake_open(const char *path) {
  F.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!F.h) {
    fprintf(stderr, "gpu_abi: %s: %s\n", path, dlerror());
    return false;
  }
  return dl_sym(F.h, "fake_cuda_live_allocs", &F.live_allocs) && dl_sym(F.h, "cuMemAlloc_v2", &F.mem_alloc) &&
         dl_sym(F.h, "cuMemFree_v2", &F.mem_free) && dl_sym(F.h, "cuMemcpyHtoD_v2", &F.htod);
}

/* "atol: X" and "rtol: Y" of the fixture's case.txt (1e-5 and 1e-4 when absent). */
static void read_tolerances(gm *g) {
  g->atol = 1e-5;
  g->rtol = 1e-4;
  char path[1100], line[256];
  snprintf(path, sizeof path, "%s/case.txt", g->fixture);
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "atol: ", 6))
      g->atol = strtod(line + 6, NULL);
    else if (!strncmp(line, "rtol: ", 6))
      g->rtol = strtod(line + 6, NULL);
  }
  fclose(f);
}

static size_t dl_bytes(const DLTensor *t) {
  size_t n = (t->dtype.bits + 7u) / 8u;
  for (int d = 0; d < t->ndim; d++)
    n *= (size_t)t->shape[d];
  return n;
}

/* Compiles FIXTURES/CASE into WORK/NAME.so with `extra`, reads PyTorch's
 * outputs and copies the inputs into device memory. */
static bool gm_open(gm *g, const char *tsaot, const char *fixtures, const char *work, const char *fcase,
                    const char *name, const char *extra) {
  memset(g, 0, sizeof *g);
  snprintf(g->fixture, sizeof g->fixture, "%s/%s", fixtures, fcase);
  read_tolerances(g);
  if (!so_model_open(&g->m, tsaot, g->fixture, work, name, true, extra))
    return false;
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  char path[1100];
  for (int i = 0; i < GA_MAX_IO; i++) {
    snprintf(path, sizeof path, "%s/out%d.npy", g->fixture, i);
    FILE *f = fopen(path, "rb");
    if (!f)
      break;
    fclose(f);
    if (!(g->want[i] = ts_rt_npy_read(&ctx, path))) {
      fprintf(stderr, "gpu_abi: %s: %s\n", path, ctx.err.data ? ctx.err.data : "unreadable");
      ts_rt_ctx_free(&ctx);
      return false;
    }
    g->nwant = i + 1;
  }
  ts_rt_ctx_free(&ctx);
  for (int i = 0; i < g->m.nin && i < GA_MAX_IO; i++) {
    const DLTensor *h = &g->m.in[i];
    size_t n = dl_bytes(h);
    if (F.mem_alloc(&g->dev[i], n) != 0 || F.htod(g->dev[i], (const char *)h->data + h->byte_offset, n) != 0) {
      fprintf(stderr, "gpu_abi: the stand-in's cuMemAlloc/cuMemcpyHtoD failed\n");
      return false;
    }
    g->in_dev[i] = *h;
    g->in_dev[i].data = (void *)(uintptr_t)g->dev[i];
    g->in_dev[i].byte_offset = 0;
    g->in_dev[i].strides = NULL;
    g->in_dev[i].device.device_type = kDLCUDA;
    g->in_dev[i].device.device_id = 0;
  }
  return g->nwant > 0;
}

static void gm_close(gm *g) {
  for (int i = 0; i < GA_MAX_IO; i++) {
    if (g->dev[i])
      F.mem_free(g->dev[i]);
    ts_rt_tensor_release(g->want[i]);
    free(g->ref[i]);
  }
  so_model_close(&g->m);
}

/* Output o against PyTorch's w: dtype, shape, kDLCPU and every element
 * within the tolerances. 0, or 1 with the reason in why. */
static int out_diff_rows(const gm *g, const DLTensor *o, const ts_rt_tensor *w, int64_t drop, char *why, size_t cap) {
  if (o->device.device_type != kDLCPU) {
    snprintf(why, cap, "an output on device type %d", (int)o->device.device_type);
    return 1;
  }
  bool f64 = w->dtype == TS_DT_FLOAT64;
  if (o->dtype.code != kDLFloat || o->dtype.bits != (f64 ? 64 : 32) || o->dtype.lanes != 1 || o->ndim != w->ndim) {
    snprintf(why, cap, "an output of dtype code %u bits %u, rank %d", (unsigned)o->dtype.code,
             (unsigned)o->dtype.bits, (int)o->ndim);
    return 1;
  }
  for (int d = 0; d < o->ndim; d++)
    if (o->shape[d] != w->sizes[d] - (d ? 0 : drop)) {
      snprintf(why, cap, "size %lld in dimension %d, PyTorch's %lld", (long long)o->shape[d], d,
               (long long)(w->sizes[d] - (d ? 0 : drop)));
      return 1;
    }
  int64_t want = 1;
  for (int d = o->ndim - 1; o->strides && d >= 0; want *= o->shape[d], d--)
    if (o->shape[d] != 1 && o->strides[d] != want) {
      snprintf(why, cap, "a non-contiguous output");
      return 1;
    }
  const char *data = (const char *)o->data + o->byte_offset;
  const char *wd = ts_rt_tensor_data(w);
  int64_t n = 1;
  for (int d = 0; d < o->ndim; d++)
    n *= o->shape[d];
  for (int64_t i = 0; i < n; i++) {
    double a = f64 ? ((const double *)data)[i] : ((const float *)data)[i];
    double b = f64 ? ((const double *)wd)[i] : ((const float *)wd)[i];
    if (!(fabs(a - b) <= g->atol + g->rtol * fabs(b))) {
      snprintf(why, cap, "element %lld is %.9g, PyTorch's %.9g", (long long)i, a, b);
      return 1;
    }
  }
  return 0;
}

static int out_diff(const gm *g, const DLTensor *o, const ts_rt_tensor *w, char *why, size_t cap) {
  return out_diff_rows(g, o, w, 0, why, cap);
}

/* One run of g's model on `in`: 0 when it gives PyTorch's outputs (and,
 * when `same_bits` and g has them, the bits of the reference run), else 1
 * with the reason in why. Touches no test counter: threads call it. */
static int gm_run_diff(gm *g, const DLTensor *in, bool same_bits, char *why, size_t cap) {
  DLManagedTensor *o[GA_MAX_IO + 1];
  int n = 0;
  int rc = g->m.f.run(in, g->m.nin, o, GA_MAX_IO + 1, &n);
  int bad = 0;
  if (rc != TSAOT_OK) {
    snprintf(why, cap, "run gave %d: %s", rc, g->m.f.last_error());
    bad = 1;
  } else if (n != g->nwant) {
    snprintf(why, cap, "%d outputs, PyTorch's %d", n, g->nwant);
    bad = 1;
  }
  for (int i = 0; !bad && i < n; i++) {
    bad = out_diff(g, &o[i]->dl_tensor, g->want[i], why, cap);
    const char *data = (const char *)o[i]->dl_tensor.data + o[i]->dl_tensor.byte_offset;
    if (!bad && same_bits && g->ref[i] &&
        (g->ref_bytes[i] != dl_bytes(&o[i]->dl_tensor) || memcmp(g->ref[i], data, g->ref_bytes[i]))) {
      snprintf(why, cap, "output %d differs from the first run's bits", i);
      bad = 1;
    }
  }
  for (int i = 0; i < n; i++)
    o[i]->deleter(o[i]);
  return bad;
}

/* A run that must give PyTorch's outputs, checked. */
static bool gm_run_ok(gm *g, const DLTensor *in, bool same_bits, const char *what) {
  char why[512] = "";
  bool ok = gm_run_diff(g, in, same_bits, why, sizeof why) == 0;
  if (!ts_test_check(ok, __FILE__, __LINE__, what))
    fprintf(stderr, "  %s: %s\n", g->m.name, why);
  return ok;
}

/* Keeps the bits of a good run as the reference of later runs. */
static bool gm_keep_ref(gm *g, const DLTensor *in) {
  DLManagedTensor *o[GA_MAX_IO + 1];
  int n = 0;
  if (!TS_CHECK_INTEQ(g->m.f.run(in, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_OK))
    return false;
  for (int i = 0; i < n && i < GA_MAX_IO; i++) {
    free(g->ref[i]);
    g->ref_bytes[i] = dl_bytes(&o[i]->dl_tensor);
    g->ref[i] = malloc(g->ref_bytes[i] ? g->ref_bytes[i] : 1);
    if (g->ref[i])
      memcpy(g->ref[i], (const char *)o[i]->dl_tensor.data + o[i]->dl_tensor.byte_offset, g->ref_bytes[i]);
  }
  for (int i = 0; i < n; i++)
    o[i]->deleter(o[i]);
  return true;
}

/* rc and a last_error containing `why`. */
static bool check_refused(const gm *g, int rc, int want, const char *why, const char *file, int line) {
  const char *err = g->m.f.last_error();
  bool ok = rc == want && err && strstr(err, why) != NULL;
  if (!ts_test_check(ok, file, line, why))
    fprintf(stderr, "  %s: rc %d (want %d), last_error \"%s\"\n", g->m.name, rc, want, err ? err : "(NULL)");
  return ok;
}
#define REFUSED(g, rc, want, why) check_refused((g), (rc), (want), (why), __FILE__, __LINE__)

static tsaot_device_stats stats_of(const gm *g) {
  tsaot_device_stats s;
  memset(&s, 0, sizeof s);
  if (!TS_CHECK_INTEQ(g->m.f.device_stats(&s), TSAOT_OK))
    s.description = "";
  return s;
}

static bool on_cpu(const gm *g) {
  tsaot_device_stats s = stats_of(g);
  return s.device_type == kDLCPU && s.description && !strcmp(s.description, "cpu");
}

static int run_static_once(gm *g, void *arena, size_t asize, DLTensor *outs, int nout) {
  return g->m.f.run_static(g->m.in, g->m.nin, outs, nout, arena, asize);
}

/* 1. What set_device refuses, and why. The model stays on the CPU and
 * still runs there. */
static void test_set_device_errors(gm *g, gm *cpu_only, const char *work, const char *libcuda) {
  printf("1. set_device errors\n");
  static const char *const bad[] = {NULL, "gpu", "cuda:", "cuda:x", "cuda:-1", "", "cuda0", "cuda:0x", "CUDA",
                                    "cuda:99999999999", "cuda:4294967296", "cuda:4294967297"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    REFUSED(g, g->m.f.set_device(bad[i]), TSAOT_E_DEVICE, "expected cpu, cuda or cuda:N");
    TS_CHECK(on_cpu(g));
  }
  TS_CHECK_INTEQ(cpu_only->m.f.set_device("cpu"), TSAOT_OK);
  REFUSED(cpu_only, cpu_only->m.f.set_device("cuda"), TSAOT_E_DEVICE, "was compiled without --device cuda");
  REFUSED(cpu_only, cpu_only->m.f.set_device("cuda:0"), TSAOT_E_DEVICE, "cpu_mlp was compiled without --device cuda");
  REFUSED(cpu_only, cpu_only->m.f.set_device("cuda:x"), TSAOT_E_DEVICE, "expected cpu, cuda or cuda:N");
  TS_CHECK(on_cpu(cpu_only));
  gm_run_ok(cpu_only, cpu_only->m.in, false, "the CPU-only library still runs");

  /* the driver is looked up when set_device opens it */
  char missing[1100];
  snprintf(missing, sizeof missing, "%s/no-such-libcuda.so", work);
  setenv("TSAOT_LIBCUDA", missing, 1);
  REFUSED(g, g->m.f.set_device("cuda"), TSAOT_E_DEVICE, "no-such-libcuda.so not found");
  REFUSED(g, g->m.f.set_device("cuda"), TSAOT_E_DEVICE, "this host has no NVIDIA driver");
  TS_CHECK(on_cpu(g));
  setenv("TSAOT_LIBCUDA", libcuda, 1);

  setenv("FAKE_CUDA_NO_DEVICE", "1", 1);
  REFUSED(g, g->m.f.set_device("cuda"), TSAOT_E_DEVICE, "cuInit: CUDA_ERROR_NO_DEVICE");
  TS_CHECK(on_cpu(g));
  unsetenv("FAKE_CUDA_NO_DEVICE");

  REFUSED(g, g->m.f.set_device("cuda:1"), TSAOT_E_DEVICE, "CUDA device 1: CUDA_ERROR_INVALID_DEVICE");
  REFUSED(g, g->m.f.set_device("cuda:1"), TSAOT_E_DEVICE, "invalid device ordinal");
  TS_CHECK(on_cpu(g));
  TS_CHECK_INTEQ(g->m.f.device_stats(NULL), TSAOT_E_INPUT);
  gm_run_ok(g, g->m.in, false, "after the refusals, a run on the CPU");
  /* a refused set_device leaves a model on the GPU where it was */
  TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK);
  REFUSED(g, g->m.f.set_device("cuda:1"), TSAOT_E_DEVICE, "invalid device ordinal");
  REFUSED(g, g->m.f.set_device("cuda:abc"), TSAOT_E_DEVICE, "expected cpu, cuda or cuda:N");
  TS_CHECK(!on_cpu(g));
  TS_CHECK_INTEQ(g->m.f.set_device("cpu"), TSAOT_OK);
  TS_CHECK(on_cpu(g));
}

/* 2. A run on cuda with host inputs, and what device_stats says. */
static void test_host_inputs(gm *g, unsigned min_launches, unsigned min_gemms) {
  printf("2. %s on cuda, host inputs\n", g->m.name);
  if (!TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK)) {
    fprintf(stderr, "  %s\n", g->m.f.last_error());
    return;
  }
  TS_CHECK_STREQ(g->m.f.last_error(), "");
  tsaot_device_stats s0 = stats_of(g);
  TS_CHECK_INTEQ(s0.device_type, kDLCUDA);
  TS_CHECK_INTEQ(s0.device_id, 0);
  TS_CHECK_INTEQ(s0.kernel_launches, 0);
  TS_CHECK_INTEQ(s0.gemms, 0);
  TS_CHECK(s0.description && !strncmp(s0.description, "cuda:0", 6));
  gm_run_ok(g, g->m.in, false, "a run on cuda with host inputs gives PyTorch's outputs");
  TS_CHECK_STREQ(g->m.f.last_error(), "");
  TS_CHECK_INTEQ(g->m.f.last_bailout(), 0);
  tsaot_device_stats s1 = stats_of(g);
  printf("  after one run: %llu launches, %llu gemms, %llu host ops, %llu bytes up, %llu down; %s\n",
         (unsigned long long)s1.kernel_launches, (unsigned long long)s1.gemms, (unsigned long long)s1.host_ops,
         (unsigned long long)s1.bytes_to_device, (unsigned long long)s1.bytes_to_host,
         s1.description ? s1.description : "(NULL)");
  TS_CHECK(s1.kernel_launches >= min_launches);
  TS_CHECK(s1.gemms >= min_gemms);
  if (!min_gemms)
    TS_CHECK_INTEQ(s1.gemms, 0);
  /* the inputs went up, the outputs came down */
  TS_CHECK(s1.bytes_to_device > 0);
  TS_CHECK(s1.bytes_to_host > 0);
  TS_CHECK(s1.description && !strncmp(s1.description, "cuda:0", 6));
  /* a second run does the same work again */
  gm_keep_ref(g, g->m.in);
  tsaot_device_stats s2 = stats_of(g);
  TS_CHECK_INTEQ(s2.kernel_launches, 2 * s1.kernel_launches);
  TS_CHECK_INTEQ(s2.gemms, 2 * s1.gemms);
  /* setting the same device again starts the counts from zero */
  TS_CHECK_INTEQ(g->m.f.set_device("cuda:0"), TSAOT_OK);
  tsaot_device_stats s3 = stats_of(g);
  TS_CHECK_INTEQ(s3.kernel_launches, 0);
  gm_run_ok(g, g->m.in, true, "a run after set_device(\"cuda:0\") again");
}

/* 3. kDLCUDA inputs: used in place; refused on another device or when not
 * contiguous. */
static void test_device_inputs(gm *g) {
  printf("3. %s on cuda, kDLCUDA inputs\n", g->m.name);
  tsaot_device_stats s0 = stats_of(g);
  gm_run_ok(g, g->in_dev, true, "a run with kDLCUDA inputs gives PyTorch's outputs");
  tsaot_device_stats s1 = stats_of(g);
  /* in place: nothing is uploaded when no op ran on the CPU (one that did
   * uploads what it made for the GPU ops after it) */
  if (s1.host_ops == s0.host_ops)
    TS_CHECK_INTEQ(s1.bytes_to_device - s0.bytes_to_device, 0);
  /* mixed: the first input on the device, the rest on the host */
  DLTensor mixed[GA_MAX_IO];
  memcpy(mixed, g->m.in, sizeof mixed);
  mixed[0] = g->in_dev[0];
  gm_run_ok(g, mixed, true, "a run with a kDLCUDA and host inputs");

  /* explicit compact strides and a byte_offset into the device buffer are
   * the same tensor */
  DLTensor t = g->in_dev[0];
  int64_t strides[16];
  strides[t.ndim - 1] = 1;
  for (int d = t.ndim - 2; d >= 0; d--)
    strides[d] = strides[d + 1] * t.shape[d + 1];
  size_t nb = dl_bytes(&t);
  fake_deviceptr off = 0;
  if (TS_CHECK_INTEQ(F.mem_alloc(&off, nb + 64), 0)) {
    F.htod(off + 64, (const char *)g->m.in[0].data + g->m.in[0].byte_offset, nb);
    mixed[0] = t;
    mixed[0].strides = strides;
    mixed[0].data = (void *)(uintptr_t)off;
    mixed[0].byte_offset = 64;
    gm_run_ok(g, mixed, true, "a kDLCUDA input with strides and a byte_offset");
  }

  mixed[0] = g->in_dev[0];
  mixed[0].device.device_id = 1;
  DLManagedTensor *o[GA_MAX_IO + 1];
  int n = -1;
  REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "input 0: a tensor on cuda:1");
  TS_CHECK_INTEQ(n, 0);
  REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "runs on cuda:0");

  /* the same bytes seen transposed: strides not row-major */
  if (t.ndim >= 2) {
    int64_t shape[16], tstr[16];
    memcpy(shape, t.shape, (size_t)t.ndim * sizeof *shape);
    memcpy(tstr, strides, (size_t)t.ndim * sizeof *tstr);
    int64_t a = shape[t.ndim - 2];
    shape[t.ndim - 2] = shape[t.ndim - 1];
    shape[t.ndim - 1] = a;
    tstr[t.ndim - 2] = 1;
    tstr[t.ndim - 1] = shape[t.ndim - 2];
    mixed[0] = g->in_dev[0];
    mixed[0].shape = shape;
    mixed[0].strides = tstr;
    n = -1;
    REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT,
            "a CUDA tensor that is not contiguous");
    TS_CHECK_INTEQ(n, 0);
  }
  /* the ABI's checks of a CPU tensor hold for a CUDA one */
  mixed[0] = g->in_dev[0];
  mixed[0].dtype.lanes = 4;
  REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "unsupported DLPack dtype");
  mixed[0] = g->in_dev[0];
  mixed[0].data = NULL;
  REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "input 0");
  /* another device type is still refused */
  mixed[0] = g->in_dev[0];
  mixed[0].device.device_type = kDLCUDAHost;
  REFUSED(g, g->m.f.run(mixed, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "device type");
  /* and after the refusals the good inputs still run */
  gm_run_ok(g, g->in_dev, true, "kDLCUDA inputs after the refusals");
  /* the runs read the caller's memory each time and never write it (the
   * stand-in's device memory is host memory) */
  const DLTensor *h0 = &g->m.in[0];
  TS_CHECK(!memcmp((const void *)(uintptr_t)g->dev[0], (const char *)h0->data + h0->byte_offset, nb));
  void *zeros = calloc(1, nb);
  if (TS_CHECK(zeros)) {
    F.htod(g->dev[0], zeros, nb);
    char why[512];
    TS_CHECK(gm_run_diff(g, g->in_dev, true, why, sizeof why) != 0);
    F.htod(g->dev[0], (const char *)h0->data + h0->byte_offset, nb);
    gm_run_ok(g, g->in_dev, true, "the input written back gives the first results again");
    free(zeros);
  }
  if (off)
    F.mem_free(off);
}

/* Inputs off the compiled specialisation (one row less: every row of both
 * models is computed on its own) leave the compiled code for the
 * interpreter, whose ops run on the CPU: host and kDLCUDA inputs both give
 * the first rows of PyTorch's outputs. */
static void test_bailout(gm *g) {
  printf("3b. %s on cuda, inputs off the specialisation\n", g->m.name);
  DLTensor in[GA_MAX_IO];
  int64_t shapes[GA_MAX_IO][16];
  for (int dev = 0; dev < 2; dev++) {
    for (int i = 0; i < g->m.nin && i < GA_MAX_IO; i++) {
      in[i] = dev ? g->in_dev[i] : g->m.in[i];
      memcpy(shapes[i], in[i].shape, (size_t)in[i].ndim * sizeof shapes[i][0]);
      shapes[i][0]--;
      in[i].shape = shapes[i];
      in[i].strides = NULL;
    }
    DLManagedTensor *o[GA_MAX_IO + 1];
    int n = 0;
    int rc = g->m.f.run(in, g->m.nin, o, GA_MAX_IO + 1, &n);
    if (!TS_CHECK_INTEQ(rc, TSAOT_OK))
      fprintf(stderr, "  %s inputs: %s\n", dev ? "kDLCUDA" : "host", g->m.f.last_error());
    TS_CHECK_INTEQ(g->m.f.last_bailout(), 1);
    TS_CHECK_INTEQ(n, g->nwant);
    char why[512];
    for (int i = 0; i < n; i++) {
      if (i < g->nwant && !TS_CHECK_INTEQ(out_diff_rows(g, &o[i]->dl_tensor, g->want[i], 1, why, sizeof why), 0))
        fprintf(stderr, "  %s inputs, output %d: %s\n", dev ? "kDLCUDA" : "host", i, why);
      o[i]->deleter(o[i]);
    }
  }
  /* and the next run is back in the compiled code */
  gm_run_ok(g, g->in_dev, true, "a compiled run after the bailouts");
  TS_CHECK_INTEQ(g->m.f.last_bailout(), 0);
}

/* 4. run_static is CPU only. */
static void test_run_static(gm *g) {
  printf("4. %s run_static\n", g->m.name);
  size_t asize = g->m.f.arena_size();
  void *arena = aligned_alloc(TSAOT_ARENA_ALIGN, (asize + 63) & ~(size_t)63);
  if (!TS_CHECK(arena) || !TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK)) {
    free(arena);
    return;
  }
  DLTensor outs[GA_MAX_IO];
  void *bufs[GA_MAX_IO] = {0};
  int nout = g->nwant;
  for (int i = 0; i < nout; i++) {
    const ts_rt_tensor *w = g->want[i];
    memset(&outs[i], 0, sizeof outs[i]);
    outs[i].device.device_type = kDLCPU;
    outs[i].ndim = w->ndim;
    outs[i].shape = w->sizes;
    outs[i].dtype.code = kDLFloat;
    outs[i].dtype.bits = w->dtype == TS_DT_FLOAT64 ? 64 : 32;
    outs[i].dtype.lanes = 1;
    outs[i].data = bufs[i] = calloc(1, dl_bytes(&outs[i]) + 8);
  }
  REFUSED(g, run_static_once(g, arena, asize, outs, nout), TSAOT_E_DEVICE, "set_device(\"cpu\")");
  TS_CHECK_INTEQ(g->m.f.set_device("cpu"), TSAOT_OK);
  TS_CHECK(on_cpu(g));
  char why[512];
  for (int pass = 0; pass < 2; pass++) {
    if (!TS_CHECK_INTEQ(run_static_once(g, arena, asize, outs, nout), TSAOT_OK))
      fprintf(stderr, "  %s\n", g->m.f.last_error());
    for (int i = 0; i < nout; i++)
      if (!TS_CHECK_INTEQ(out_diff(g, &outs[i], g->want[i], why, sizeof why), 0))
        fprintf(stderr, "  run_static output %d: %s\n", i, why);
  }
  /* the constants came back from the device intact */
  gm_run_ok(g, g->m.in, false, "run on the CPU after cuda");
  /* and back on the GPU, the constants go up again */
  TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK);
  gm_run_ok(g, g->m.in, true, "run on cuda again");
  TS_CHECK_INTEQ(g->m.f.set_device("cpu"), TSAOT_OK);
  gm_run_ok(g, g->m.in, false, "and on the CPU again");
  for (int i = 0; i < nout; i++)
    free(bufs[i]);
  free(arena);
}

/* 5. Repeated runs: the same bits, the same live device memory; release
 * frees it all. `baseline` is the stand-in's live allocations that are not
 * this model's. */
static void test_repeat_release(gm *g, long baseline) {
  printf("5. %s repeated runs, release\n", g->m.name);
  if (!TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK))
    return;
  long live2 = 0;
  bool same = true;
  for (int r = 1; r <= 20; r++) {
    char why[512];
    const DLTensor *in = r % 2 ? g->m.in : g->in_dev;
    if (gm_run_diff(g, in, true, why, sizeof why)) {
      fprintf(stderr, "  run %d: %s\n", r, why);
      same = false;
    }
    if (r == 2)
      live2 = F.live_allocs();
  }
  TS_CHECK(same);
  long live20 = F.live_allocs();
  printf("  live device allocations: %ld after run 2, %ld after run 20 (%ld not the model's)\n", live2, live20,
         baseline);
  TS_CHECK_INTEQ(live20, live2);
  g->m.f.release();
  if (!TS_CHECK_INTEQ(F.live_allocs(), baseline))
    fprintf(stderr, "  %s: %ld device allocations left after release\n", g->m.name, F.live_allocs() - baseline);
  /* a released model starts again on the CPU */
  TS_CHECK(on_cpu(g));
  gm_run_ok(g, g->m.in, false, "a run after release, on the CPU");
  /* release while on cuda with results still held by the caller */
  TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK);
  DLManagedTensor *o[GA_MAX_IO + 1];
  int n = 0;
  TS_CHECK_INTEQ(g->m.f.run(g->m.in, g->m.nin, o, GA_MAX_IO + 1, &n), TSAOT_OK);
  g->m.f.release();
  TS_CHECK_INTEQ(F.live_allocs(), baseline);
  char why[512];
  for (int i = 0; i < n; i++) {
    if (i < g->nwant && !TS_CHECK_INTEQ(out_diff(g, &o[i]->dl_tensor, g->want[i], why, sizeof why), 0))
      fprintf(stderr, "  output %d held over release: %s\n", i, why);
    o[i]->deleter(o[i]);
  }
}

/* 6. Two threads running the model on cuda at once. */
typedef struct thread_arg {
  gm *g;
  int runs, failed;
  bool device_inputs;
  char why[512];
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  for (int r = 0; r < a->runs; r++)
    if (gm_run_diff(a->g, a->device_inputs && r % 2 ? a->g->in_dev : a->g->m.in, true, a->why, sizeof a->why))
      a->failed++;
  return NULL;
}

static void test_threads(gm *g) {
  printf("6. %s from two threads on cuda\n", g->m.name);
  if (!TS_CHECK_INTEQ(g->m.f.set_device("cuda"), TSAOT_OK))
    return;
  tsaot_device_stats s0 = stats_of(g);
  gm_run_ok(g, g->m.in, true, "one run before the threads");
  tsaot_device_stats s1 = stats_of(g);
  thread_arg a[2] = {{.g = g, .runs = 12, .device_inputs = false}, {.g = g, .runs = 12, .device_inputs = true}};
  pthread_t t[2];
  int started = 0;
  for (int i = 0; i < 2; i++)
    if (TS_CHECK_INTEQ(pthread_create(&t[i], NULL, thread_main, &a[i]), 0))
      started++;
  for (int i = 0; i < started; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < started; i++)
    if (!TS_CHECK_INTEQ(a[i].failed, 0))
      fprintf(stderr, "  thread %d: %d runs failed, the last: %s\n", i, a[i].failed, a[i].why);
  /* every run made its launches and GEMMs: none fell back to the CPU */
  tsaot_device_stats s2 = stats_of(g);
  TS_CHECK_INTEQ(s2.kernel_launches - s1.kernel_launches, 24 * (s1.kernel_launches - s0.kernel_launches));
  TS_CHECK_INTEQ(s2.gemms - s1.gemms, 24 * (s1.gemms - s0.gemms));
  TS_CHECK_INTEQ(g->m.f.set_device("cpu"), TSAOT_OK);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: gpu_abi TSAOT FIXTURES WORKDIR LIBFAKE_CUDA LIBFAKE_CUBLAS\n");
    return 2;
  }
  const char *tsaot = argv[1], *fixtures = argv[2], *work = argv[3], *libcuda = argv[4];
  setenv("TSAOT_LIBCUDA", libcuda, 1);
  setenv("TSAOT_LIBCUBLAS", argv[5], 1);
  unsetenv("FAKE_CUDA_NO_DEVICE");
  if (!TS_CHECK(fake_open(libcuda)))
    return ts_test_finish();
  static gm mlp, libm, mlp_cpu;
  const char *gpu = "--device cuda --cuda-emulate";
  if (!TS_CHECK(gm_open(&mlp, tsaot, fixtures, work, "small_mlp", "gpu_mlp", gpu)) ||
      !TS_CHECK(gm_open(&libm, tsaot, fixtures, work, "pointwise_libm", "gpu_libm", gpu)) ||
      !TS_CHECK(gm_open(&mlp_cpu, tsaot, fixtures, work, "small_mlp", "cpu_mlp", NULL)))
    return ts_test_finish();
  /* the inputs copied to the device so far: not the models' */
  long callers = F.live_allocs();

  TS_CHECK_INTEQ(mlp.m.f.init(), TSAOT_OK);
  TS_CHECK(on_cpu(&mlp));
  /* a kDLCUDA input while on the CPU is refused */
  DLManagedTensor *o[GA_MAX_IO + 1];
  int n = -1;
  REFUSED(&mlp, mlp.m.f.run(mlp.in_dev, 1, o, GA_MAX_IO + 1, &n), TSAOT_E_INPUT, "only CPU tensors");
  TS_CHECK_INTEQ(n, 0);

  long before = F.live_allocs();
  test_set_device_errors(&mlp, &mlp_cpu, work, libcuda);
  TS_CHECK_INTEQ(F.live_allocs(), before);

  test_host_inputs(&mlp, 1, 2);
  test_device_inputs(&mlp);
  test_bailout(&mlp);
  test_run_static(&mlp);
  test_threads(&mlp);

  test_host_inputs(&libm, 2, 0);
  test_device_inputs(&libm);
  test_bailout(&libm);
  test_threads(&libm);
  test_run_static(&libm);

  /* libm is back on the CPU: its device memory went with the driver */
  TS_CHECK_INTEQ(F.live_allocs(), callers);
  test_repeat_release(&mlp, callers);
  test_repeat_release(&libm, callers);

  gm_close(&mlp);
  gm_close(&libm);
  gm_close(&mlp_cpu);
  TS_CHECK_INTEQ(F.live_allocs(), 0);
  return ts_test_finish();
}
