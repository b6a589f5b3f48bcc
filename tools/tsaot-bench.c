/* tools/tsaot-bench.c: times the reference interpreter and the compiled
 * model side by side, in one process, on the same inputs
 * (../shared/DESIGN.md, "Command-line contract").
 *
 *   tsaot-bench MODEL.pt ARG ... [--iters N] [--warmup N] [--threads N]
 *               [--compiled MODEL.so] [--profile] [--trace OUT.json] [--json]
 *               [--tsaot PATH] [--no-interp] [--keep DIR]
 *   tsaot-bench MODEL.so ARG ... [options]   (the compiled model alone)
 *
 * Without --compiled the model is compiled first, by the tsaot beside this
 * program (--example the arguments: .npy files, none, str:, [ ], ( ) as
 * tools/tool_util.h reads them), and the compile time is the wall time of
 * that run. A second process then loads the library and runs it once: its
 * time from start to first result and its peak resident memory are what a
 * program that embeds the model would see. Then, in this process, each side
 * runs warm-up iterations and timed ones; the table gives median and minimum
 * latency, their ratio, the arena, and whether the outputs agree.
 * --profile times every node on both sides (a clock read around each, so
 * the totals run a little above the plain timings) and prints a table per
 * op kind, fusion groups one by one. --trace runs each side once more with
 * every node run kept as an event (runtime/profile.c; NAME_profile(2) in a
 * library) and writes them as a Chrome trace.
 *
 * Exit status: 0 success, 1 a model, input or compile error, 2 a usage error.
 */
#define _DEFAULT_SOURCE /* wait4: the peak memory of one child, not of all */
#include "aot.h"
#include "cuda.h"
#include "loader.h"
#include "npy.h"
#include "runtime.h"
#include "so_load.h"
#include "tool_util.h"
#include "tsaot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void ts_bench_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-bench MODEL.pt [in0.npy ...] [options]\n"
          "       tsaot-bench MODEL.so [in0.npy ...] [options]\n"
          "\n"
          "Times MODEL.pt's forward in the reference interpreter and compiled by tsaot,\n"
          "in one process, on the arguments in0.npy ... (after self, in order; also none,\n"
          "str:TEXT, [ ARG ... ] and ( ARG ... ) as tsaot-run takes them), and prints\n"
          "median and minimum latency of each, their ratio, the compile time, the\n"
          "activation arena, the time from process start to first result and the peak\n"
          "resident memory of a process that runs the compiled model. Given a library\n"
          "that tsaot wrote (MODEL.so) instead, it times that compiled model alone, as\n"
          "--no-interp does, and says so.\n"
          "\n"
          "  --iters N          timed runs per side (default: as many as fit in about a\n"
          "                     second, at least 5)\n"
          "  --warmup N         untimed runs first (default 3)\n"
          "  --threads N        threads for the kernels, both sides (default 1)\n"
          "  --compiled M.so    time this library instead of compiling MODEL.pt\n"
          "  --tsaot PATH       the compiler (default: the tsaot beside tsaot-bench)\n"
          "  --keep DIR         keep the compiled library in DIR (default: a temporary\n"
          "                     folder, removed at exit)\n"
          "  --no-interp        time the compiled model only\n"
          "  --device cuda      compile with --device cuda and time the library on CUDA\n"
          "                     device 0 (NAME_set_device), with CUDA events around\n"
          "                     each run besides the wall clock; prints what ran where.\n"
          "                     Exit status 1 without a driver or a GPU\n"
          "  --profile          time every node and print where the time goes, per op\n"
          "                     kind, fusion groups one by one (a native group built per\n"
          "                     x86-64 level, tsaot's default, names the copy that ran:\n"
          "                     x86-64-v2, v3 or v4)\n"
          "  --trace OUT.json   after the timing, run once more on each side and write\n"
          "                     a Chrome trace (Trace Event Format; opens in Perfetto or\n"
          "                     chrome://tracing): pid 1 the interpreter, pid 2 the\n"
          "                     compiled model, a \"forward\" event around each run and\n"
          "                     one \"X\" event per node run (a fusion group named by\n"
          "                     the ops it fuses: \"mul+add\"), args the op, its source\n"
          "                     code/__torch__/...py:LINE where known, the output types\n"
          "                     (\"Float(4, 32)\") and, compiled, whether it ran natively;\n"
          "                     times in microseconds from the run's start (a clock read\n"
          "                     around each node, as --profile)\n"
          "  --json             one JSON object on stdout instead of the table\n"
          "  --version          tsaot's version and LLVM's\n"
          "  -h, --help         this text\n"
          "\n"
          "The JSON object has model, threads, iters, interp_median_ms, interp_min_ms,\n"
          "interp_p50_ms, interp_p90_ms, interp_p99_ms (percentiles of the timed runs,\n"
          "interpolated; p50 is the median), compiled_median_ms, compiled_min_ms,\n"
          "compiled_p50_ms, compiled_p90_ms, compiled_p99_ms (with --device cuda also\n"
          "gpu_event_median_ms, _min_ms, _p50_ms, _p90_ms, _p99_ms), ratio (interpreter /\n"
          "compiled, medians), compile_s, so_bytes, arena_bytes, first_result_ms,\n"
          "peak_rss_bytes (the process that ran the compiled model once),\n"
          "bench_peak_rss_bytes (this one), outputs, max_abs_diff, bailout,\n"
          "compiled_only (true when MODEL.so was given), and with --profile\n"
          "interp_profile and compiled_profile (rows of op, detail, native, isa (the\n"
          "copy that ran, or null), calls, ms per run).\n"
          "\n"
          "Exit status: 0 success, 1 a model, input or compile error, 2 a usage error.\n");
}

static double ts_bench_ms(uint64_t ns) { return (double)ns / 1e6; }

static int ts_bench_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Median and minimum of n samples (sorted in place). */
static void ts_bench_stats(uint64_t *t, int n, double *median, double *min) {
  qsort(t, (size_t)n, sizeof *t, ts_bench_cmp_u64);
  *min = ts_bench_ms(t[0]);
  *median = n % 2 ? ts_bench_ms(t[n / 2]) : (ts_bench_ms(t[n / 2 - 1]) + ts_bench_ms(t[n / 2])) / 2;
}

/* The q-th percentile (0..100) of n sorted samples, interpolated between
 * the two nearest ranks as numpy.percentile does by default: p50 is the
 * median above, and a percentile never lies outside the samples. */
static double ts_bench_pct(const uint64_t *t, int n, double q) {
  double pos = (double)(n - 1) * q / 100.0;
  int lo = (int)pos;
  if (lo >= n - 1)
    return ts_bench_ms(t[n - 1]);
  double f = pos - lo;
  return ts_bench_ms(t[lo]) * (1 - f) + ts_bench_ms(t[lo + 1]) * f;
}

static bool ts_bench_parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || end == s || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

/* ------------------------------------------------------ compiled models */

/* Opens a library tsaot wrote and loads its model; false after printing why. */
static bool ts_bench_so_open(const char *prog, const char *path, ts_tool_so *so) {
  char why[1024];
  if (!ts_tool_so_open(so, path, why, sizeof why)) {
    fprintf(stderr, "%s: error: %s\n", prog, why);
    return false;
  }
  if (so->init() != 0) {
    fprintf(stderr, "%s: error: %s: cannot load the model: %s\n", prog, path, so->last_error());
    return false;
  }
  return true;
}

typedef struct ts_bench_outs {
  DLManagedTensor **t;
  int n, cap;
} ts_bench_outs;

static void ts_bench_outs_clear(ts_bench_outs *o) {
  for (int k = 0; k < o->n; k++)
    if (o->t[k] && o->t[k]->deleter)
      o->t[k]->deleter(o->t[k]);
  o->n = 0;
}

/* One run of the library; outputs kept in o (the previous ones freed). */
static bool ts_bench_so_run(const char *prog, ts_tool_so *so, const DLTensor *in, int nin, ts_bench_outs *o) {
  ts_bench_outs_clear(o);
  int r = so->run(in, nin, o->t, o->cap, &o->n);
  if (r != 0) {
    o->n = 0;
    fprintf(stderr, "%s: error: the compiled model failed: %s\n", prog, so->last_error());
    return false;
  }
  return true;
}

/* --------------------------------------------------------- the inputs */

/* The arguments (tool_util.h's words: .npy files, none, str:, [ ], ( ))
 * and their slots as DLTensors (include/tsaot.h). */
typedef struct ts_bench_inputs {
  ts_tool_arg *args;
  uint32_t nargs;
  ts_tool_slots slots;
  DLTensor *dl;
  int n;   /* slots */
  bool words; /* every argument one .npy: one slot each, as in ABI 1 */
} ts_bench_inputs;

static bool ts_bench_inputs_read(const char *prog, ts_rt_ctx *ctx, const char *const *words, int n,
                                 ts_bench_inputs *in) {
  char why[256];
  if (!ts_tool_args_parse(words, (uint32_t)n, &in->args, &in->nargs, why, sizeof why)) {
    fprintf(stderr, "%s: error: the arguments: %s\n", prog, why);
    return false;
  }
  if (!ts_tool_slots_make(ctx, in->args, in->nargs, &in->slots)) {
    fprintf(stderr, "%s: error: %s\n", prog, ctx->err.data ? ctx->err.data : "out of memory");
    return false;
  }
  in->n = (int)in->slots.n;
  if (!(in->dl = calloc((size_t)in->n + 1, sizeof *in->dl))) {
    fprintf(stderr, "%s: error: out of memory\n", prog);
    return false;
  }
  in->words = true;
  for (uint32_t k = 0; k < in->nargs; k++)
    in->words = in->words && in->args[k].kind == TS_TOOL_ARG_WORD;
  for (int k = 0; k < in->n; k++) {
    if (!in->slots.t[k])
      in->dl[k] = tsaot_none();
    else if (!ts_rt_tensor_to_dl(in->slots.t[k], &in->dl[k])) {
      fprintf(stderr, "%s: error: %s: unsupported dtype\n", prog, in->slots.word[k]);
      return false;
    }
  }
  return true;
}

static void ts_bench_inputs_free(ts_bench_inputs *in) {
  ts_tool_slots_free(&in->slots);
  ts_tool_args_free(in->args, in->nargs);
  free(in->dl);
}

/* ---------------------------------------------- the cold-start process */

/* tsaot-bench --cold-start M.so THREADS ARG ...: loads the library, runs
 * it once and prints the monotonic clock at the first result (the parent
 * took it before starting this process) and the three steps' times. */
static int ts_bench_cold(int argc, char **argv) {
  uint64_t t0 = ts_rt_now_ns();
  if (argc < 4)
    return 2;
  long threads;
  if (!ts_bench_parse_int(argv[3], 1, 1024, &threads))
    return 2;
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_bench_inputs in = {0};
  ts_tool_so so;
  ts_bench_outs o = {0};
  int rc = 1;
  if (!ts_bench_inputs_read("tsaot-bench", &ctx, (const char *const *)argv + 4, argc - 4, &in))
    goto out;
  uint64_t t1 = ts_rt_now_ns();
  if (!ts_bench_so_open("tsaot-bench", argv[2], &so))
    goto out;
  so.set_threads((int)threads);
  uint64_t t2 = ts_rt_now_ns();
  o.cap = so.num_outputs() >= 0 ? so.num_outputs() : 4096;
  if (!(o.t = calloc((size_t)o.cap + 1, sizeof *o.t)))
    goto out;
  if (!ts_bench_so_run("tsaot-bench", &so, in.dl, in.n, &o))
    goto out;
  uint64_t t3 = ts_rt_now_ns();
  printf("first_result_ns=%llu read_ms=%.3f load_ms=%.3f run_ms=%.3f\n", (unsigned long long)t3,
         ts_bench_ms(t1 - t0), ts_bench_ms(t2 - t1), ts_bench_ms(t3 - t2));
  rc = 0;
out:
  ts_bench_outs_clear(&o);
  free(o.t);
  ts_bench_inputs_free(&in);
  ts_rt_ctx_free(&ctx);
  return rc;
}

typedef struct ts_bench_coldres {
  double first_ms, load_ms, run_ms;
  uint64_t peak_rss;
} ts_bench_coldres;

/* Runs a command; its stdout in *out (malloc'd) when out is not NULL, its
 * stderr passed through, or given to on_line line by line. Returns the exit
 * status, 128 + the signal that killed it, or -1 when it did not start
 * (errno says why); rusage of the child. */
typedef void (*ts_bench_line_fn)(void *arg, const char *line);

static int ts_bench_spawn(char *const *argv, char **out, ts_bench_line_fn on_line, void *arg, struct rusage *ru) {
  int po[2] = {-1, -1}, pe[2] = {-1, -1};
  if ((out && pipe(po) != 0) || (on_line && pipe(pe) != 0))
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out) {
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_addclose(&fa, po[0]);
  }
  if (on_line) {
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawn_file_actions_addclose(&fa, pe[0]);
  }
  pid_t pid;
  int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (out)
    close(po[1]);
  if (on_line)
    close(pe[1]);
  if (e != 0) {
    if (out)
      close(po[0]);
    if (on_line)
      close(pe[0]);
    errno = e;
    return -1;
  }
  /* stderr lines as they come (progress), then stdout (small) */
  if (on_line) {
    FILE *f = fdopen(pe[0], "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      on_line(arg, line);
    }
    if (f)
      fclose(f);
    else
      close(pe[0]);
  }
  if (out) {
    size_t n = 0, cap = 4096;
    char *b = malloc(cap);
    ssize_t r;
    while (b && (r = read(po[0], b + n, cap - n - 1)) > 0) {
      n += (size_t)r;
      if (cap - n < 2) {
        char *nb = realloc(b, cap *= 2);
        if (!nb) {
          free(b);
          b = NULL;
        } else
          b = nb;
      }
    }
    close(po[0]);
    if (b)
      b[n] = 0;
    *out = b;
  }
  int status;
  if (wait4(pid, &status, 0, ru) != pid)
    return -1;
  if (WIFSIGNALED(status)) {
    errno = 0;
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool ts_bench_cold_run(const char *self, const char *so, int threads, char *const *inputs, int ninputs,
                              ts_bench_coldres *res) {
  char **av = calloc((size_t)ninputs + 6, sizeof *av);
  char tbuf[32];
  if (!av)
    return false;
  snprintf(tbuf, sizeof tbuf, "%d", threads);
  av[0] = (char *)self;
  av[1] = "--cold-start";
  av[2] = (char *)so;
  av[3] = tbuf;
  for (int k = 0; k < ninputs; k++)
    av[4 + k] = inputs[k];
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  char *out = NULL;
  uint64_t t0 = ts_rt_now_ns();
  int rc = ts_bench_spawn(av, &out, NULL, NULL, &ru);
  free(av);
  unsigned long long t1 = 0;
  bool ok = rc == 0 && out &&
            sscanf(out, "first_result_ns=%llu read_ms=%*f load_ms=%lf run_ms=%lf", &t1, &res->load_ms,
                   &res->run_ms) == 3;
  free(out);
  if (!ok)
    return false;
  res->first_ms = ts_bench_ms(t1 - t0);
  res->peak_rss = (uint64_t)ru.ru_maxrss * 1024;
  return true;
}

/* -------------------------------------------------------------- compile */

typedef struct ts_bench_progress {
  bool tty;
  bool quiet;
  int width;
  char last[512];
} ts_bench_progress;

/* tsaot -v's lines: the step in progress on one rewritten line (a
 * terminal) or one line each. */
static void ts_bench_on_line(void *arg, const char *line) {
  ts_bench_progress *p = arg;
  snprintf(p->last, sizeof p->last, "%s", line);
  if (p->quiet && strncmp(line, "tsaot: ", 7) == 0)
    return;
  if (p->tty) {
    int n = (int)strlen(line);
    if (n > 100)
      n = 100;
    fprintf(stderr, "\r  %.*s%*s", n, line, p->width > n ? p->width - n : 0, "");
    p->width = n;
  } else
    fprintf(stderr, "  %s\n", line);
  fflush(stderr);
}

/* The tsaot beside this program: /proc/self/exe's folder. */
static bool ts_bench_find_tsaot(char *buf, size_t cap, char *self, size_t selfcap) {
  ssize_t n = readlink("/proc/self/exe", self, selfcap - 1);
  if (n <= 0)
    return false;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (!slash)
    return false;
  snprintf(buf, cap, "%.*s/tsaot", (int)(slash - self), self);
  return access(buf, X_OK) == 0;
}

/* --------------------------------------------------------- the profile */

typedef struct ts_bench_row {
  char *op, *detail;
  int native;
  double calls, ms; /* per run */
} ts_bench_row;

typedef struct ts_bench_prof {
  ts_bench_row *rows;
  int n;
  double total_ms; /* per run, all nodes */
} ts_bench_prof;

static void ts_bench_prof_free(ts_bench_prof *p) {
  for (int i = 0; i < p->n; i++) {
    free(p->rows[i].op);
    free(p->rows[i].detail);
  }
  free(p->rows);
  p->rows = NULL;
  p->n = 0;
}

static char *ts_bench_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *r = malloc(n);
  if (r)
    memcpy(r, s, n);
  return r;
}

/* Adds a node's time: fusion groups one row each, other nodes one row
 * per kind. */
static bool ts_bench_prof_add(ts_bench_prof *p, const char *op, const char *detail, int native, double calls,
                              double ms) {
  bool group = detail && detail[0];
  for (int i = 0; !group && i < p->n; i++)
    if (!p->rows[i].detail[0] && strcmp(p->rows[i].op, op) == 0) {
      p->rows[i].calls += calls;
      p->rows[i].ms += ms;
      p->total_ms += ms;
      return true;
    }
  ts_bench_row *r = realloc(p->rows, ((size_t)p->n + 1) * sizeof *r);
  if (!r)
    return false;
  p->rows = r;
  r = &p->rows[p->n];
  r->op = ts_bench_strdup(op);
  r->detail = ts_bench_strdup(detail ? detail : "");
  if (!r->op || !r->detail) {
    free(r->op);
    free(r->detail);
    return false;
  }
  r->native = native;
  r->calls = calls;
  r->ms = ms;
  p->total_ms += ms;
  p->n++;
  return true;
}

static int ts_bench_row_cmp(const void *a, const void *b) {
  const ts_bench_row *x = a, *y = b;
  return x->ms > y->ms ? -1 : x->ms < y->ms;
}

static void ts_bench_prof_print(const char *title, const ts_bench_prof *p, double run_ms) {
  printf("\n%s: %.3f ms per run in nodes, %.3f ms per run in all (the rest: the entry path, "
         "slots, allocation)\n",
         title, p->total_ms, run_ms);
  printf("  %8s %6s %9s  %s\n", "ms/run", "%", "calls/run", "op");
  for (int i = 0; i < p->n; i++) {
    const ts_bench_row *r = &p->rows[i];
    printf("  %8.3f %6.1f %9.1f  %s%s%s%s%s%s%s\n", r->ms, run_ms > 0 ? 100.0 * r->ms / run_ms : 0.0, r->calls, r->op,
           r->detail[0] ? " [" : "", r->detail, r->detail[0] ? "]" : "",
           r->detail[0] ? (r->native ? " native" : " interpreted") : "", r->native >= 2 ? " " : "",
           r->native >= 2 ? ts_rt_cpu_level_name(r->native) : "");
  }
}

static void ts_bench_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void ts_bench_prof_json(FILE *f, const ts_bench_prof *p) {
  fputc('[', f);
  for (int i = 0; i < p->n; i++) {
    const ts_bench_row *r = &p->rows[i];
    fprintf(f, "%s{\"op\": ", i ? ", " : "");
    ts_bench_json_str(f, r->op);
    fprintf(f, ", \"detail\": ");
    ts_bench_json_str(f, r->detail);
    fprintf(f, ", \"native\": %s, \"isa\": ", r->native ? "true" : "false");
    if (r->native >= 2)
      ts_bench_json_str(f, ts_rt_cpu_level_name(r->native));
    else
      fputs("null", f);
    fprintf(f, ", \"calls\": %.2f, \"ms\": %.6f}", r->calls, r->ms);
  }
  fputc(']', f);
}

/* ------------------------------------------------------------ the trace */

/* The Chrome trace (Trace Event Format) of one run per side: a "run" event
 * around each side's forward and one complete ("X") event per node run,
 * timestamps in microseconds from that run's start. pid 1 is the
 * interpreter, pid 2 the compiled model. */
typedef struct ts_bench_trace {
  FILE *f;
  int nevents; /* written so far, metadata too */
} ts_bench_trace;

static void ts_bench_trace_sep(ts_bench_trace *t) { fputs(t->nevents++ ? ",\n" : "\n", t->f); }

static void ts_bench_trace_process(ts_bench_trace *t, int pid, const char *name) {
  ts_bench_trace_sep(t);
  fprintf(t->f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": {\"name\": ", pid);
  ts_bench_json_str(t->f, name);
  fputs("}}", t->f);
}

/* The whole forward: [0, ns); dropped: node runs past the trace's bound,
 * -1 when not known (a library tells only that it reached the bound). */
static void ts_bench_trace_run(ts_bench_trace *t, int pid, uint64_t ns, int nodes, long long dropped) {
  ts_bench_trace_sep(t);
  fprintf(t->f,
          "{\"name\": \"forward\", \"cat\": \"run\", \"ph\": \"X\", \"ts\": 0, \"dur\": %.3f, \"pid\": %d, "
          "\"tid\": 1, \"args\": {\"nodes\": %d, \"dropped\": ",
          (double)ns / 1e3, pid, nodes);
  if (dropped >= 0)
    fprintf(t->f, "%lld}}", dropped);
  else
    fputs("null}}", t->f);
}

/* A node run: op its kind, detail the three tab-separated fields of
 * ts_rt_profile_event_detail (fused ops, source, output types). A fusion
 * group's event is named by the ops it fuses. */
static void ts_bench_trace_node(ts_bench_trace *t, int pid, const char *op, const char *detail, int native,
                                bool compiled, uint64_t start, uint64_t ns) {
  const char *tab1 = strchr(detail, '\t');
  const char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
  if (!tab2)
    return;
  char *ops = NULL, *src = NULL;
  size_t n1 = (size_t)(tab1 - detail), n2 = (size_t)(tab2 - tab1 - 1);
  if (!(ops = malloc(n1 + 1)) || !(src = malloc(n2 + 1))) {
    free(ops);
    return;
  }
  memcpy(ops, detail, n1);
  ops[n1] = 0;
  memcpy(src, tab1 + 1, n2);
  src[n2] = 0;
  ts_bench_trace_sep(t);
  fputs("{\"name\": ", t->f);
  ts_bench_json_str(t->f, ops[0] ? ops : op);
  fprintf(t->f, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": 1, \"args\": {\"op\": ",
          ops[0] ? "fusion" : "node", (double)start / 1e3, (double)ns / 1e3, pid);
  ts_bench_json_str(t->f, op);
  if (src[0]) {
    fputs(", \"source\": ", t->f);
    ts_bench_json_str(t->f, src);
  }
  fputs(", \"outputs\": [", t->f);
  /* the output types, "; " between them */
  const char *o = tab2 + 1;
  for (int k = 0; *o; k++) {
    const char *e = strstr(o, "; ");
    size_t len = e ? (size_t)(e - o) : strlen(o);
    char *one = malloc(len + 1);
    if (one) {
      memcpy(one, o, len);
      one[len] = 0;
      fputs(k ? ", " : "", t->f);
      ts_bench_json_str(t->f, one);
      free(one);
    }
    o += len + (e ? 2 : 0);
  }
  fputc(']', t->f);
  if (compiled) {
    fprintf(t->f, ", \"native\": %s", native ? "true" : "false");
    if (native >= 2) {
      fputs(", \"isa\": ", t->f);
      ts_bench_json_str(t->f, ts_rt_cpu_level_name(native));
    }
  }
  fputs("}}", t->f);
  free(ops);
  free(src);
}

/* --------------------------------------------------------- comparison */

typedef struct ts_bench_flat {
  ts_rt_tensor **t;
  int n, cap;
} ts_bench_flat;

static bool ts_bench_flat_add(void *arg, ts_rt_tensor *t, ts_iv v) {
  (void)v;
  ts_bench_flat *f = arg;
  if (!t)
    return true;
  if (f->n == f->cap) {
    int cap = f->cap ? f->cap * 2 : 8;
    ts_rt_tensor **nt = realloc(f->t, (size_t)cap * sizeof *nt);
    if (!nt)
      return false;
    f->t = nt;
    f->cap = cap;
  }
  ts_rt_tensor_retain(t);
  f->t[f->n++] = t;
  return true;
}

/* Largest |a - b| over two tensors of the same shape, as doubles; NAN when
 * the shapes or dtypes differ. */
static double ts_bench_diff(ts_rt_ctx *ctx, ts_rt_tensor *a, ts_rt_tensor *b) {
  if (a->ndim != b->ndim || a->dtype != b->dtype)
    return NAN;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d])
      return NAN;
  ts_rt_tensor *x = ts_rt_tensor_to_dtype(ctx, a, TS_DT_FLOAT64), *y = ts_rt_tensor_to_dtype(ctx, b, TS_DT_FLOAT64);
  double worst = (x && y) ? 0 : NAN;
  if (x && y) {
    ts_rt_tensor *xc = ts_rt_tensor_contiguous(ctx, x), *yc = ts_rt_tensor_contiguous(ctx, y);
    if (xc && yc) {
      const double *p = ts_rt_tensor_data(xc), *q = ts_rt_tensor_data(yc);
      int64_t n = ts_rt_tensor_numel(xc);
      for (int64_t i = 0; i < n; i++) {
        double dd = fabs(p[i] - q[i]);
        if (isnan(p[i]) != isnan(q[i]))
          dd = INFINITY;
        if (dd > worst)
          worst = dd;
      }
    } else
      worst = NAN;
    if (xc)
      ts_rt_tensor_release(xc);
    if (yc)
      ts_rt_tensor_release(yc);
  }
  if (x)
    ts_rt_tensor_release(x);
  if (y)
    ts_rt_tensor_release(y);
  return worst;
}

/* ------------------------------------------------------- bandwidth */

typedef struct ts_bench_copy {
  uint8_t *dst;
  const uint8_t *src;
} ts_bench_copy;

#define TS_BENCH_COPY_BLOCK 65536

static void ts_bench_copy_range(void *arg, int64_t b, int64_t e) {
  ts_bench_copy *c = arg;
  memcpy(c->dst + b * TS_BENCH_COPY_BLOCK, c->src + b * TS_BENCH_COPY_BLOCK, (size_t)(e - b) * TS_BENCH_COPY_BLOCK);
}

/* A copy loop's bandwidth (bytes read + written per second), on the run's
 * threads, moving `bytes` per copy as the model moves its inputs and
 * outputs: the yardstick for a memory-bound model. 0 if out of memory. */
static double ts_bench_copy_gbps(ts_rt_ctx *ctx, uint64_t bytes) {
  int64_t blocks = (int64_t)((bytes / 2 + TS_BENCH_COPY_BLOCK - 1) / TS_BENCH_COPY_BLOCK);
  if (blocks < 1)
    blocks = 1;
  size_t n = (size_t)blocks * TS_BENCH_COPY_BLOCK;
  uint8_t *a = malloc(n), *b = malloc(n);
  double best = 0;
  if (a && b) {
    memset(a, 1, n);
    memset(b, 2, n);
    ts_bench_copy c = {.dst = b, .src = a};
    uint64_t t[15];
    for (int i = 0; i < 15; i++) {
      uint64_t t0 = ts_rt_now_ns();
      ts_rt_parallel_for(ctx, blocks, 1, ts_bench_copy_range, &c);
      t[i] = ts_rt_now_ns() - t0;
    }
    double med, min;
    ts_bench_stats(t, 15, &med, &min);
    best = med > 0 ? 2.0 * (double)n / (med * 1e6) : 0;
  }
  free(a);
  free(b);
  return best;
}

static uint64_t ts_bench_dl_bytes(const DLTensor *t) {
  if (tsaot_is_none(t))
    return 0;
  uint64_t n = (uint64_t)(t->dtype.bits * t->dtype.lanes + 7) / 8;
  for (int d = 0; d < t->ndim; d++)
    n *= (uint64_t)t->shape[d];
  return n;
}

/* ----------------------------------------------------------------- main */

typedef struct ts_bench_opts {
  const char *model, *compiled, *tsaot, *keep, *device, *trace;
  const char **inputs;
  int ninputs;
  long iters, warmup, threads;
  bool profile, json, no_interp;
} ts_bench_opts;

typedef struct ts_bench_side {
  bool ran;
  int iters;
  double median_ms, min_ms;
  double pct_ms[3]; /* p50, p90, p99 */
} ts_bench_side;

static const double ts_bench_pcts[3] = {50, 90, 99};

/* The side's statistics from its n samples (sorted in place). */
static void ts_bench_side_stats(ts_bench_side *s, uint64_t *t, int n) {
  ts_bench_stats(t, n, &s->median_ms, &s->min_ms);
  for (int i = 0; i < 3; i++)
    s->pct_ms[i] = ts_bench_pct(t, n, ts_bench_pcts[i]);
}

/* ", "NAME_p50_ms": ..., p90, p99, or nulls. */
static void ts_bench_json_pcts(FILE *f, const char *name, const ts_bench_side *s) {
  for (int i = 0; i < 3; i++) {
    fprintf(f, ", \"%s_p%d_ms\": ", name, (int)ts_bench_pcts[i]);
    if (s && s->ran)
      fprintf(f, "%.6f", s->pct_ms[i]);
    else
      fputs("null", f);
  }
}

/* MODEL is a library (a name ending in .so, or an ELF file), not a .pt. */
static bool ts_bench_is_so(const char *path) {
  size_t n = strlen(path);
  if (n >= 3 && strcmp(path + n - 3, ".so") == 0)
    return true;
  unsigned char magic[4] = {0};
  FILE *f = fopen(path, "rb");
  bool elf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0;
  if (f)
    fclose(f);
  return elf;
}

/* Iterations for about a second of runs, from the warm-up's times. */
static int ts_bench_iters(const ts_bench_opts *o, uint64_t warm_ns, int nwarm) {
  if (o->iters > 0)
    return (int)o->iters;
  double per = nwarm > 0 ? (double)warm_ns / nwarm : 1e6;
  double n = 1e9 / (per > 1 ? per : 1);
  return n < 5 ? 5 : n > 100000 ? 100000 : (int)n;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--cold-start") == 0)
    return ts_bench_cold(argc, argv);
  const char *prog = "tsaot-bench";
  ts_bench_opts o = {.iters = 0, .warmup = 3, .threads = 1};
  o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
  if (!o.inputs) {
    fprintf(stderr, "%s: error: out of memory\n", prog);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      ts_tool_print_version("tsaot-bench");
      free(o.inputs);
      return 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      ts_bench_usage(stdout);
      free(o.inputs);
      return 0;
    } else if (!strcmp(a, "--profile")) {
      o.profile = true;
    } else if (!strcmp(a, "--json")) {
      o.json = true;
    } else if (!strcmp(a, "--no-interp")) {
      o.no_interp = true;
    } else if (!strcmp(a, "--iters") || !strcmp(a, "--warmup") || !strcmp(a, "--threads") ||
               !strcmp(a, "--compiled") || !strcmp(a, "--tsaot") || !strcmp(a, "--keep") || !strcmp(a, "--device") ||
               !strcmp(a, "--trace")) {
      if (++i == argc) {
        fprintf(stderr, "%s: error: %s needs a value\n", prog, a);
        free(o.inputs);
        return 2;
      }
      const char *v = argv[i];
      bool ok = true;
      if (!strcmp(a, "--iters"))
        ok = ts_bench_parse_int(v, 1, 100000000, &o.iters);
      else if (!strcmp(a, "--warmup"))
        ok = ts_bench_parse_int(v, 0, 100000000, &o.warmup);
      else if (!strcmp(a, "--threads"))
        ok = ts_bench_parse_int(v, 1, 1024, &o.threads);
      else if (!strcmp(a, "--compiled"))
        o.compiled = v;
      else if (!strcmp(a, "--tsaot"))
        o.tsaot = v;
      else if (!strcmp(a, "--trace"))
        o.trace = v;
      else if (!strcmp(a, "--device")) {
        o.device = v;
        if (strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0) {
          fprintf(stderr, "%s: error: --device wants cpu or cuda, got '%s'\n", prog, v);
          free(o.inputs);
          return 2;
        }
      }
      else
        o.keep = v;
      if (!ok) {
        fprintf(stderr, "%s: error: %s wants a whole number (%s), got '%s'\n", prog, a,
                !strcmp(a, "--threads") ? "1 to 1024" : !strcmp(a, "--warmup") ? "0 or more" : "1 or more", v);
        free(o.inputs);
        return 2;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "%s: error: unknown option '%s' (tsaot-bench --help lists them)\n", prog, a);
      free(o.inputs);
      return 2;
    } else if (!o.model)
      o.model = a;
    else
      o.inputs[o.ninputs++] = a;
  }
  if (!o.model) {
    ts_bench_usage(stderr);
    free(o.inputs);
    return 2;
  }
  /* a library alone: the compiled model is all there is to time */
  bool so_only = ts_bench_is_so(o.model);
  if (so_only) {
    if (o.compiled) {
      fprintf(stderr, "%s: error: %s is a compiled library already; --compiled wants a MODEL.pt first\n", prog,
              o.model);
      free(o.inputs);
      return 2;
    }
    o.compiled = o.model;
    o.no_interp = true;
  }
  /* --device cuda: the driver first (a host without one gets the reason
   * before any compiling); its events time the runs */
  bool cuda = o.device && !strcmp(o.device, "cuda");
  ts_rt_cuda cu = {0};
  ts_cu_handle ev0 = NULL, ev1 = NULL;
  ts_bench_side gpu = {0}; /* CUDA events around the compiled runs */
  tsaot_device_stats dstats = {0};
  if (cuda) {
    ts_buf why = {0};
    if (!ts_rt_cuda_open(&cu, 0, &why) || !ts_rt_cuda_event_pair(&cu, &ev0, &ev1, &why)) {
      fprintf(stderr, "%s: error: --device cuda: %s\n", prog, why.data ? why.data : "out of memory");
      ts_buf_free(&why);
      ts_rt_cuda_close(&cu);
      free(o.inputs);
      return 1;
    }
    ts_buf_free(&why);
  }

  int rc = 1;
  char self[PATH_MAX] = "", tsaot[PATH_MAX] = "", tmpdir[] = "/tmp/tsaot-bench-XXXXXX", sopath[PATH_MAX] = "";
  bool made_tmp = false;
  double compile_s = -1;
  ts_bench_progress prog_state = {.tty = isatty(2) != 0};
  ts_diag d = {0};
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, (int)o.threads);
  ts_bench_inputs in = {0};
  ts_rt_model *m = NULL;
  ts_iv *args = NULL, iret = ts_iv_none();
  uint32_t nargs = 0;
  bool have_iret = false;
  ts_tool_so so = {0};
  ts_bench_outs outs = {0};
  uint64_t *times = NULL;
  ts_bench_side interp = {0}, comp = {0};
  ts_bench_coldres cold = {0};
  bool have_cold = false;
  ts_bench_prof iprof = {0}, cprof = {0};
  ts_bench_flat flat = {0};
  double max_diff = 0, copy_gbps = 0;
  uint64_t bytes_moved = 0;
  bool diff_known = false;
  int bailout = 0;
  struct stat sost;

  ts_bench_trace trace = {0};
  /* the trace's file first: a path that cannot be written fails before any
   * compiling; a file this run made is removed if it fails (not a device
   * or a file that was there) */
  bool trace_made = o.trace && access(o.trace, F_OK) != 0;
  if (o.trace && !(trace.f = fopen(o.trace, "w"))) {
    fprintf(stderr, "%s: %s: %s\n", prog, o.trace, strerror(errno));
    goto out;
  }

  ts_bench_find_tsaot(tsaot, sizeof tsaot, self, sizeof self);
  if (o.tsaot)
    snprintf(tsaot, sizeof tsaot, "%s", o.tsaot);
  if (!ts_bench_inputs_read(prog, &ctx, o.inputs, o.ninputs, &in))
    goto out;

  /* ---- compile */
  if (o.compiled) {
    snprintf(sopath, sizeof sopath, "%s", o.compiled);
  } else {
    const char *dir = o.keep;
    if (!dir) {
      if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "%s: error: cannot make a temporary folder: %s\n", prog, strerror(errno));
        goto out;
      }
      made_tmp = true;
      dir = tmpdir;
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "%s: error: %s: %s\n", prog, dir, strerror(errno));
      goto out;
    }
    snprintf(sopath, sizeof sopath, "%s/model.so", dir);
    if (!tsaot[0] || access(tsaot, X_OK) != 0) {
      fprintf(stderr, "%s: error: cannot find the compiler tsaot beside this program; give it with --tsaot PATH\n", prog);
      goto out;
    }
    char **av = calloc((size_t)o.ninputs + 9, sizeof *av);
    if (!av) {
      fprintf(stderr, "%s: error: out of memory\n", prog);
      goto out;
    }
    int na = 0;
    av[na++] = tsaot;
    av[na++] = (char *)o.model;
    if (o.ninputs)
      av[na++] = "--example";
    for (int k = 0; k < o.ninputs; k++)
      av[na++] = (char *)o.inputs[k];
    av[na++] = "-o";
    av[na++] = sopath;
    av[na++] = "-v";
    if (cuda) {
      av[na++] = "--device";
      av[na++] = "cuda";
    }
    fprintf(stderr, "%s: compiling %s\n", prog, o.model);
    uint64_t t0 = ts_rt_now_ns();
    int crc = ts_bench_spawn(av, NULL, ts_bench_on_line, &prog_state, NULL);
    compile_s = (double)(ts_rt_now_ns() - t0) / 1e9;
    free(av);
    if (prog_state.tty)
      fprintf(stderr, "\r%*s\r", prog_state.width + 2, "");
    if (crc != 0) {
      if (crc > 128)
        fprintf(stderr, "%s: compiling %s failed: %s was killed by signal %d (%s)\n", prog, o.model, tsaot,
                crc - 128, strsignal(crc - 128));
      else
        fprintf(stderr, "%s: compiling %s failed%s%s\n", prog, o.model, crc < 0 ? ": " : "",
                crc < 0 ? strerror(errno) : "");
      if (crc > 0 && prog_state.tty && prog_state.last[0])
        fprintf(stderr, "%s\n", prog_state.last);
      goto out;
    }
    fprintf(stderr, "%s: compiled in %.2f s\n", prog, compile_s);
  }

  /* ---- a fresh process: start to first result, peak memory */
  /* self: this program, found with the compiler above */
  if (self[0] && !cuda) {
    have_cold = ts_bench_cold_run(self, sopath, (int)o.threads, (char *const *)o.inputs, o.ninputs, &cold);
    if (!have_cold)
      fprintf(stderr, "%s: note: the cold-start process failed; no first-result time or peak memory\n", prog);
  }

  /* ---- the interpreter */
  if (!o.no_interp) {
    if (!(m = ts_rt_model_load(o.model, &d))) {
      if (!ts_tool_explain_not_torchscript("tsaot-bench", o.model))
        ts_tool_diag_print("tsaot-bench", d.text.data, "cannot load the model");
      goto out;
    }
    ts_graph *g = ts_rt_model_graph(m, "forward", &d);
    if (!g) {
      ts_tool_diag_print("tsaot-bench", d.text.data, "cannot compile forward");
      goto out;
    }
    uint32_t nparams = ts_block_ninputs(g->block) - 1;
    if (in.nargs > nparams) {
      fprintf(stderr, "%s: error: %s: forward takes %u argument%s, %u given\n", prog, o.model, (unsigned)nparams,
              nparams == 1 ? "" : "s", in.nargs);
      goto out;
    }
    if (!(args = calloc((size_t)in.nargs + 1, sizeof *args)))
      goto out;
    nargs = in.nargs;
    {
      const ts_type **types = calloc(nargs + 1, sizeof *types);
      const char **names = calloc(nargs + 1, sizeof *names);
      ts_buf why = {0};
      bool ok = types && names;
      for (uint32_t k = 0; ok && k < nargs; k++) {
        types[k] = ts_block_input(g->block, k + 1)->type;
        names[k] = ts_block_input(g->block, k + 1)->name;
      }
      ok = ok && ts_tool_args_check(in.args, nargs, types, names, NULL, NULL, NULL, NULL, &why) &&
           ts_tool_slots_values(&ctx, &in.slots, types, names, nargs, args, &why);
      if (!ok)
        fprintf(stderr, "%s: error: %s\n", prog, why.len ? why.data : "out of memory");
      free(types);
      free(names);
      ts_buf_free(&why);
      if (!ok)
        goto out;
    }
    uint64_t warm = 0;
    for (long w = 0; w <= o.warmup; w++) {
      ts_buf where = {0};
      uint64_t t0 = ts_rt_now_ns();
      if (have_iret)
        ts_iv_release(iret);
      have_iret = ts_rt_model_run_graph(m, &ctx, "forward", NULL, args, nargs, &iret, &where);
      if (w > 0 || o.warmup == 0)
        warm += ts_rt_now_ns() - t0;
      if (!have_iret) {
        fprintf(stderr, "%s: error: the interpreter failed: %s", prog,
                where.len ? where.data : ctx.err.data ? ctx.err.data : "?\n");
        if (!where.len)
          fputc('\n', stderr);
        ts_buf_free(&where);
        goto out;
      }
      ts_buf_free(&where);
    }
    ctx.out.len = 0;
    interp.iters = ts_bench_iters(&o, warm, o.warmup > 0 ? (int)o.warmup : 1);
    if (!(times = realloc(times, (size_t)interp.iters * sizeof *times)))
      goto out;
    for (int it = 0; it < interp.iters; it++) {
      ts_iv r;
      uint64_t t0 = ts_rt_now_ns();
      bool ok = ts_rt_model_run_graph(m, &ctx, "forward", NULL, args, nargs, &r, NULL);
      if (ok)
        ts_iv_release(r);
      times[it] = ts_rt_now_ns() - t0;
      ctx.out.len = 0;
      if (!ok) {
        fprintf(stderr, "%s: error: the interpreter failed: %s\n", prog, ctx.err.data ? ctx.err.data : "?");
        goto out;
      }
    }
    ts_bench_side_stats(&interp, times, interp.iters);
    interp.ran = true;
  }

  /* ---- the compiled model */
  if (!ts_bench_so_open(prog, sopath, &so))
    goto out;
  so.set_threads((int)o.threads);
  if (cuda && so.set_device("cuda") != 0) {
    fprintf(stderr, "%s: error: %s: --device cuda: %s\n", prog, sopath, so.last_error());
    goto out;
  }
  if (in.words && so.num_inputs() >= 0 && so.num_inputs() != in.n) {
    fprintf(stderr, "%s: error: %s: the compiled model takes %d argument%s, %d given\n", prog, sopath, so.num_inputs(),
            so.num_inputs() == 1 ? "" : "s", in.n);
    goto out;
  }
  outs.cap = so.num_outputs() >= 0 ? so.num_outputs() : 4096;
  if (!(outs.t = calloc((size_t)outs.cap + 1, sizeof *outs.t)))
    goto out;
  {
    uint64_t warm = 0;
    for (long w = 0; w <= o.warmup; w++) {
      uint64_t t0 = ts_rt_now_ns();
      if (!ts_bench_so_run(prog, &so, in.dl, in.n, &outs))
        goto out;
      if (w > 0 || o.warmup == 0)
        warm += ts_rt_now_ns() - t0;
    }
    bailout = so.last_bailout();
    if (bailout)
      fprintf(stderr, "%s: note: the compiled model ran in its interpreter: %s\n", prog, so.last_error());
    comp.iters = ts_bench_iters(&o, warm, o.warmup > 0 ? (int)o.warmup : 1);
    if (!(times = realloc(times, (size_t)comp.iters * sizeof *times)))
      goto out;
    uint64_t *gtimes = cuda ? calloc((size_t)comp.iters + 1, sizeof *gtimes) : NULL;
    if (cuda && !gtimes)
      goto out;
    for (int it = 0; it < comp.iters; it++) {
      ts_buf why = {0};
      /* events on the legacy stream bracket all the model's work (its
       * stream is a blocking one) */
      bool evok = !cuda || ts_rt_cuda_event_record_legacy(&cu, ev0, &why);
      uint64_t t0 = ts_rt_now_ns();
      bool ok = ts_bench_so_run(prog, &so, in.dl, in.n, &outs);
      times[it] = ts_rt_now_ns() - t0;
      float ms = 0;
      if (cuda && evok)
        evok = ts_rt_cuda_event_record_legacy(&cu, ev1, &why) && ts_rt_cuda_event_ms(&cu, ev0, ev1, &ms, &why);
      if (cuda && !evok) {
        fprintf(stderr, "%s: error: --device cuda: %s\n", prog, why.data ? why.data : "CUDA events failed");
        ok = false;
      }
      ts_buf_free(&why);
      if (cuda)
        gtimes[it] = (uint64_t)((double)ms * 1e6);
      if (!ok) {
        free(gtimes);
        goto out;
      }
    }
    ts_bench_side_stats(&comp, times, comp.iters);
    if (cuda) {
      gpu.ran = true;
      ts_bench_side_stats(&gpu, gtimes, comp.iters);
      so.device_stats(&dstats);
    }
    free(gtimes);
    comp.ran = true;
  }
  for (int k = 0; k < in.n; k++)
    bytes_moved += ts_bench_dl_bytes(&in.dl[k]);
  for (int k = 0; k < outs.n; k++)
    bytes_moved += ts_bench_dl_bytes(&outs.t[k]->dl_tensor);
  copy_gbps = ts_bench_copy_gbps(&ctx, bytes_moved);

  /* ---- do the two agree? */
  if (interp.ran) {
    if (!ts_rt_io_flatten(&ctx, iret, ts_bench_flat_add, &flat)) {
      fprintf(stderr, "%s: error: cannot read the interpreter's outputs\n", prog);
      goto out;
    }
    diff_known = flat.n == outs.n;
    for (int k = 0; diff_known && k < outs.n; k++) {
      ts_rt_tensor *t = ts_rt_tensor_from_dl(&ctx, &outs.t[k]->dl_tensor);
      double dd = t ? ts_bench_diff(&ctx, flat.t[k], t) : NAN;
      if (t)
        ts_rt_tensor_release(t);
      if (isnan(dd))
        diff_known = false;
      else if (dd > max_diff)
        max_diff = dd;
    }
    if (!diff_known)
      fprintf(stderr, "%s: warning: the compiled model's outputs (%d) do not match the interpreter's (%d) in "
              "number, dtype or shape\n", prog, outs.n, flat.n);
  }

  /* ---- the profiles: as many runs as were timed (at most a second's worth) */
  if (o.profile) {
    if (interp.ran) {
      ts_rt_profile p = {0};
      ctx.profile = &p;
      for (int it = 0; it < interp.iters; it++) {
        ts_iv r;
        if (ts_rt_model_run_graph(m, &ctx, "forward", NULL, args, nargs, &r, NULL))
          ts_iv_release(r);
        ctx.out.len = 0;
      }
      ctx.profile = NULL;
      for (uint32_t i = 0; i < p.nentries; i++) {
        ts_buf det = {0};
        ts_rt_profile_describe(p.entries[i].node, &det);
        ts_bench_prof_add(&iprof, p.entries[i].node->kind_name, det.data ? det.data : "", 0,
                          (double)p.entries[i].calls / interp.iters, ts_bench_ms(p.entries[i].ns) / interp.iters);
        ts_buf_free(&det);
      }
      ts_rt_profile_free(&p);
      qsort(iprof.rows, (size_t)iprof.n, sizeof *iprof.rows, ts_bench_row_cmp);
    }
    if (!so.profile || !so.profile_rows) {
      fprintf(stderr, "%s: note: %s was built without profiling (tsaot before NAME_profile); no compiled profile\n",
              prog, sopath);
    } else {
      so.profile(1);
      for (int it = 0; it < comp.iters; it++)
        if (!ts_bench_so_run(prog, &so, in.dl, in.n, &outs))
          break;
      int n = so.profile_rows(NULL, 0);
      tsaot_profile_row *rows = calloc((size_t)n + 1, sizeof *rows);
      if (rows) {
        n = so.profile_rows(rows, n);
        for (int i = 0; i < n; i++)
          ts_bench_prof_add(&cprof, rows[i].op, rows[i].detail, rows[i].native, (double)rows[i].calls / comp.iters,
                            ts_bench_ms(rows[i].ns) / comp.iters);
      }
      free(rows);
      so.profile(0);
      qsort(cprof.rows, (size_t)cprof.n, sizeof *cprof.rows, ts_bench_row_cmp);
    }
  }

  /* ---- the trace: one more run per side, every node an event */
  if (trace.f) {
    int ni = 0, nc = 0;
    fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", trace.f);
    if (interp.ran) {
      ts_rt_profile p = {0};
      p.trace = true;
      ts_rt_profile_clear(&p);
      ctx.profile = &p;
      ts_iv r;
      bool ok = ts_rt_model_run_graph(m, &ctx, "forward", NULL, args, nargs, &r, NULL);
      uint64_t end = ts_rt_now_ns();
      ctx.profile = NULL;
      if (ok)
        ts_iv_release(r);
      ctx.out.len = 0;
      ts_bench_trace_process(&trace, 1, "tsaot interpreter");
      ts_bench_trace_run(&trace, 1, end - p.t_start, (int)p.nevents, (long long)p.dropped);
      for (uint32_t i = 0; i < p.nevents; i++) {
        ts_buf det = {0};
        ts_rt_profile_event_detail(&p, i, &det);
        if (det.data)
          ts_bench_trace_node(&trace, 1, p.events[i].node->kind_name, det.data, 0, false, p.events[i].start,
                              p.events[i].ns);
        ts_buf_free(&det);
      }
      ni = (int)p.nevents;
      if (p.dropped)
        fprintf(stderr, "%s: note: the interpreter's trace keeps its first %u node runs; %llu more left out\n", prog,
                p.nevents, (unsigned long long)p.dropped);
      ts_rt_profile_free(&p);
    }
    {
      /* the library's clock starts inside NAME_profile(2): the run event
       * starts before it, so it holds every node */
      uint64_t t0 = ts_rt_now_ns();
      so.profile(2);
      bool ok = ts_bench_so_run(prog, &so, in.dl, in.n, &outs);
      uint64_t end = ts_rt_now_ns();
      int n = ok ? so.profile_rows(NULL, 0) : 0;
      tsaot_profile_row *rows = calloc((size_t)(n > 0 ? n : 0) + 1, sizeof *rows);
      if (rows && n > 0)
        n = so.profile_rows(rows, n);
      bool tabs = true;
      for (int i = 0; rows && i < n; i++)
        tabs = tabs && strchr(rows[i].detail, '\t');
      if (!tabs)
        fprintf(stderr, "%s: note: %s was built by a tsaot before --trace; no compiled trace\n", prog, sopath);
      else if (rows) {
        ts_bench_trace_process(&trace, 2, "tsaot compiled");
        bool full = n >= (int)TS_RT_PROF_MAX_EVENTS;
        if (full)
          fprintf(stderr, "%s: note: the compiled trace keeps the first %d node runs; later ones are left out\n",
                  prog, n);
        ts_bench_trace_run(&trace, 2, end - t0, n, full ? -1 : 0);
        for (int i = 0; i < n; i++)
          ts_bench_trace_node(&trace, 2, rows[i].op, rows[i].detail, rows[i].native, true, rows[i].calls,
                              rows[i].ns);
        nc = n;
      }
      free(rows);
      so.profile(0);
      if (!ok)
        goto out;
    }
    fputs("\n]}\n", trace.f);
    bool bad = ferror(trace.f) != 0;
    bad = fclose(trace.f) != 0 || bad;
    trace.f = NULL;
    if (bad) {
      fprintf(stderr, "%s: %s: cannot write the trace\n", prog, o.trace);
      goto out;
    }
    fprintf(stderr, "%s: wrote %s: one run, %d interpreter node event%s, %d compiled\n", prog, o.trace, ni,
            ni == 1 ? "" : "s", nc);
  }

  /* ---- report */
  {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t bench_rss = (uint64_t)ru.ru_maxrss * 1024;
    uint64_t so_bytes = stat(sopath, &sost) == 0 ? (uint64_t)sost.st_size : 0;
    size_t arena = so.arena_size();
    double ratio = interp.ran && comp.median_ms > 0 ? interp.median_ms / comp.median_ms : 0;
    if (o.json) {
      printf("{\"model\": ");
      ts_bench_json_str(stdout, o.model);
      printf(", \"compiled_only\": %s", so_only ? "true" : "false");
      printf(", \"threads\": %ld, \"iters\": %d, \"interp_iters\": %d", o.threads, comp.iters, interp.iters);
      if (interp.ran)
        printf(", \"interp_median_ms\": %.6f, \"interp_min_ms\": %.6f", interp.median_ms, interp.min_ms);
      else
        printf(", \"interp_median_ms\": null, \"interp_min_ms\": null");
      printf(", \"compiled_median_ms\": %.6f, \"compiled_min_ms\": %.6f", comp.median_ms, comp.min_ms);
      ts_bench_json_pcts(stdout, "interp", &interp);
      ts_bench_json_pcts(stdout, "compiled", &comp);
      if (cuda)
        printf(", \"device\": \"cuda\", \"gpu_event_median_ms\": %.6f, \"gpu_event_min_ms\": %.6f, "
               "\"kernel_launches\": %llu, \"gemms\": %llu, \"host_ops\": %llu",
               gpu.median_ms, gpu.min_ms, (unsigned long long)dstats.kernel_launches,
               (unsigned long long)dstats.gemms, (unsigned long long)dstats.host_ops);
      if (cuda)
        ts_bench_json_pcts(stdout, "gpu_event", &gpu);
      if (interp.ran)
        printf(", \"ratio\": %.4f", ratio);
      else
        printf(", \"ratio\": null");
      if (compile_s >= 0)
        printf(", \"compile_s\": %.4f", compile_s);
      else
        printf(", \"compile_s\": null");
      printf(", \"so_bytes\": %llu, \"arena_bytes\": %zu", (unsigned long long)so_bytes, arena);
      if (have_cold)
        printf(", \"first_result_ms\": %.3f, \"init_ms\": %.3f, \"first_run_ms\": %.3f, \"peak_rss_bytes\": %llu",
               cold.first_ms, cold.load_ms, cold.run_ms, (unsigned long long)cold.peak_rss);
      else
        printf(", \"first_result_ms\": null, \"peak_rss_bytes\": null");
      printf(", \"bench_peak_rss_bytes\": %llu, \"outputs\": %d", (unsigned long long)bench_rss, outs.n);
      if (diff_known)
        printf(", \"max_abs_diff\": %.6g", max_diff);
      else
        printf(", \"max_abs_diff\": null");
      printf(", \"bailout\": %s", bailout ? "true" : "false");
      printf(", \"bytes_moved\": %llu, \"achieved_gbps\": %.4f, \"copy_gbps\": %.4f", (unsigned long long)bytes_moved,
             comp.median_ms > 0 ? (double)bytes_moved / (comp.median_ms * 1e6) : 0.0, copy_gbps);
      if (o.profile) {
        printf(", \"interp_profile\": ");
        ts_bench_prof_json(stdout, &iprof);
        printf(", \"compiled_profile\": ");
        ts_bench_prof_json(stdout, &cprof);
      }
      printf("}\n");
    } else {
      if (so_only)
        printf("model          %s (the compiled model only: no MODEL.pt, so no interpreter)\n", o.model);
      else
        printf("model          %s (%s)\n", o.model, sopath);
      printf("threads        %ld\n", o.threads);
      printf("%-14s %12s %12s %8s\n", "", "median ms", "min ms", "runs");
      if (interp.ran)
        printf("%-14s %12.4f %12.4f %8d\n", "interpreter", interp.median_ms, interp.min_ms, interp.iters);
      printf("%-14s %12.4f %12.4f %8d\n", "compiled", comp.median_ms, comp.min_ms, comp.iters);
      if (cuda) {
        printf("%-14s %12.4f %12.4f %8d (CUDA events, host copies included)\n", "  on the GPU", gpu.median_ms,
               gpu.min_ms, comp.iters);
        printf("device         %s; in all: %llu kernel launches, %llu cuBLAS calls, %llu ops on the CPU with GPU "
               "data, %.2f MiB to the GPU, %.2f MiB back\n",
               dstats.description ? dstats.description : "?", (unsigned long long)dstats.kernel_launches,
               (unsigned long long)dstats.gemms, (unsigned long long)dstats.host_ops,
               (double)dstats.bytes_to_device / 1048576.0, (double)dstats.bytes_to_host / 1048576.0);
      }
      if (interp.ran)
        printf("ratio          %.2fx (interpreter / compiled, medians)\n", ratio);
      if (compile_s >= 0)
        printf("compile        %.2f s\n", compile_s);
      printf("library        %.2f MiB\n", (double)so_bytes / 1048576.0);
      printf("arena          %.1f KiB (run_static)\n", (double)arena / 1024.0);
      if (have_cold)
        printf("first result   %.1f ms from process start (load %.1f ms, first run %.1f ms); peak RSS %.1f MiB\n",
               cold.first_ms, cold.load_ms, cold.run_ms, (double)cold.peak_rss / 1048576.0);
      printf("bench RSS      %.1f MiB (this process, peak)\n", (double)bench_rss / 1048576.0);
      if (diff_known)
        printf("outputs        %d, max |compiled - interpreter| = %.3g\n", outs.n, max_diff);
      if (bailout)
        printf("note           the compiled model bailed out to its interpreter\n");
      if (comp.median_ms > 0)
        printf("bandwidth      %.2f GB/s (inputs + outputs, %.2f MiB per run, over the median); a copy loop "
               "of as many bytes: %.2f GB/s (%.0f%%)\n",
               (double)bytes_moved / (comp.median_ms * 1e6), (double)bytes_moved / 1048576.0, copy_gbps,
               copy_gbps > 0 ? 100.0 * ((double)bytes_moved / (comp.median_ms * 1e6)) / copy_gbps : 0.0);
      if (o.profile) {
        if (interp.ran)
          ts_bench_prof_print("interpreter profile", &iprof, interp.median_ms);
        if (cprof.n)
          ts_bench_prof_print("compiled profile", &cprof, comp.median_ms);
      }
    }
  }
  rc = 0;
out:
  if (trace.f) { /* failed before the trace was whole: no half a file */
    fclose(trace.f);
    if (trace_made)
      unlink(o.trace);
  }
  ts_rt_cuda_event_free(&cu, ev0);
  ts_rt_cuda_event_free(&cu, ev1);
  ts_rt_cuda_close(&cu);
  ts_bench_prof_free(&iprof);
  ts_bench_prof_free(&cprof);
  for (int k = 0; k < flat.n; k++)
    ts_rt_tensor_release(flat.t[k]);
  free(flat.t);
  ts_bench_outs_clear(&outs);
  free(outs.t);
  if (so.release)
    so.release();
  free(times);
  if (have_iret)
    ts_iv_release(iret);
  for (uint32_t k = 0; args && k < nargs; k++)
    ts_iv_release(args[k]);
  free(args);
  ts_rt_model_free(m);
  ts_bench_inputs_free(&in);
  ts_diag_free(&d);
  ts_rt_ctx_free(&ctx);
  if (made_tmp) {
    unlink(sopath);
    rmdir(tmpdir);
  }
  free(o.inputs);
  return rc;
}
