/* tools/tsaot.c: the compiler (../shared/DESIGN.md, "Command-line contract").
 *
 *   tsaot MODEL.pt -o OUT.so [--example in0.npy ...] [--input f32[1,3,224,224] ...]
 *         [-c] [--name NAME] [-O0..-O3] [--no-fallback] [--device cpu|cuda]
 *         [--gpu-arch sm_XX] [--emit-ptx FILE]
 *         [--emit-llvm FILE] [--print-after-all] [--target T] [--cpu C]
 *         [--features F] [--time-limit S] [--memory-limit M] [--strict] [-v]
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
 * --input specs).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
          "                    brackets too: --input [ f32[2] f32[3] ]\n"
          "  --name NAME       prefix of the exported functions (default: model)\n"
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
          "  -v, --verbose     progress, timings and a summary to stderr\n"
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
    fputs(d->text.data ? d->text.data : fallback, stderr);
}

static bool ts_cc_is_ident(const char *s) {
  if (!*s || isdigit((unsigned char)*s))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return false;
  return true;
}

/* Splits "a|b|c" (tsaot_link.h's lists) into argv-like pieces; empty items dropped. */
static uint32_t ts_cc_split(char *s, const char **out, uint32_t max) {
  uint32_t n = 0;
  for (char *tok = strtok(s, "|"); tok && n < max; tok = strtok(NULL, "|"))
    if (*tok)
      out[n++] = tok;
  return n;
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
    fprintf(stderr, "tsaot: %s: %s (give a spec for every argument without a default)\n", path,
            ctx.err.data ? ctx.err.data : "out of memory");
  for (uint32_t i = n; ok && i-- > given;) {
    ts_value *p = ts_block_input(g->block, i);
    ts_value *c = ts_pass_const_insert_iv(ts_block_first(g->block), &all[i], NULL, false);
    if (!c) {
      fprintf(stderr, "tsaot: %s: the default of '%s' cannot be a constant of the graph\n", path,
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

/* Runs the specialised graph once on a counting heap: the peak of the
 * run's allocations bounds what the compiled code allocates at run time
 * (it allocates less: its planned tensors are not on the heap). */
static uint64_t ts_cc_measure_heap(ts_rt_model *m, ts_graph *g, const ts_type *const *types, const char *const *specs,
                                   uint32_t nspecs, bool verbose) {
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_iv *args = calloc(nspecs + 1, sizeof *args), ret = ts_iv_none();
  ts_buf why = {0}, where = {0};
  uint64_t bytes = 0;
  ts_rt_heap *h = ts_rt_heap_init(NULL, 0);
  if (!args || !h)
    goto out;
  ts_rt_heap *prev = ts_rt_heap_use(h);
  bool ok = ts_cc_args(&ctx, g, types, specs, nspecs, args, &why) &&
            ts_rt_model_run_graph(m, &ctx, "forward", g, args, nspecs, &ret, &where);
  if (ok)
    ts_iv_release(ret);
  for (uint32_t k = 0; k < nspecs; k++)
    ts_iv_release(args[k]);
  ts_rt_heap_use(prev);
  if (ok) {
    /* headroom for what differs between the interpreter and compiled code */
    uint64_t peak = ts_rt_heap_peak(h);
    bytes = peak + peak / 4 + 64 * 1024;
    bytes = (bytes + 63) & ~(uint64_t)63;
  } else if (verbose)
    fprintf(stderr, "tsaot: note: the measuring run failed (%s); run_static will need no more than the plan\n",
            why.len ? why.data : where.len ? where.data : ctx.err.data ? ctx.err.data : "?");
out:
  ts_rt_heap_dispose(h);
  free(args);
  ts_buf_free(&why);
  ts_buf_free(&where);
  ts_rt_ctx_free(&ctx);
  return bytes;
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
    fprintf(stderr, "tsaot: out of memory\n");
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

/* --device cuda: the fusion groups as PTX (codegen/nvptx.c), embedded in
 * the CPU module as NAME_cuda and written to emit_ptx. */
static bool ts_cc_cuda(ts_cg_module *mod, ts_graph *g, const char *name, const char *arch, const char *emit_ptx,
                       bool emulate, int opt, bool verbose, const char *path, ts_diag *d) {
  double t0 = ts_cc_now();
  ts_cg_cuda_options co = {.arch = arch ? arch : "sm_80", .opt_level = opt};
  ts_cg_cuda_ptx p;
  if (!ts_cg_cuda_compile(g, &co, &p, d)) {
    fprintf(stderr, "tsaot: %s: --device cuda: ", path);
    fputs(d->text.data ? d->text.data : "PTX generation failed\n", stderr);
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
    fputs(d->text.data ? d->text.data : "tsaot: --device cuda failed\n", stderr);
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
  const char *path = NULL, *out = NULL, *name = "model", *emit_llvm = NULL, *log = NULL;
  const char *device = "cpu", *gpu_arch = NULL, *emit_ptx = NULL;
  ts_cg_target_opts target = {.opt_level = 3};
  bool object = false, no_fallback = false, verbose = false, emulate = false, strict = false;
  const char **specs = calloc((size_t)argc + 1, sizeof *specs);
  uint32_t nspecs = 0;
  if (!specs) {
    fprintf(stderr, "tsaot: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      ts_cc_usage(stdout);
      free(specs);
      return 0;
    } else if (!strcmp(a, "-c")) {
      object = true;
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
    } else if (!strcmp(a, "--time-limit") || !strcmp(a, "--memory-limit")) {
      bool time = !strcmp(a, "--time-limit");
      if (++i == argc)
        fprintf(stderr, "tsaot: error: %s needs a value\n", a);
      if (i == argc || !ts_cc_limit(a, argv[i], time ? 1e9 : 1 << 30, time ? &ts_cc_time_limit : &ts_cc_memory_limit)) {
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
    ts_cc_report(&d, "tsaot: cannot load the model\n");
    goto done;
  }
  ts_graph *g = ts_rt_model_graph(m, "forward", &d);
  if (!g) {
    ts_cc_report(&d, "tsaot: cannot compile forward\n");
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
    fprintf(stderr, "tsaot: %s: forward takes %u argument%s after self, %u specs given\n", path, nparams,
            nparams == 1 ? "" : "s", nargs);
    goto done;
  }
  ts_iv root = ts_rt_model_root(m);
  /* the specialised graph */
  if (!(sg = ts_graph_copy(g))) {
    fprintf(stderr, "tsaot: out of memory\n");
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
    fprintf(stderr, "tsaot: out of memory\n");
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
      fprintf(stderr, "tsaot: %s: %s\n", path, bad.data ? bad.data : "out of memory");
      ts_buf_free(&bad);
      goto done;
    }
    if (structured && !ts_pass_spec_leaves(sg, 1, arg_forms, nargs, &d)) {
      fputs(d.text.data ? d.text.data : "tsaot: cannot specialise the arguments\n", stderr);
      goto done;
    }
  }
  if (nleaves && !(types = ts_tool_input_types(sg, leaves, nleaves, &d))) {
    fputs(d.text.data ? d.text.data : "tsaot: bad input spec\n", stderr);
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
    ts_cc_report(&d, "tsaot: a pass failed\n");
    goto done;
  }
  /* the unspecialised graph, for inputs off the specialisation */
  if (nargs && !no_fallback) {
    ts_pass_env fenv = {.d = &d, .module = &root, .deadline = env.deadline, .time_limit = ts_cc_time_limit};
    if (!(fg = ts_graph_copy(g)) || (nargs < nparams && !ts_cc_bind_defaults(m, fg, 1 + nargs, path)) ||
        !ts_pass_run_list(fg, "default", &fenv)) {
      ts_cc_report(&d, "tsaot: a pass failed on the unspecialised graph\n");
      goto done;
    }
  }
  if (!ts_cc_missing(m, sg, fg, strict, path))
    goto done;
  double t_passes = ts_cc_now() - t0;
  uint64_t heap = nargs ? ts_cc_measure_heap(m, sg, types, leaves, nleaves, verbose) : 0;
  double t_measure = ts_cc_now() - t0 - t_passes;

  ts_cg_options o = {.name = name, .target = target, .no_fallback = no_fallback, .shared = !object,
                     .emit_llvm = emit_llvm, .verbose = verbose, .archive = archive, .archive_len = archive_len,
                     .deadline = env.deadline, .time_limit = ts_cc_time_limit, .nargs = ncall,
                     .arg_names = arg_names, .arg_types = arg_types,
                     .arg_forms = nargs && structured ? arg_forms : NULL};
  if (!ts_cg_module_init(&mod, name, &target, &d)) {
    fputs(d.text.data ? d.text.data : "tsaot: cannot set up LLVM\n", stderr);
    goto done;
  }
  have_mod = true;
  if (verbose)
    fprintf(stderr, "tsaot: generating code (%u nodes, %u fusion groups)\n", ts_graph_count_nodes(sg),
            ts_graph_count_kind(sg, TS_K_prim_FusionGroup));
  if (!ts_cg_model_build(&mod, sg, fg, &o, heap, &stats, &d)) {
    fprintf(stderr, "tsaot: %s: ", path);
    ts_cc_report(&d, "code generation failed\n");
    goto done;
  }
  if (cuda && !ts_cc_cuda(&mod, sg, name, gpu_arch, emit_ptx, emulate, target.opt_level, verbose, path, &d))
    goto done;
  double t1 = ts_cc_now();
  if (!ts_cg_module_optimize(&mod, &d)) {
    fputs(d.text.data ? d.text.data : "tsaot: LLVM's optimizer failed\n", stderr);
    goto done;
  }
  stats.t_llvm_opt = ts_cc_now() - t1;
  if (emit_llvm && !ts_cg_emit_llvm(&mod, emit_llvm, &d)) {
    fputs(d.text.data, stderr);
    goto done;
  }
  t1 = ts_cc_now();
  const char *objpath = out;
  if (!object) {
    int fd = mkstemps(tmpobj, 2);
    if (fd < 0) {
      fprintf(stderr, "tsaot: cannot make a temporary file: %s\n", strerror(errno));
      goto done;
    }
    close(fd);
    have_tmp = true;
    objpath = tmpobj;
  }
  if (!ts_cg_emit_object(&mod, objpath, &d)) {
    fputs(d.text.data, stderr);
    goto done;
  }
  stats.t_emit = ts_cc_now() - t1;
  uint64_t arena = ((stats.arena_plan_bytes + 63) & ~(uint64_t)63) + stats.arena_heap_bytes;
  if (object) {
    /* OUT.o -> OUT.h */
    size_t n = strlen(out);
    const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - out) : n;
    char *hdr = malloc(stem + 3);
    if (!hdr) {
      fprintf(stderr, "tsaot: out of memory\n");
      goto done;
    }
    memcpy(hdr, out, stem);
    memcpy(hdr + stem, ".h", 3);
    bool ok = ts_cg_write_header(hdr, name, arena, &stats, &d);
    free(hdr);
    if (!ok) {
      fputs(d.text.data, stderr);
      goto done;
    }
  } else {
    t1 = ts_cc_now();
    char rt[] = TSAOT_RT_LIBS, sys[] = TSAOT_SYS_LIBS;
    const char *rtv[16], *sysv[16];
    const char *env_rt = getenv("TSAOT_RUNTIME_LIBS");
    char *rt_copy = env_rt ? strdup(env_rt) : NULL;
    uint32_t nrt = ts_cc_split(rt_copy ? rt_copy : rt, rtv, 16), nsys = ts_cc_split(sys, sysv, 16);
    bool ok = ts_cg_link_shared(objpath, out, rtv, nrt, sysv, nsys, TSAOT_LINK_FLAGS, &d);
    free(rt_copy);
    if (!ok) {
      fputs(d.text.data, stderr);
      goto done;
    }
    stats.t_link = ts_cc_now() - t1;
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
