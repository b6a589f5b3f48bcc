/* tools/tsaot.c: the compiler (../shared/DESIGN.md, "Command-line contract").
 *
 *   tsaot MODEL.pt -o OUT.so [--example in0.npy ...] [--input f32[1,3,224,224] ...]
 *         [-c] [--header] [--name NAME] [-O0..-O3] [--no-fallback] [--device cpu|cuda]
 *         [--gpu-arch sm_XX] [--emit-ptx FILE]
 *         [--emit-llvm FILE] [--print-after-all] [--target T] [--cpu C]
 *         [--features F] [--time-limit S] [--memory-limit M] [--measure-limit S]
 *         [--strict] [-v] [--version]
 *
 * Compiles forward: the pass pipeline specialised to the input specs (from
 * example .npy files or spec texts, in argument order; none, str:TEXT,
 * [ ... ] and ( ... ) for Optional, str, List and Tuple arguments, whose
 * form the graph is specialised to by passes/spec.c's
 * ts_pass_spec_leaves), then code
 * generation (codegen/). Unless --no-fallback, the graph optimized without
 * a specialisation goes into the object too, for the interpreter to run
 * inputs the specialisation does not cover. Operators PyTorch registers
 * but tsaot has no kernel for (ir/ops_pytorch.def) load; what the passes
 * leave of them is listed in one warning and fails when a run reaches it,
 * or, with --strict, refuses the model. The bytes run_static needs for
 * run-time allocations are measured here: the specialised graph runs once
 * in the interpreter over a counting heap, on the examples (zeros for
 * --input specs), in a child process bounded by --measure-limit; a run
 * that fails is the compilation's error.
 *
 * Exit status: 0 success, 1 a model/input/compile error, 2 a usage error.
 */
#include "aot.h"
#include "codegen.h"
#include "loader.h"
#include "npy.h"
#include "passes.h"
#include "runtime.h"
#include "tool_util.h"
#include "tsaot_link.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void ts_cc_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot MODEL.pt -o OUT.so [options]\n"
          "       tsaot MODEL.pt -c -o OUT.o [options]\n"
          "\n"
          "Compiles the forward method of MODEL.pt (an archive torch.jit.save wrote) to\n"
          "native code: a shared library with the C ABI of include/tsaot.h, or with -c an\n"
          "object file and a header (OUT.h) for static linking.\n"
          "\n"
          "  -o OUT            the output file\n"
          "  -c                write an object file and its header instead of a library\n"
          "  --example X.npy   an example input (the next argument of forward after self;\n"
          "                    repeat, or list several after one --example): the code is\n"
          "                    specialised to its dtype and sizes. Also `none` (None for an\n"
          "                    Optional), `str:TEXT`, `[ ARG ... ]` (a list: the code is\n"
          "                    specialised to its length) and `( ARG ... )` (a tuple), as\n"
          "                    tsaot-run takes them; inputs of another form (a tensor where\n"
          "                    the example had none, another length) run in the fallback\n"
          "  --input SPEC      an input spec instead of an example: f32[1,3,224,224],\n"
          "                    i64[], f32[N,3] (N: any size), f32[?,3], ...; none and the\n"
          "                    brackets too: --input [ f32[2] f32[3] ]. Repeat it, one per\n"
          "                    argument, in order; --example and --input mix\n"
          "  --name NAME       prefix of the exported functions (default: OUT's file name\n"
          "                    without its extension, other characters than letters,\n"
          "                    digits and _ made _: -o my-net.so gives my_net_run; model\n"
          "                    where that is empty or starts with a digit)\n"
          "  --header          with a library, write OUT.h too (as -c does)\n"
          "  -O0 .. -O3        LLVM optimization level (default: -O3)\n"
          "  --no-fallback     no interpreter in the output: inputs off the specialisation\n"
          "                    are an error (TSAOT_E_INPUT) instead of a slower run\n"
          "  --strict          refuse a model whose optimized graph still reaches an operator\n"
          "                    tsaot has no kernel for (without it: one warning lists them, and\n"
          "                    a run that reaches one fails there)\n"
          "  --device cpu|cuda where the code runs (default: cpu); cuda also compiles every\n"
          "                    fusion group to PTX, embedded as NAME_cuda: the library runs\n"
          "                    on the CPU until NAME_set_device(\"cuda\") is called\n"
          "  --gpu-arch SM     the GPU for --device cuda: sm_70, sm_72, sm_75, sm_80 (default),\n"
          "                    sm_86, sm_87, sm_89, sm_90, sm_90a\n"
          "  --emit-ptx FILE   with --device cuda, write the PTX to FILE too\n"
          "  --cuda-emulate    with --device cuda, also build each kernel for this CPU, for\n"
          "                    tests without a GPU (a stand-in driver runs the launches)\n"
          "  --emit-llvm FILE  write the optimized LLVM IR to FILE\n"
          "  --print-after-all print the graph after each pass to stderr\n"
          "  --cpu NAME        the CPU to build for. Default: any x86-64-v2 CPU (SSE4.2,\n"
          "                    POPCNT), each fused kernel also built for x86-64-v3 (AVX2,\n"
          "                    FMA) and x86-64-v4 (AVX-512), the copy chosen at run time\n"
          "                    by the CPU's features. 'native': this machine's CPU only\n"
          "                    (one copy; may not run elsewhere); a name (x86-64-v3,\n"
          "                    znver3, ...): that CPU only\n"
          "  --target TRIPLE, --features +a,-b\n"
          "                    another target triple; features added to the CPU's\n"
          "                    (without --cpu: to x86-64-v2, one copy)\n"
          "  --time-limit S    stop with an error when compiling takes over S seconds\n"
          "                    (checked between passes and fusion groups; default: 600)\n"
          "  --memory-limit M  stop with an error when the graphs take over M MiB\n"
          "                    (default: 4096)\n"
          "  --measure-limit S with examples or sized specs, forward runs once in the\n"
          "                    interpreter to size the arena's heap part; a run that takes\n"
          "                    over S seconds (default: 60), fails, crashes or allocates\n"
          "                    more than this machine's memory is an error, with the\n"
          "                    model's own message (nothing is written)\n"
          "  -v, --verbose     progress, timings and a summary to stderr\n"
          "  --version         tsaot's version and LLVM's\n"
          "  -h, --help        this text\n"
          "\n"
          "Without --example or --input the code is shape-generic (fused groups run in\n"
          "the embedded interpreter). Exit status: 0 success, 1 an error in the model,\n"
          "its inputs or the compilation, 2 a usage error.\n");
}

static double ts_cc_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The compile-time budgets: seconds from the start, MiB of graph arenas. */
static double ts_cc_time_limit = 600, ts_cc_memory_limit = 4096;

/* Reads a --time-limit/--memory-limit value: a positive number up to max. */
static bool ts_cc_limit(const char *opt, const char *v, double max, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x > 0) || x > max) {
    fprintf(stderr, "tsaot: error: %s wants a positive number up to %.0f, got '%s'\n", opt, max, v);
    return false;
  }
  *out = x;
  return true;
}

/* Prints why compiling failed: the memory limit when the graphs' arenas
 * reached it (what failed then is only its symptom), else the diagnostics. */
static void ts_cc_report(const ts_diag *d, const char *fallback) {
  if (ts_arena_total_limit_hit())
    fprintf(stderr, "tsaot: error: compilation passed its memory limit of %g MiB (raise it with --memory-limit)\n",
            ts_cc_memory_limit);
  else
    ts_tool_diag_print("tsaot", d->text.data, fallback);
}

static bool ts_cc_is_ident(const char *s) {
  if (!*s || isdigit((unsigned char)*s))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return false;
  return true;
}

/* The default --name: OUT's file name without its extension, each
 * character C does not allow in a name made '_' ("my-net.so" -> my_net),
 * so that objects compiled without --name link together; "model" where
 * that leaves nothing usable (empty, a digit first, over 48 characters). */
static const char *ts_cc_stem_name(const char *out, char *buf, size_t cap) {
  const char *base = strrchr(out, '/');
  base = base ? base + 1 : out;
  const char *dot = strrchr(base, '.');
  size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  if (n == 0 || n > 48 || n >= cap || isdigit((unsigned char)base[0]))
    return "model";
  for (size_t i = 0; i < n; i++)
    buf[i] = isalnum((unsigned char)base[i]) ? base[i] : '_';
  buf[n] = 0;
  return buf;
}

/* Splits "a|b|c" (tsaot_link.h's lists) into argv-like pieces; empty items dropped. */
static uint32_t ts_cc_split(char *s, const char **out, uint32_t max) {
  uint32_t n = 0;
  for (char *tok = strtok(s, "|"); tok && n < max; tok = strtok(NULL, "|"))
    if (*tok)
      out[n++] = tok;
  return n;
}

/* An installed tsaot (PREFIX/bin/tsaot) links the libraries installed
 * beside it (PREFIX/lib/tsaot/, same file names as in the build tree), not
 * the build tree it was built in, which a package's user does not have.
 * Rewrites the n paths in v to that folder when every one is there and
 * this is not the build tree's tsaot (paths are built in buf, of cap
 * bytes); false leaves them as they are. */
static bool ts_cc_installed_libs(const char **v, uint32_t n, char *buf, size_t cap) {
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0)
    return false;
  exe[len] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash)
    return false;
  *slash = 0; /* PREFIX/bin */
  /* the build tree's own tsaot (beside the libraries it was built with)
   * keeps them, whatever lies in ../lib/tsaot */
  const char *lib_slash = n ? strrchr(v[0], '/') : NULL;
  if (lib_slash && (size_t)(lib_slash - v[0]) == strlen(exe) && memcmp(v[0], exe, strlen(exe)) == 0)
    return false;
  size_t used = 0;
  const char *paths[16];
  for (uint32_t i = 0; i < n && i < 16; i++) {
    const char *base = strrchr(v[i], '/');
    base = base ? base + 1 : v[i];
    int w = snprintf(buf + used, cap - used, "%s/../lib/tsaot/%s", exe, base);
    if (w < 0 || (size_t)w >= cap - used || access(buf + used, R_OK) != 0)
      return false;
    paths[i] = buf + used;
    used += (size_t)w + 1;
  }
  for (uint32_t i = 0; i < n && i < 16; i++)
    v[i] = paths[i];
  return true;
}

static bool ts_cc_ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The arguments of the measuring run: example arrays as they are (0-d
 * arrays for number parameters as numbers), str: words as strs, zeros for
 * spec texts. */
static bool ts_cc_args(ts_rt_ctx *ctx, ts_graph *g, const ts_type *const *types, const char *const *specs,
                       uint32_t nspecs, ts_iv *args, ts_buf *why) {
  for (uint32_t k = 0; k < nspecs; k++) {
    const ts_value *pv = ts_block_input(g->block, k + 1);
    if (strncmp(specs[k], "str:", 4) == 0) {
      ts_rt_str *str = ts_rt_str_new(ctx, specs[k] + 4, strlen(specs[k] + 4));
      if (!str)
        return false;
      args[k].u.s = str;
      args[k].tag = TS_IV_STR;
      continue;
    }
    if (ts_cc_ends_with(specs[k], ".npy")) {
      ts_rt_tensor *t = ts_rt_npy_read(ctx, specs[k]);
      if (!t) {
        ts_buf_printf(why, "%s", ctx->err.data ? ctx->err.data : specs[k]);
        return false;
      }
      if (!ts_rt_io_arg(ctx, t, pv->type, &args[k])) {
        ts_buf_printf(why, "%s: %s", specs[k], ctx->err.data ? ctx->err.data : "bad input");
        ts_rt_tensor_release(t);
        return false;
      }
      ts_rt_tensor_release(t);
      continue;
    }
    const ts_type *ty = types[k + 1];
    const ts_tensor_info *ti = ty && ty->kind == TS_TY_TENSOR ? ty->tensor : NULL;
    bool sized = ti && ti->sizes && ti->dtype >= 0;
    for (int32_t i = 0; sized && i < ti->rank; i++)
      sized = ti->sizes[i] >= 0;
    if (!sized) {
      ts_buf_printf(why, "input %u has sizes the spec leaves open", k);
      return false;
    }
    ts_rt_tensor *t = ts_rt_tensor_new(ctx, (ts_dtype)ti->dtype, ti->rank, ti->sizes, true);
    if (!t)
      return false;
    args[k] = ts_iv_tensor(t);
  }
  return true;
}

/* Collects the argument words from argv[i + 1] on: one word, then the
 * .npy files and argument syntax words that follow (none, str:..., every
 * word inside brackets but an option). Returns the index of the last one
 * taken. */
static int ts_cc_take_args(int argc, char **argv, int i, const char **specs, uint32_t *nspecs) {
  int depth = 0;
  for (bool first = true; i + 1 < argc; first = false) {
    const char *w = argv[i + 1];
    bool take = first || ts_tool_arg_syntax(w) || (w[0] != '-' && (depth > 0 || ts_cc_ends_with(w, ".npy")));
    if (!take)
      break;
    depth += (!strcmp(w, "[") || !strcmp(w, "(")) - (!strcmp(w, "]") || !strcmp(w, ")"));
    specs[(*nspecs)++] = w;
    i++;
  }
  return i;
}

/* The parameters from `given` on (self is 0), which the specs leave out,
 * take their default values: each becomes a constant of the graph and
 * stops being an input, as when Python calls forward without them. */
static bool ts_cc_bind_defaults(ts_rt_model *m, ts_graph *g, uint32_t given, const char *path) {
  uint32_t n = ts_block_ninputs(g->block);
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_iv *all = calloc(n, sizeof *all);
  bool ok = all && ts_rt_model_defaults(m, &ctx, g, "forward", all, given);
  if (!ok)
    fprintf(stderr, "tsaot: error: %s: %s (give a spec for every argument without a default)\n", path,
            ctx.err.data ? ctx.err.data : "out of memory");
  for (uint32_t i = n; ok && i-- > given;) {
    ts_value *p = ts_block_input(g->block, i);
    ts_value *c = ts_pass_const_insert_iv(ts_block_first(g->block), &all[i], NULL, false);
    if (!c) {
      fprintf(stderr, "tsaot: error: %s: the default of '%s' cannot be a constant of the graph\n", path,
              p->name ? p->name : "?");
      ok = false;
      break;
    }
    ts_value_replace_all_uses(p, c);
    ts_node_remove_output(g->block->param, i);
  }
  for (uint32_t i = given; all && i < n; i++)
    ts_iv_release(all[i]);
  free(all);
  ts_rt_ctx_free(&ctx);
  return ok;
}

/* The measuring run's bounds: seconds (--measure-limit), and bytes of
 * address space beyond what the compiler holds when it starts (this
 * machine's memory: an arena larger than that could not run here). */
static double ts_cc_measure_limit = 60;

/* What the measuring run's process reports through its pipe: the header,
 * then `len` bytes of message. */
typedef struct ts_cc_measured {
  uint32_t ok, len;
  uint64_t peak;
} ts_cc_measured;

enum { TS_CC_MEASURE_MSG_MAX = 1 << 16 };

#if defined(__SANITIZE_ADDRESS__)
#define TS_CC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_CC_ASAN 1
#endif
#endif

/* In the measuring run's process: bounds its address space (not under
 * ASan, whose shadow memory needs terabytes of it), runs the graph once on
 * a counting heap, writes a ts_cc_measured and the error to fd. */
static void ts_cc_measure_child(int fd, ts_rt_model *m, ts_graph *g, const ts_type *const *types,
                                const char *const *specs, uint32_t nspecs) {
#ifndef TS_CC_ASAN
  long page = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES);
  unsigned long long vm_pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  if (statm) {
    if (fscanf(statm, "%llu", &vm_pages) != 1)
      vm_pages = 0;
    fclose(statm);
  }
  if (page > 0 && phys > 0 && vm_pages) {
    struct rlimit rl = {.rlim_cur = (rlim_t)(vm_pages + (unsigned long long)phys) * (rlim_t)page};
    rl.rlim_max = rl.rlim_cur;
    setrlimit(RLIMIT_AS, &rl);
  }
#endif
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_iv *args = calloc(nspecs + 1, sizeof *args), ret = ts_iv_none();
  ts_buf why = {0}, where = {0};
  ts_cc_measured r = {0};
  ts_rt_heap *h = ts_rt_heap_init(NULL, 0);
  bool ok = false;
  if (args && h) {
    ts_rt_heap *prev = ts_rt_heap_use(h);
    ok = ts_cc_args(&ctx, g, types, specs, nspecs, args, &why) &&
         ts_rt_model_run_graph(m, &ctx, "forward", g, args, nspecs, &ret, &where);
    if (ok)
      ts_iv_release(ret);
    for (uint32_t k = 0; k < nspecs; k++)
      ts_iv_release(args[k]);
    ts_rt_heap_use(prev);
    r.peak = ts_rt_heap_peak(h);
  }
  /* placed errors ("file:line:col: error: ...") as tsaot-run prints them */
  ts_buf msg = {0};
  if (!ok) {
    if (why.len)
      ts_buf_printf(&msg, "error: %s\n", why.data);
    else if (where.len)
      ts_buf_puts(&msg, where.data);
    else
      ts_buf_printf(&msg, "error: %s\n", ctx.err.data ? ctx.err.data : "out of memory");
  }
  r.ok = ok;
  r.len = msg.data && !msg.failed ? (uint32_t)(msg.len < TS_CC_MEASURE_MSG_MAX ? msg.len : TS_CC_MEASURE_MSG_MAX) : 0;
  bool sent = write(fd, &r, sizeof r) == (ssize_t)sizeof r;
  for (uint32_t at = 0; sent && at < r.len;) {
    ssize_t k = write(fd, msg.data + at, r.len - at);
    if (k <= 0)
      break;
    at += (uint32_t)k;
  }
  _exit(0); /* nothing of the compiler's to flush or free here */
}

/* Runs the specialised graph once on a counting heap: the peak of the
 * run's allocations bounds what the compiled code allocates at run time
 * (it allocates less: its planned tensors are not on the heap). The run
 * happens in a child process, so that a forward that never ends is
 * stopped after --measure-limit seconds, a crash stays there and an
 * allocation beyond this machine's memory fails. Any failure is the
 * compilation's error: a library sized by a run that failed would fail
 * on every run. Returns false after printing why (the model's own error,
 * placed at its source line, as tsaot-run prints it). */
static bool ts_cc_measure_heap(ts_rt_model *m, ts_graph *g, const ts_type *const *types, const char *const *specs,
                               uint32_t nspecs, bool zeros, double deadline, const char *path, bool verbose,
                               uint64_t *bytes) {
  *bytes = 0;
  /* a spec with open sizes leaves nothing to run: the plan alone sizes
   * the arena, and run_static's heap part is 0 */
  for (uint32_t k = 0; k < nspecs; k++) {
    if (strncmp(specs[k], "str:", 4) == 0 || ts_cc_ends_with(specs[k], ".npy"))
      continue;
    const ts_type *ty = types ? types[k + 1] : NULL;
    const ts_tensor_info *ti = ty && ty->kind == TS_TY_TENSOR ? ty->tensor : NULL;
    bool sized = ti && ti->sizes && ti->dtype >= 0;
    for (int32_t i = 0; sized && i < ti->rank; i++)
      sized = ti->sizes[i] >= 0;
    if (!sized) {
      if (verbose)
        fprintf(stderr, "tsaot: note: no measuring run: input %u's spec leaves a size open; run_static's heap part "
                "is 0\n", k);
      return true;
    }
  }
  double limit = ts_cc_measure_limit, left = deadline - ts_cc_now();
  bool by_total = left < limit;
  if (by_total)
    limit = left > 0 ? left : 0;
  int fds[2];
  if (pipe(fds) != 0) {
    fprintf(stderr, "tsaot: error: cannot make a pipe for the measuring run: %s\n", strerror(errno));
    return false;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "tsaot: error: cannot start the measuring run: %s\n", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    ts_cc_measure_child(fds[1], m, g, types, specs, nspecs);
  }
  close(fds[1]);
  /* read the report until the child closes its end or the time is up */
  ts_cc_measured r = {0};
  char *msg = malloc(sizeof r + TS_CC_MEASURE_MSG_MAX + 1);
  size_t got = 0;
  bool timed_out = false;
  double end = ts_cc_now() + limit;
  while (msg && got < sizeof r + TS_CC_MEASURE_MSG_MAX) {
    double wait = end - ts_cc_now();
    if (wait <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    int k = poll(&p, 1, wait > 1e6 ? 1000000000 : (int)(wait * 1000) + 1);
    if (k < 0 && errno == EINTR)
      continue;
    if (k < 0)
      break;
    if (k == 0)
      continue; /* the loop's clock decides */
    ssize_t n = read(fds[0], msg + got, sizeof r + TS_CC_MEASURE_MSG_MAX - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(fds[0]);
  if (timed_out)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  bool ok = false;
  const char *on = zeros ? "on the example inputs (zeros where --input gave a spec)" : "on the example inputs";
  if (!msg) {
    fprintf(stderr, "tsaot: error: out of memory\n");
  } else if (timed_out) {
    if (by_total)
      fprintf(stderr, "tsaot: error: compilation passed its time limit of %g s in the measuring run (forward %s, "
              "run once to size the arena; raise it with --time-limit)\n", ts_cc_time_limit, on);
    else
      fprintf(stderr, "tsaot: error: %s: forward did not finish %s in %g s: the measuring run (run once to size "
              "the arena) was stopped (raise the limit with --measure-limit S); nothing written\n", path, on,
              ts_cc_measure_limit);
  } else if (got < sizeof r) {
    if (WIFSIGNALED(status))
      fprintf(stderr, "tsaot: error: %s: forward crashed %s in the measuring run (signal %d, %s); nothing written\n",
              path, on, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      fprintf(stderr, "tsaot: error: %s: the measuring run ended without a result (exit status %d); nothing "
              "written\n", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    memcpy(&r, msg, sizeof r);
    size_t len = got - sizeof r < r.len ? got - sizeof r : r.len;
    msg[sizeof r + len] = 0;
    uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    if (!r.ok) {
      ts_tool_diag_print("tsaot", len ? msg + sizeof r : NULL, "the model failed");
      fprintf(stderr, "tsaot: error: %s: forward fails %s (tsaot runs it once to size the arena); nothing "
              "written\n", path, on);
    } else if (phys && r.peak > phys) {
      fprintf(stderr, "tsaot: error: %s: forward allocates %.1f GiB at its peak %s, more than this machine's "
              "%.1f GiB of memory; nothing written\n", path, (double)r.peak / 1073741824.0, on,
              (double)phys / 1073741824.0);
    } else {
      /* headroom for what differs between the interpreter and compiled code */
      *bytes = r.peak + r.peak / 4 + 64 * 1024;
      *bytes = (*bytes + 63) & ~(uint64_t)63;
      ok = true;
    }
  }
  free(msg);
  return ok;
}

/* The operators without a kernel that the optimized graphs still reach
 * (the passes removed the branches that never run): one warning listing
 * them, grouped by op, with their places; under --strict an error. False
 * when the model is refused. */
static bool ts_cc_missing(ts_rt_model *m, const ts_graph *sg, const ts_graph *fg, bool strict, const char *path) {
  ts_pass_missing_set s = {0};
  ts_pass_missing_collect(&s, sg, 0);
  ts_pass_missing_collect(&s, fg, 1);
  if (s.oom) {
    fprintf(stderr, "tsaot: error: out of memory\n");
    ts_pass_missing_free(&s);
    return false;
  }
  if (!s.n) {
    ts_pass_missing_free(&s);
    return true;
  }
  static const char *const notes[] = {NULL, "only inputs off the specialisation reach it"};
  ts_buf b = {0};
  uint32_t nops = ts_pass_missing_print(&b, &s, ts_rt_model_source, m, notes, 2);
  fprintf(stderr, "tsaot: %s: %s: forward reaches %u operator%s that tsaot has no kernel for, at %u place%s; %s\n%s",
          path, strict ? "error" : "warning", nops, nops == 1 ? "" : "s", s.n, s.n == 1 ? "" : "s",
          strict ? "refused (--strict)" : "a run that reaches one fails there (--strict refuses such a model)",
          b.data && !b.failed ? b.data : "  (out of memory)\n");
  ts_buf_free(&b);
  ts_pass_missing_free(&s);
  return !strict;
}

/* NAME_tsaot_info: what tsaot-dump --summary prints of a library: the
 * compiler's version, the target, weight and arena bytes, the compiled
 * graph's operators (unsupported ones by place, without source text). A
 * constant string with its own symbol, read by name (dlsym) and never by
 * the generated code; libraries only: a -c object for firmware carries
 * nothing it does not run. False when out of memory. */
static bool ts_cc_embed_info(ts_cg_module *mod, const char *name, const ts_cg_target_opts *t, const char *device,
                             const char *gpu_arch, const char *fallback, const ts_cg_stats *st, uint64_t arena,
                             const ts_graph *sg) {
  ts_buf b = {0};
  ts_buf_printf(&b, "tsaot: %s (LLVM %s)\n", ts_tool_version(), ts_tool_llvm_version());
  ts_buf_printf(&b, "target: %s, cpu %s%s%s\n", LLVMGetTarget(mod->mod),
                t->cpu ? t->cpu : t->triple || t->features ? "generic" : "x86-64-v2 (fused kernels also for x86-64-v3 and x86-64-v4)",
                t->features ? ", features " : "", t->features ? t->features : "");
  ts_buf_printf(&b, "device: %s%s%s\n", device, strcmp(device, "cuda") == 0 ? " " : "",
                strcmp(device, "cuda") == 0 ? (gpu_arch ? gpu_arch : "sm_80") : "");
  ts_buf_printf(&b, "fallback: %s\n", fallback);
  ts_buf_printf(&b, "weights: %llu bytes\n", (unsigned long long)st->weight_bytes);
  ts_buf_printf(&b, "arena: %llu bytes (%llu planned, %llu heap)\n", (unsigned long long)arena,
                (unsigned long long)st->arena_plan_bytes, (unsigned long long)st->arena_heap_bytes);
  /* places as file:line:col, without the model's source text */
  bool ok = ts_tool_summary_ops(&b, sg, NULL, NULL) && !b.failed;
  if (ok) {
    char sym[256];
    snprintf(sym, sizeof sym, "%s_tsaot_info", name);
    LLVMValueRef str = LLVMConstStringInContext(mod->ctx, b.data, (unsigned)b.len, false);
    LLVMValueRef g = LLVMAddGlobal(mod->mod, LLVMTypeOf(str), sym);
    LLVMSetInitializer(g, str);
    LLVMSetGlobalConstant(g, true);
    LLVMSetLinkage(g, LLVMExternalLinkage);
  }
  ts_buf_free(&b);
  return ok;
}

/* --device cuda: the fusion groups as PTX (codegen/nvptx.c), embedded in
 * the CPU module as NAME_cuda and written to emit_ptx. */
static bool ts_cc_cuda(ts_cg_module *mod, ts_graph *g, const char *name, const char *arch, const char *emit_ptx,
                       bool emulate, int opt, bool verbose, const char *path, ts_diag *d) {
  double t0 = ts_cc_now();
  ts_cg_cuda_options co = {.arch = arch ? arch : "sm_80", .opt_level = opt};
  ts_cg_cuda_ptx p;
  if (!ts_cg_cuda_compile(g, &co, &p, d)) {
    fprintf(stderr, "tsaot: error: %s: --device cuda: the PTX could not be made:\n", path);
    ts_tool_diag_print("tsaot", d->text.data, "PTX generation failed");
    return false;
  }
  bool ok = (!emulate || ts_cg_cuda_emulate(mod, g, name, &p, d)) && ts_cg_cuda_embed(mod, name, co.arch, &p, d);
  if (ok && emit_ptx) {
    FILE *f = fopen(emit_ptx, "w");
    ok = f && fwrite(p.ptx.data, 1, p.ptx.len, f) == p.ptx.len;
    if (f && fclose(f) != 0)
      ok = false;
    if (!ok)
      ts_diag_error(d, "%s: cannot write the PTX: %s", emit_ptx, strerror(errno));
  }
  if (!ok)
    ts_tool_diag_print("tsaot", d->text.data, "--device cuda failed");
  if (ok && verbose) {
    for (const char *s = p.notes.data; s && *s;) {
      const char *nl = strchr(s, '\n');
      size_t len = nl ? (size_t)(nl - s) : strlen(s);
      fprintf(stderr, "tsaot: note: %.*s\n", (int)len, s);
      s += len + (nl != NULL);
    }
    fprintf(stderr, "tsaot: cuda: %u of %u fusion groups as %s kernels, %zu bytes of PTX%s, %.3f s\n", p.nk,
            p.ngroups, co.arch, p.ptx.len, p.libdevice ? " (libdevice linked)" : "", ts_cc_now() - t0);
  }
  ts_cg_cuda_ptx_free(&p);
  return ok;
}

int main(int argc, char **argv) {
  const char *path = NULL, *out = NULL, *name = NULL, *emit_llvm = NULL, *log = NULL;
  const char *device = "cpu", *gpu_arch = NULL, *emit_ptx = NULL;
  ts_cg_target_opts target = {.opt_level = 3};
  bool object = false, no_fallback = false, verbose = false, emulate = false, strict = false, header = false;
  char stem_name[64];
  const char **specs = calloc((size_t)argc + 1, sizeof *specs);
  uint32_t nspecs = 0;
  if (!specs) {
    fprintf(stderr, "tsaot: error: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      ts_tool_print_version("tsaot");
      free(specs);
      return 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      ts_cc_usage(stdout);
      free(specs);
      return 0;
    } else if (!strcmp(a, "-c")) {
      object = true;
    } else if (!strcmp(a, "--header")) {
      header = true;
    } else if (!strcmp(a, "--no-fallback")) {
      no_fallback = true;
    } else if (!strcmp(a, "--strict")) {
      strict = true;
    } else if (!strcmp(a, "--cuda-emulate")) {
      emulate = true;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
      verbose = true;
    } else if (!strcmp(a, "--print-after-all")) {
      log = "all";
    } else if (!strcmp(a, "--time-limit") || !strcmp(a, "--memory-limit") || !strcmp(a, "--measure-limit")) {
      bool mem = !strcmp(a, "--memory-limit");
      double *to = mem ? &ts_cc_memory_limit : !strcmp(a, "--time-limit") ? &ts_cc_time_limit : &ts_cc_measure_limit;
      if (++i == argc)
        fprintf(stderr, "tsaot: error: %s needs a value\n", a);
      if (i == argc || !ts_cc_limit(a, argv[i], mem ? 1 << 30 : 1e9, to)) {
        free(specs);
        return 2;
      }
    } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      target.opt_level = a[2] - '0';
    } else if (!strcmp(a, "-o") || !strcmp(a, "--example") || !strcmp(a, "--input") || !strcmp(a, "--name") ||
               !strcmp(a, "--device") || !strcmp(a, "--emit-llvm") || !strcmp(a, "--target") ||
               !strcmp(a, "--cpu") || !strcmp(a, "--features") || !strcmp(a, "--gpu-arch") ||
               !strcmp(a, "--emit-ptx")) {
      if (++i == argc) {
        fprintf(stderr, "tsaot: error: %s needs a value\n", a);
        free(specs);
        return 2;
      }
      const char *v = argv[i];
      if (!strcmp(a, "-o"))
        out = v;
      else if (!strcmp(a, "--example") || !strcmp(a, "--input")) {
        /* `--example a.npy b.npy`: the arrays that follow are examples too,
         * and so is a bracketed group's every word */
        i = ts_cc_take_args(argc, argv, i - 1, specs, &nspecs);
      } else if (!strcmp(a, "--name"))
        name = v;
      else if (!strcmp(a, "--device"))
        device = v;
      else if (!strcmp(a, "--gpu-arch"))
        gpu_arch = v;
      else if (!strcmp(a, "--emit-ptx"))
        emit_ptx = v;
      else if (!strcmp(a, "--emit-llvm"))
        emit_llvm = v;
      else if (!strcmp(a, "--target"))
        target.triple = v;
      else if (!strcmp(a, "--cpu"))
        target.cpu = v;
      else
        target.features = v;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tsaot: error: unknown option '%s' (tsaot --help lists them)\n", a);
      free(specs);
      return 2;
    } else if (!path && !ts_tool_arg_syntax(a)) {
      path = a;
    } else if (ts_cc_ends_with(a, ".npy") || ts_tool_arg_syntax(a)) {
      i = ts_cc_take_args(argc, argv, i - 1, specs, &nspecs);
    } else {
      fprintf(stderr, "tsaot: error: unexpected argument '%s' (one model, then options)\n", a);
      free(specs);
      return 2;
    }
  }
  if (!path || !out) {
    if (path)
      fprintf(stderr, "tsaot: error: no output file (-o OUT)\n");
    else
      ts_cc_usage(stderr);
    free(specs);
    return 2;
  }
  if (!name)
    name = ts_cc_stem_name(out, stem_name, sizeof stem_name);
  if (!ts_cc_is_ident(name)) {
    fprintf(stderr, "tsaot: error: --name '%s' is not a C identifier\n", name);
    free(specs);
    return 2;
  }
  bool cuda = strcmp(device, "cuda") == 0;
  if (!cuda && strcmp(device, "cpu") != 0) {
    fprintf(stderr, "tsaot: error: --device wants cpu or cuda, got '%s'\n", device);
    free(specs);
    return 2;
  }
  if (!cuda && (gpu_arch || emit_ptx || emulate)) {
    fprintf(stderr, "tsaot: error: %s needs --device cuda\n",
            gpu_arch ? "--gpu-arch" : emit_ptx ? "--emit-ptx" : "--cuda-emulate");
    free(specs);
    return 2;
  }
  if (gpu_arch && !ts_cg_gpu_arch_ptx(gpu_arch)) {
    fprintf(stderr, "tsaot: error: --gpu-arch '%s': expected sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, sm_89, "
            "sm_90 or sm_90a\n", gpu_arch);
    free(specs);
    return 2;
  }

  int rc = 1;
  double t0 = ts_cc_now();
  ts_arena_set_total_limit((size_t)(ts_cc_memory_limit * 1048576.0));
  ts_diag d = {0};
  ts_rt_model *m = NULL;
  ts_graph *sg = NULL, *fg = NULL;
  const ts_type **types = NULL;
  ts_cg_module mod = {0};
  bool have_mod = false;
  ts_cg_stats stats = {0};
  ts_tool_arg *args = NULL;
  uint32_t nargs = 0, nleaves = 0;
  const ts_type **arg_types = NULL;
  const char **arg_names = NULL, **leaves = NULL;
  const ts_pass_form **arg_forms = NULL;
  char tmpobj[] = "/tmp/tsaot-XXXXXX.o";
  char *archive = NULL;
  bool have_tmp = false;

  /* read once: the model loads from these bytes, and they are embedded
   * when the graph needs its module at run time */
  size_t archive_len = 0;
  if (!(archive = ts_tool_read_file("tsaot", path, (size_t)1 << 34, &archive_len)))
    goto done;
  if (!(m = ts_rt_model_load_buffer(archive, archive_len, path, &d))) {
    if (!ts_tool_explain_not_torchscript("tsaot", path))
      ts_cc_report(&d, "cannot load the model");
    goto done;
  }
  ts_graph *g = ts_rt_model_graph(m, "forward", &d);
  if (!g) {
    ts_cc_report(&d, "cannot compile forward");
    goto done;
  }
  uint32_t nparams = ts_block_ninputs(g->block) - 1;
  char why[256];
  if (!ts_tool_args_parse(specs, nspecs, &args, &nargs, why, sizeof why)) {
    fprintf(stderr, "tsaot: error: the examples: %s\n", why);
    rc = 2;
    goto done;
  }
  if (nargs > nparams) {
    fprintf(stderr, "tsaot: error: %s: forward takes %u argument%s after self, %u specs given\n", path, nparams,
            nparams == 1 ? "" : "s", nargs);
    goto done;
  }
  ts_iv root = ts_rt_model_root(m);
  /* the specialised graph */
  if (!(sg = ts_graph_copy(g))) {
    fprintf(stderr, "tsaot: error: out of memory\n");
    goto done;
  }
  if (nargs && nargs < nparams && !ts_cc_bind_defaults(m, sg, 1 + nargs, path))
    goto done;
  /* forward's arguments as callers pass them (include/tsaot.h), and what
   * the examples fix of them: an argument that is not one array makes the
   * graph take the examples' leaves */
  uint32_t ncall = ts_block_ninputs(sg->block) - 1;
  arg_types = calloc(ncall + 1, sizeof *arg_types);
  arg_names = calloc(ncall + 1, sizeof *arg_names);
  arg_forms = calloc(ncall + 1, sizeof *arg_forms);
  leaves = calloc(nspecs + 1, sizeof *leaves);
  if (!arg_types || !arg_names || !arg_forms || !leaves) {
    fprintf(stderr, "tsaot: error: out of memory\n");
    goto done;
  }
  bool structured = false;
  for (uint32_t k = 0; k < ncall; k++) {
    const ts_value *v = ts_block_input(sg->block, k + 1);
    arg_types[k] = v->type;
    arg_names[k] = v->name;
    structured = structured || v->type->kind == TS_TY_OPTIONAL || !ts_rt_io_leaf(v->type);
  }
  if (nargs) {
    ts_buf bad = {0};
    if (!ts_tool_args_check(args, nargs, arg_types, arg_names, ts_graph_arena(sg), arg_forms, leaves, &nleaves,
                            &bad)) {
      fprintf(stderr, "tsaot: error: %s: %s\n", path, bad.data ? bad.data : "out of memory");
      ts_buf_free(&bad);
      goto done;
    }
    if (structured && !ts_pass_spec_leaves(sg, 1, arg_forms, nargs, &d)) {
      ts_tool_diag_print("tsaot", d.text.data, "cannot specialise the arguments");
      goto done;
    }
  }
  if (nleaves && !(types = ts_tool_input_types(sg, leaves, nleaves, &d))) {
    ts_tool_diag_print("tsaot", d.text.data, "bad input spec");
    goto done;
  }
  ts_pass_env env = {.d = &d,
                     .module = &root,
                     .input_types = types,
                     .ninput_types = types ? ts_block_ninputs(sg->block) : 0,
                     .deadline = t0 + ts_cc_time_limit,
                     .time_limit = ts_cc_time_limit,
                     .log_passes = log};
  if (verbose)
    fprintf(stderr, "tsaot: %s: optimizing forward (%u nodes)\n", path, ts_graph_count_nodes(g));
  if (!ts_pass_run_list(sg, "default", &env)) {
    ts_cc_report(&d, "a pass failed");
    goto done;
  }
  /* the unspecialised graph, for inputs off the specialisation */
  if (nargs && !no_fallback) {
    ts_pass_env fenv = {.d = &d, .module = &root, .deadline = env.deadline, .time_limit = ts_cc_time_limit};
    if (!(fg = ts_graph_copy(g)) || (nargs < nparams && !ts_cc_bind_defaults(m, fg, 1 + nargs, path)) ||
        !ts_pass_run_list(fg, "default", &fenv)) {
      ts_cc_report(&d, "a pass failed on the unspecialised graph");
      goto done;
    }
  }
  if (!ts_cc_missing(m, sg, fg, strict, path))
    goto done;
  double t_passes = ts_cc_now() - t0;
  uint64_t heap = 0;
  bool zeros = false;
  for (uint32_t k = 0; k < nleaves; k++)
    zeros = zeros || (strncmp(leaves[k], "str:", 4) != 0 && !ts_cc_ends_with(leaves[k], ".npy"));
  if (nargs && !ts_cc_measure_heap(m, sg, types, leaves, nleaves, zeros, env.deadline, path, verbose, &heap))
    goto done;
  double t_measure = ts_cc_now() - t0 - t_passes;

  ts_cg_options o = {.name = name, .target = target, .no_fallback = no_fallback, .shared = !object,
                     .emit_llvm = emit_llvm, .verbose = verbose, .archive = archive, .archive_len = archive_len,
                     .deadline = env.deadline, .time_limit = ts_cc_time_limit, .nargs = ncall,
                     .arg_names = arg_names, .arg_types = arg_types,
                     .arg_forms = nargs && structured ? arg_forms : NULL};
  if (!ts_cg_module_init(&mod, name, &target, &d)) {
    ts_tool_diag_print("tsaot", d.text.data, "cannot set up LLVM");
    goto done;
  }
  have_mod = true;
  if (verbose)
    fprintf(stderr, "tsaot: generating code (%u nodes, %u fusion groups)\n", ts_graph_count_nodes(sg),
            ts_graph_count_kind(sg, TS_K_prim_FusionGroup));
  if (!ts_cg_model_build(&mod, sg, fg, &o, heap, &stats, &d)) {
    fprintf(stderr, "tsaot: error: %s: code generation failed:\n", path);
    ts_cc_report(&d, "code generation failed");
    goto done;
  }
  if (cuda && !ts_cc_cuda(&mod, sg, name, gpu_arch, emit_ptx, emulate, target.opt_level, verbose, path, &d))
    goto done;
  uint64_t arena = ((stats.arena_plan_bytes + 63) & ~(uint64_t)63) + stats.arena_heap_bytes;
  const char *fallback = !nargs ? "none needed (shape-generic code, compiled without examples)"
                         : fg   ? "the unspecialised graph, in the embedded interpreter"
                                : "none (--no-fallback: other inputs are an error)";
  if (!object && !ts_cc_embed_info(&mod, name, &target, device, gpu_arch, fallback, &stats, arena, sg)) {
    fprintf(stderr, "tsaot: error: out of memory\n");
    goto done;
  }
  double t1 = ts_cc_now();
  if (!ts_cg_module_optimize(&mod, &d)) {
    ts_tool_diag_print("tsaot", d.text.data, "LLVM's optimizer failed");
    goto done;
  }
  stats.t_llvm_opt = ts_cc_now() - t1;
  if (emit_llvm && !ts_cg_emit_llvm(&mod, emit_llvm, &d)) {
    ts_tool_diag_print("tsaot", d.text.data, "out of memory");
    goto done;
  }
  t1 = ts_cc_now();
  const char *objpath = out;
  if (!object) {
    int fd = mkstemps(tmpobj, 2);
    if (fd < 0) {
      fprintf(stderr, "tsaot: error: cannot make a temporary file: %s\n", strerror(errno));
      goto done;
    }
    close(fd);
    have_tmp = true;
    objpath = tmpobj;
  }
  if (!ts_cg_emit_object(&mod, objpath, &d)) {
    ts_tool_diag_print("tsaot", d.text.data, "out of memory");
    goto done;
  }
  stats.t_emit = ts_cc_now() - t1;
  if (!object) {
    t1 = ts_cc_now();
    char rt[] = TSAOT_RT_LIBS, sys[] = TSAOT_SYS_LIBS;
    const char *rtv[16], *sysv[16];
    const char *env_rt = getenv("TSAOT_RUNTIME_LIBS");
    char *rt_copy = env_rt ? strdup(env_rt) : NULL;
    uint32_t nrt = ts_cc_split(rt_copy ? rt_copy : rt, rtv, 16), nsys = ts_cc_split(sys, sysv, 16);
    /* $TSAOT_RUNTIME_LIBS, else the installed libraries, else the build tree's */
    static char installed[16 * 4200];
    if (!rt_copy)
      (void)ts_cc_installed_libs(rtv, nrt, installed, sizeof installed);
    bool ok = ts_cg_link_shared(objpath, out, rtv, nrt, sysv, nsys, TSAOT_LINK_FLAGS, &d);
    free(rt_copy);
    if (!ok) {
      ts_tool_diag_print("tsaot", d.text.data, "out of memory");
      goto done;
    }
    stats.t_link = ts_cc_now() - t1;
  }
  if (object || header) {
    /* OUT.o -> OUT.h (OUT.so -> OUT.h with --header); without it, what
     * was written goes too */
    size_t n = strlen(out);
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : n;
    char *hdr = malloc(stem + 3);
    bool ok = hdr != NULL;
    if (hdr) {
      memcpy(hdr, out, stem);
      memcpy(hdr + stem, ".h", 3);
      ok = ts_cg_write_header(hdr, name, arena, &stats, &d);
      if (!ok)
        unlink(hdr);
    }
    free(hdr);
    if (!ok) {
      ts_tool_diag_print("tsaot", d.text.data, "out of memory");
      unlink(out);
      goto done;
    }
  }
  if (verbose) {
    for (const char *s = stats.notes.data; s && *s;) {
      const char *nl = strchr(s, '\n');
      size_t len = nl ? (size_t)(nl - s) : strlen(s);
      fprintf(stderr, "tsaot: note: %.*s\n", (int)len, s);
      s += len + (nl != NULL);
    }
    fprintf(stderr, "tsaot: wrote %s: %u nodes, %u native kernels, %u groups interpreted, %u runtime calls%s\n", out,
            stats.nnodes, stats.nkernels, stats.ninterp_groups, stats.ncalls,
            stats.interp_only ? " (all in the embedded interpreter)" : "");
    if (stats.archive_bytes)
      fprintf(stderr, "tsaot: the model's archive is embedded (%.2f MiB): forward reads its module\n",
              (double)stats.archive_bytes / 1048576.0);
    fprintf(stderr,
            "tsaot: weights %.2f MiB; arena %.1f KiB planned (%u tensors, %u in place) + %.1f KiB heap\n",
            (double)stats.weight_bytes / 1048576.0, (double)stats.arena_plan_bytes / 1024.0, stats.nplanned,
            stats.ninplace, (double)stats.arena_heap_bytes / 1024.0);
    fprintf(stderr, "tsaot: times: passes %.3f s, measuring run %.3f s, codegen %.3f s, LLVM %.3f s, emit %.3f s, link %.3f s; total %.3f s\n",
            t_passes, t_measure, stats.t_codegen, stats.t_llvm_opt, stats.t_emit, stats.t_link, ts_cc_now() - t0);
  }
  rc = 0;
done:
  if (have_tmp)
    unlink(tmpobj);
  if (have_mod)
    ts_cg_module_dispose(&mod);
  ts_cg_stats_free(&stats);
  free(types);
  ts_tool_args_free(args, nargs);
  free(arg_types);
  free(arg_names);
  free(arg_forms);
  free(leaves);
  ts_graph_free(sg);
  ts_graph_free(fg);
  ts_rt_model_free(m);
  free(archive); /* after the model, which reads from it */
  ts_diag_free(&d);
  free(specs);
  return rc;
}
