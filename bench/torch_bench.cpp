// bench/torch_bench.cpp: times a TorchScript model under libtorch, the peer
// tsaot is measured against (bench/run builds it with Debian's libtorch-dev).
//
//   torch_bench CASE_DIR|MODEL.pt [in0.npy ...] --threads N [--iters N]
//               [--warmup N] [--optimize] [--json]
//
// A CASE_DIR (the ../shared/zoo layout) stands for CASE_DIR/model.pt and its
// in0.npy, in1.npy ... in order. The model is loaded with torch::jit::load,
// put in eval mode and run under a NoGradGuard with at::set_num_threads(N)
// intra-op threads and one inter-op thread; --optimize runs it through
// torch::jit::optimize_for_inference first (which freezes the module). After
// warm-up runs, the timed runs give median and minimum latency.
//
// Without --optimize a fresh process (this program again, --cold-child) loads
// the model and runs it once: its time from spawn to first result and its
// peak resident memory are what a program that embeds libtorch would see,
// measured as tsaot-bench measures the compiled model's.
//
// Inputs are .npy files (little-endian bool, int8/16/32/64, uint8, float16,
// float32, float64); a 0-d int64, float64 or bool array is an int, float or
// bool argument, as the zoo's README says.
//
// Exit status: 0 success, 1 a model or input error, 2 a usage error.
#include <ATen/Parallel.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

namespace {

// Monotonic nanoseconds; the cold-start child prints this clock so the
// parent can subtract its spawn time (CLOCK_MONOTONIC is system-wide).
uint64_t tb_now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double tb_ms(uint64_t ns) { return (double)ns / 1e6; }

struct tb_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------ .npy

// The value of KEY in a .npy header dict ("'descr': '<f4', ..."), up to the
// next top-level comma or the closing brace.
std::string tb_npy_field(const std::string &hdr, const std::string &key, const std::string &path) {
  size_t p = hdr.find("'" + key + "'");
  if (p == std::string::npos)
    throw tb_error(path + ": .npy header has no '" + key + "'");
  p = hdr.find(':', p);
  if (p == std::string::npos)
    throw tb_error(path + ": malformed .npy header");
  size_t e = p + 1;
  int depth = 0;
  for (; e < hdr.size(); e++) {
    char c = hdr[e];
    if (c == '(')
      depth++;
    else if (c == ')')
      depth--;
    else if ((c == ',' && depth == 0) || (c == '}' && depth == 0))
      break;
  }
  std::string v = hdr.substr(p + 1, e - p - 1);
  size_t a = v.find_first_not_of(" \t"), b = v.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : v.substr(a, b - a + 1);
}

struct tb_npy_dtype {
  const char *descr;
  at::ScalarType type;
  size_t size;
};

const tb_npy_dtype tb_npy_dtypes[] = {
    {"<f4", at::kFloat, 4}, {"<f8", at::kDouble, 8}, {"<f2", at::kHalf, 2},  {"<i8", at::kLong, 8},
    {"<i4", at::kInt, 4},   {"<i2", at::kShort, 2},  {"|i1", at::kChar, 1},  {"|u1", at::kByte, 1},
    {"|b1", at::kBool, 1},  {"<u1", at::kByte, 1},   {"<i1", at::kChar, 1}, {"<b1", at::kBool, 1},
};

// One .npy file as a tensor (its own storage). The file is untrusted: the
// header length, rank, sizes and their product are bounded and the data
// must be exactly what the header promises.
at::Tensor tb_npy_read(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw tb_error(path + ": " + std::strerror(errno));
  std::string buf((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (buf.size() < 10 || buf.compare(0, 6, "\x93NUMPY") != 0)
    throw tb_error(path + ": not a .npy file");
  unsigned major = (unsigned char)buf[6];
  size_t hlen, hoff;
  if (major == 1) {
    hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
    hoff = 10;
  } else if (major == 2 || major == 3) {
    if (buf.size() < 12)
      throw tb_error(path + ": truncated .npy header");
    hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8 | (size_t)(unsigned char)buf[10] << 16 |
           (size_t)(unsigned char)buf[11] << 24;
    hoff = 12;
  } else {
    throw tb_error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (hlen > buf.size() - hoff)
    throw tb_error(path + ": truncated .npy header");
  std::string hdr = buf.substr(hoff, hlen);
  std::string descr = tb_npy_field(hdr, "descr", path);
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"'))
    descr = descr.substr(1, descr.size() - 2);
  const tb_npy_dtype *dt = nullptr;
  for (const auto &d : tb_npy_dtypes)
    if (descr == d.descr)
      dt = &d;
  if (!dt)
    throw tb_error(path + ": unsupported .npy dtype " + descr);
  bool fortran = tb_npy_field(hdr, "fortran_order", path) == "True";
  std::string shape = tb_npy_field(hdr, "shape", path);
  std::vector<int64_t> sizes;
  uint64_t numel = 1;
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] < '0' || shape[i] > '9') {
      i++;
      continue;
    }
    uint64_t v = 0;
    for (; i < shape.size() && shape[i] >= '0' && shape[i] <= '9'; i++) {
      v = v * 10 + (uint64_t)(shape[i] - '0');
      if (v > ((uint64_t)1 << 40))
        throw tb_error(path + ": .npy dimension too large");
    }
    if (sizes.size() >= 32)
      throw tb_error(path + ": .npy rank above 32");
    if (v && numel > ((uint64_t)1 << 40) / v)
      throw tb_error(path + ": .npy array too large");
    numel *= v;
    sizes.push_back((int64_t)v);
  }
  size_t doff = hoff + hlen;
  if (buf.size() - doff != numel * dt->size)
    throw tb_error(path + ": .npy data holds " + std::to_string(buf.size() - doff) + " bytes, the header says " +
                   std::to_string(numel * dt->size));
  auto opts = at::TensorOptions().dtype(dt->type);
  if (!fortran) {
    at::Tensor t = at::empty(sizes, opts);
    if (numel)
      std::memcpy(t.data_ptr(), buf.data() + doff, numel * dt->size);
    return t;
  }
  // column-major data: the transpose of a row-major array of reversed sizes
  std::vector<int64_t> rev(sizes.rbegin(), sizes.rend());
  at::Tensor t = at::empty(rev, opts);
  if (numel)
    std::memcpy(t.data_ptr(), buf.data() + doff, numel * dt->size);
  std::vector<int64_t> perm;
  for (int64_t d = (int64_t)rev.size() - 1; d >= 0; d--)
    perm.push_back(d);
  return t.permute(perm).contiguous();
}

// A forward argument: 0-d int64/float64/bool arrays are Python scalars.
c10::IValue tb_npy_arg(const std::string &path) {
  at::Tensor t = tb_npy_read(path);
  if (t.dim() == 0) {
    switch (t.scalar_type()) {
    case at::kLong:
      return c10::IValue(t.item<int64_t>());
    case at::kDouble:
      return c10::IValue(t.item<double>());
    case at::kBool:
      return c10::IValue(t.item<bool>());
    default:
      break;
    }
  }
  return c10::IValue(t);
}

bool tb_is_dir(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool tb_exists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// ------------------------------------------------------------- options

struct tb_opts {
  std::string model;
  std::vector<std::string> inputs;
  long threads = 1, iters = 0, warmup = 3;
  bool optimize = false, json = false;
};

void tb_usage(FILE *f) {
  std::fprintf(f,
               "usage: torch_bench CASE_DIR|MODEL.pt [in0.npy ...] --threads N [options]\n"
               "\n"
               "Times MODEL.pt's forward under libtorch %s (torch::jit::load, eval, no grad)\n"
               "on the inputs in0.npy ... and prints median and minimum latency; without\n"
               "--optimize also the time from process start to first result and the peak\n"
               "resident memory of a fresh process that loads the model and runs it once.\n"
               "A CASE_DIR stands for CASE_DIR/model.pt and its in0.npy, in1.npy ...\n"
               "\n"
               "  --threads N   intra-op threads (at::set_num_threads; one inter-op thread)\n"
               "  --iters N     timed runs (default: as many as the fastest warm-up run says fit\n"
               "                in about a second, stopping after about 3 s; at least 5)\n"
               "  --warmup N    untimed runs first (default 3)\n"
               "  --optimize    run torch::jit::optimize_for_inference (freezes) first\n"
               "  --json        one JSON object on stdout\n"
               "  -h, --help    this text\n"
               "\n"
               "Exit status: 0 success, 1 a model or input error, 2 a usage error.\n",
               TORCH_VERSION);
}

bool tb_parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = std::strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

// Fills o from argv; 0 to go on, else the exit status (2 for usage errors).
int tb_parse(int argc, char **argv, tb_opts &o) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      tb_usage(stdout);
      return -1;
    } else if (a == "--optimize") {
      o.optimize = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--threads" || a == "--iters" || a == "--warmup") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "torch_bench: %s needs a value\n", a.c_str());
        return 2;
      }
      long *dst = a == "--threads" ? &o.threads : a == "--iters" ? &o.iters : &o.warmup;
      long lo = a == "--warmup" ? 0 : 1, hi = a == "--threads" ? 1024 : 100000000;
      if (!tb_parse_long(argv[++i], lo, hi, dst)) {
        std::fprintf(stderr, "torch_bench: %s: expected an integer in [%ld, %ld], got '%s'\n", a.c_str(), lo, hi,
                     argv[i]);
        return 2;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "torch_bench: unknown option %s\n", a.c_str());
      tb_usage(stderr);
      return 2;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.empty()) {
    tb_usage(stderr);
    return 2;
  }
  if (tb_is_dir(pos[0])) {
    if (pos.size() > 1) {
      std::fprintf(stderr, "torch_bench: a case folder takes no input files (it has its own in*.npy)\n");
      return 2;
    }
    o.model = pos[0] + "/model.pt";
    for (int k = 0;; k++) {
      std::string p = pos[0] + "/in" + std::to_string(k) + ".npy";
      if (!tb_exists(p))
        break;
      o.inputs.push_back(p);
    }
  } else {
    o.model = pos[0];
    o.inputs.assign(pos.begin() + 1, pos.end());
  }
  return 0;
}

// ---------------------------------------------------------------- model

struct tb_model {
  torch::jit::Module m;
  std::vector<c10::IValue> args;
};

// Loads, evals and (with optimize) optimizes the model, and reads the inputs.
tb_model tb_load(const tb_opts &o, bool optimize, double *load_ms, double *optimize_ms) {
  tb_model r;
  uint64_t t0 = tb_now_ns();
  r.m = torch::jit::load(o.model);
  r.m.eval();
  uint64_t t1 = tb_now_ns();
  if (optimize)
    r.m = torch::jit::optimize_for_inference(r.m);
  uint64_t t2 = tb_now_ns();
  if (load_ms)
    *load_ms = tb_ms(t1 - t0);
  if (optimize_ms)
    *optimize_ms = tb_ms(t2 - t1);
  for (const auto &p : o.inputs)
    r.args.push_back(tb_npy_arg(p));
  return r;
}

// The number of outputs as the zoo flattens a result: tuples and lists of
// tensors depth first, a list of numbers one array.
int tb_count_leaves(const c10::IValue &v) {
  if (v.isTuple()) {
    int n = 0;
    for (const auto &e : v.toTupleRef().elements())
      n += tb_count_leaves(e);
    return n;
  }
  if (v.isList() && v.toListRef().size() > 0 && !v.toListRef()[0].isTensor() && !v.toListRef()[0].isTuple() &&
      !v.toListRef()[0].isList())
    return 1;
  if (v.isList()) {
    int n = 0;
    for (const auto &e : v.toListRef())
      n += tb_count_leaves(e);
    return n;
  }
  if (v.isGenericDict()) {
    int n = 0;
    for (const auto &kv : v.toGenericDict())
      n += tb_count_leaves(kv.value());
    return n;
  }
  return v.isNone() ? 0 : 1;
}

// torch_bench --cold-child MODEL.pt THREADS in0.npy ...: loads the model,
// runs it once and prints the monotonic time of the result (the parent
// subtracts its spawn time) with the load and run times.
int tb_cold_child(int argc, char **argv) {
  if (argc < 4)
    return 2;
  tb_opts o;
  o.model = argv[2];
  if (!tb_parse_long(argv[3], 1, 1024, &o.threads))
    return 2;
  for (int i = 4; i < argc; i++)
    o.inputs.push_back(argv[i]);
  try {
    at::set_num_interop_threads(1);
    at::set_num_threads((int)o.threads);
    torch::NoGradGuard no_grad;
    double load_ms = 0;
    tb_model md = tb_load(o, false, &load_ms, nullptr);
    uint64_t t0 = tb_now_ns();
    c10::IValue out = md.m.forward(md.args);
    uint64_t t1 = tb_now_ns();
    std::printf("first_result_ns=%" PRIu64 " load_ms=%.3f run_ms=%.3f\n", t1, load_ms, tb_ms(t1 - t0));
    std::fflush(stdout);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "torch_bench: cold start: %s\n", e.what());
    return 1;
  }
  return 0;
}

struct tb_cold {
  bool ok = false;
  double first_ms = 0, load_ms = 0, run_ms = 0;
  uint64_t peak_rss = 0;
};

// Runs this program again as --cold-child and measures it from spawn to
// first result; its peak memory is the child's ru_maxrss (getrusage of the
// children, one child).
tb_cold tb_cold_run(const tb_opts &o) {
  tb_cold r;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return r;
  self[n] = 0;
  std::string threads = std::to_string(o.threads);
  std::vector<char *> av = {self, (char *)"--cold-child", (char *)o.model.c_str(), (char *)threads.c_str()};
  for (const auto &p : o.inputs)
    av.push_back((char *)p.c_str());
  av.push_back(nullptr);
  int fd[2];
  if (pipe(fd) != 0)
    return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addclose(&fa, fd[1]);
  pid_t pid;
  uint64_t t0 = tb_now_ns();
  int rc = posix_spawn(&pid, self, &fa, nullptr, av.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    return r;
  }
  std::string out;
  char buf[512];
  ssize_t k;
  while ((k = read(fd[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
    if (k > 0 && out.size() < 4096)
      out.append(buf, (size_t)k);
  close(fd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  struct rusage ru;
  std::memset(&ru, 0, sizeof ru);
  getrusage(RUSAGE_CHILDREN, &ru);
  unsigned long long t1 = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      std::sscanf(out.c_str(), "first_result_ns=%llu load_ms=%lf run_ms=%lf", &t1, &r.load_ms, &r.run_ms) != 3)
    return r;
  r.first_ms = tb_ms(t1 - t0);
  r.peak_rss = (uint64_t)ru.ru_maxrss * 1024;
  r.ok = true;
  return r;
}

void tb_json_str(const std::string &s) {
  std::putchar('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      std::printf("\\%c", c);
    else if (c < 0x20)
      std::printf("\\u%04x", c);
    else
      std::putchar(c);
  }
  std::putchar('"');
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--cold-child") == 0)
    return tb_cold_child(argc, argv);
  tb_opts o;
  int prc = tb_parse(argc, argv, o);
  if (prc)
    return prc < 0 ? 0 : prc;
  if (!tb_exists(o.model)) {
    std::fprintf(stderr, "torch_bench: %s: no such file\n", o.model.c_str());
    return 1;
  }

  // the inter-op pool size can be set once, before anything starts it
  try {
    at::set_num_interop_threads(1);
  } catch (const std::exception &) {
  }
  at::set_num_threads((int)o.threads);
  torch::NoGradGuard no_grad;

  double load_ms = 0, optimize_ms = 0;
  tb_model md;
  try {
    md = tb_load(o, o.optimize, &load_ms, &optimize_ms);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "torch_bench: %s: %s\n", o.model.c_str(), e.what());
    return 1;
  }

  std::vector<uint64_t> times;
  int nout = 0;
  long iters = o.iters;
  try {
    // The fastest warm-up run sizes the default run count (about a
    // second): the first runs include the profiling executor's profiling
    // and optimization of the graph, and on a loaded machine a run can wait
    // for a descheduled pool thread.
    long nwarm = o.warmup > 0 ? o.warmup : 1;
    uint64_t per = UINT64_MAX;
    for (long i = 0; i < nwarm; i++) {
      uint64_t w0 = tb_now_ns();
      nout = tb_count_leaves(md.m.forward(md.args));
      per = std::min(per, tb_now_ns() - w0);
    }
    if (iters <= 0) {
      iters = per ? (long)(1000000000u / per) : 100000;
      iters = std::max(5L, std::min(iters, 100000L));
    }
    // an adaptive count stops after about three seconds, five runs at least
    uint64_t start = tb_now_ns();
    times.reserve((size_t)iters);
    for (long i = 0; i < iters; i++) {
      uint64_t t0 = tb_now_ns();
      c10::IValue out = md.m.forward(md.args);
      uint64_t t1 = tb_now_ns();
      times.push_back(t1 - t0);
      if (o.iters <= 0 && i >= 4 && t1 - start > 3000000000u)
        break;
    }
    iters = (long)times.size();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "torch_bench: %s: forward failed: %s\n", o.model.c_str(), e.what());
    return 1;
  }
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  double median = n % 2 ? tb_ms(times[n / 2]) : (tb_ms(times[n / 2 - 1]) + tb_ms(times[n / 2])) / 2;
  double min = tb_ms(times[0]);

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  uint64_t self_rss = (uint64_t)ru.ru_maxrss * 1024;
  tb_cold cold;
  if (!o.optimize)
    cold = tb_cold_run(o);

  if (o.json) {
    std::printf("{\"model\": ");
    tb_json_str(o.model);
    std::printf(", \"torch_version\": \"%s\", \"threads\": %ld, \"optimize\": %s, \"iters\": %ld, \"warmup\": %ld",
                TORCH_VERSION, o.threads, o.optimize ? "true" : "false", iters, o.warmup);
    std::printf(", \"median_ms\": %.6f, \"min_ms\": %.6f, \"load_ms\": %.3f", median, min, load_ms);
    if (o.optimize)
      std::printf(", \"optimize_ms\": %.3f", optimize_ms);
    if (cold.ok)
      std::printf(", \"first_result_ms\": %.3f, \"cold_load_ms\": %.3f, \"cold_run_ms\": %.3f"
                  ", \"peak_rss_bytes\": %" PRIu64,
                  cold.first_ms, cold.load_ms, cold.run_ms, cold.peak_rss);
    else
      std::printf(", \"first_result_ms\": null, \"peak_rss_bytes\": null");
    std::printf(", \"bench_peak_rss_bytes\": %" PRIu64 ", \"outputs\": %d}\n", self_rss, nout);
  } else {
    std::printf("%s (libtorch %s, %ld thread%s%s)\n", o.model.c_str(), TORCH_VERSION, o.threads,
                o.threads == 1 ? "" : "s", o.optimize ? ", optimize_for_inference" : "");
    std::printf("  median %.3f ms   min %.3f ms   (%ld runs after %ld warm-up)\n", median, min, iters, o.warmup);
    std::printf("  load %.1f ms", load_ms);
    if (o.optimize)
      std::printf("   optimize_for_inference %.1f ms", optimize_ms);
    std::printf("\n");
    if (cold.ok)
      std::printf("  fresh process: first result %.1f ms (load %.1f ms, first run %.1f ms), peak RSS %.1f MiB\n",
                  cold.first_ms, cold.load_ms, cold.run_ms, (double)cold.peak_rss / 1048576.0);
    else if (!o.optimize)
      std::printf("  fresh process: failed (no first-result time or peak memory)\n");
  }
  return 0;
}
