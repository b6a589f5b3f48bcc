/* tools/tsaot-run.c: runs a model on .npy inputs and writes its outputs as
 * .npy files (../shared/DESIGN.md, "Command-line contract").
 *
 *   tsaot-run MODEL.pt ARG ... -o OUTDIR [--threads N] [--method NAME]
 *             [--optimize] [--passes LIST] [--print-after-all] [--stats] [--strict]
 *   tsaot-run MODEL.so ARG ... -o OUTDIR [--threads N] [--device cpu|cuda]
 *
 * A .pt runs in the reference interpreter; a .so (tsaot MODEL.pt -o
 * MODEL.so) is loaded with dlopen and run through its C ABI
 * (include/tsaot.h): forward only, with a note on stderr when its inputs
 * were off the compiled specialisation and it ran in its interpreter.
 *
 * --device cuda (a .so compiled with tsaot --device cuda) runs it on CUDA
 * device 0 (NAME_set_device("cuda"), runtime/hosted/gpu.h) and prints on stderr
 * what ran where (kernel launches, cuBLAS calls, ops on the CPU, bytes
 * moved). Without a driver or a GPU it fails with exit status 1.
 *
 * --optimize runs the interpreter on the optimization pipeline's output
 * (passes/pipeline.c), specialised to the given inputs, so that the passes
 * are checked on a model before any code generation; --passes runs a list
 * of passes of one's own instead.
 *
 * An operator PyTorch registers that tsaot has no kernel for
 * (ir/ops_pytorch.def) fails when a run reaches it, with its source line;
 * on a branch never taken it costs nothing. --strict refuses, before the
 * run, a graph that still names one (after the passes, with --optimize),
 * listing them as tsaot does.
 *
 * Inputs: one per argument of the method after self (tools/tool_util.h):
 * an .npy file (a 0-d int64, float64 or bool array is an int, float or bool
 * argument where the parameter has that type; any array is a Tensor
 * argument; a 1-d array is a List[int] / List[float] / List[bool], a 1-d
 * uint8 array a str: runtime/hosted/io.c has the rules), `none` for None,
 * `str:TEXT` for a str, `[ ARG ... ]` for a List of anything else (tensors,
 * Optionals, strs, tuples) and `( ARG ... )` for a Tuple, the brackets as
 * words of their own. A .so gets them as include/tsaot.h's slots (none a
 * TSAOT_NONE, a list its length and its elements).
 *
 * Outputs, flattened depth-first into OUTDIR/out0.npy, out1.npy, ...:
 * tensors as they are (written in C order); tuples, lists and dicts element
 * by element (a dict's values in the dict's order, which is insertion order
 * as in Python); a list whose items are all ints, all floats or all bools as
 * one int64 / float64 / bool array, an empty list as an empty int64 array
 * (as tests/fixtures/make_fixtures.py flattens PyTorch's outputs); an int,
 * float or bool as a 0-d int64 / float64 / bool array. None writes nothing;
 * a str or an object is skipped with a note on stderr.
 *
 * prim::Print output goes to stdout. Exit status: 0 success, 1 a model or
 * input error (one line naming the input, or the failing source line), 2 a
 * usage error.
 */
#include "aot.h"
#include "loader.h"
#include "npy.h"
#include "passes.h"
#include "runtime.h"
#include "so_load.h"
#include "tool_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void ts_run_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-run MODEL.pt [ARG ...] -o OUTDIR [--threads N] [--method NAME]\n"
          "       tsaot-run MODEL.so [ARG ...] -o OUTDIR [--threads N] [--device cpu|cuda]\n"
          "\n"
          "Runs a method of MODEL.pt (an archive torch.jit.save wrote) in the reference\n"
          "interpreter on the arguments ARG ... (after self, in order; below) and writes its\n"
          "outputs, flattened depth-first, to OUTDIR/out0.npy, out1.npy, ...\n"
          "MODEL.so, a model compiled by tsaot, runs its forward the same way.\n"
          "\n"
          "  -o OUTDIR      where the outputs go (made if missing)\n"
          "  --threads N    threads for the kernels (default: every processor)\n"
          "  --method NAME  the method to run (default: forward; .pt only)\n"
          "  --device cuda  (.so) run on CUDA device 0 (a library built with tsaot\n"
          "                 --device cuda); prints what ran where\n"
          "  --optimize     (.pt) run the optimized graph: the default pass pipeline,\n"
          "                 specialised to these inputs (tsaot-opt --help lists it)\n"
          "  --passes LIST  (.pt) run the graph after these passes instead (comma-separated;\n"
          "                 'default' is the pipeline)\n"
          "  --print-after-all  print the graph after each pass to stderr\n"
          "                 (TSAOT_LOG=pass,pass prints it after the passes named)\n"
          "  --stats        print node counts before and after the passes to stderr\n"
          "  --strict       (.pt) refuse a graph that reaches an operator tsaot has no\n"
          "                 kernel for (after the passes with --optimize), listing them;\n"
          "                 without it a run fails where it reaches one\n"
          "  --version      tsaot's version and LLVM's\n"
          "  -h, --help     this text\n"
          "\n"
          "An argument is one of:\n"
          "  X.npy          an array: a tensor; a 0-d int64/float64/bool array for an\n"
          "                 int/float/bool parameter; a 1-d array for a List[int],\n"
          "                 List[float] or List[bool]; a 1-d uint8 array (UTF-8) for a str\n"
          "  none           None, for an Optional parameter\n"
          "  str:TEXT       a str\n"
          "  [ ARG ... ]    a List of tensors, Optionals, strs or tuples (the brackets\n"
          "                 are words of their own: [ a.npy b.npy ])\n"
          "  ( ARG ... )    a Tuple (quote the parentheses in a shell: '(' a.npy ')')\n"
          "Write a file named none as ./none. An int/float/bool output is written as a\n"
          "0-d int64/float64/bool array, a List[int]/List[float]/List[bool] as one\n"
          "array, a dict's values in order; None writes nothing.\n"
          "\n"
          "Exit status: 0 success, 1 a model or input error, 2 usage error.\n");
}

static void ts_run_short_usage(void) {
  fprintf(stderr, "usage: tsaot-run MODEL.pt [ARG ...] -o OUTDIR [--threads N] [--method NAME] [--optimize] "
                  "(--help: more)\n");
}

/* Makes `dir` and its parents. */
static bool ts_run_mkdirs(const char *dir) {
  size_t n = strlen(dir);
  char *p = malloc(n + 1);
  if (!p)
    return false;
  memcpy(p, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/' && p[i] != 0)
      continue;
    char keep = p[i];
    p[i] = 0;
    if (mkdir(p, 0777) != 0 && errno != EEXIST) {
      free(p);
      return false;
    }
    p[i] = keep;
  }
  free(p);
  struct stat st;
  return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct ts_run_out {
  ts_rt_ctx *ctx;
  const char *dir;
  int count;
} ts_run_out;

/* Writes one flattened output as the next outN.npy (runtime/hosted/io.c's rules). */
static bool ts_run_write(void *arg, ts_rt_tensor *t, ts_iv v) {
  ts_run_out *o = arg;
  if (!t) {
    fprintf(stderr, "tsaot-run: note: an output of type %s has no .npy form; skipped\n", ts_iv_tag_name(v));
    return true;
  }
  ts_buf path = {0};
  ts_buf_printf(&path, "%s/out%d.npy", o->dir, o->count++);
  bool ok = !path.failed && ts_rt_npy_write(o->ctx, path.data, t);
  if (path.failed)
    ts_rt_oom(o->ctx);
  ts_buf_free(&path);
  return ok;
}

/* ----------------------------------------------------- compiled models */

/* Whether a message starts "FILE:LINE:COL: error: ", as compiled code
 * places the error of a node with a source location. */
static bool ts_run_placed(const char *e) {
  const char *p = strstr(e, ": error: ");
  for (int field = 0; p && field < 2; field++) {
    const char *q = p;
    while (q > e && q[-1] >= '0' && q[-1] <= '9')
      q--;
    if (q == p || q == e || q[-1] != ':')
      return false;
    p = q - 1;
  }
  return p != NULL && p > e;
}

/* Runs a compiled model (tsaot MODEL.pt -o MODEL.so): the model's name
 * from its exported tsaot_model_name, then NAME_run on the .npy inputs as
 * DLTensors (the library applies the 0-d rules), the outputs written as
 * for a .pt. */
static int ts_run_so(const char *path, const ts_tool_arg *args, uint32_t nargs, const char *outdir, int nthreads,
                     bool cuda) {
  ts_tool_so f;
  char why[1024];
  if (!ts_tool_so_open(&f, path, why, sizeof why)) {
    fprintf(stderr, "tsaot-run: error: %s\n", why);
    return 1;
  }
  int rc = 1, nout = 0;
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  ts_tool_slots slots = {0};
  DLTensor *dls = NULL;
  DLManagedTensor **outs = NULL;
  if (f.init() != 0) {
    fprintf(stderr, "tsaot-run: error: %s: cannot load the model: %s\n", path, f.last_error());
    goto out;
  }
  if (cuda && f.set_device("cuda") != 0) {
    fprintf(stderr, "tsaot-run: error: %s: --device cuda: %s\n", path, f.last_error());
    goto out;
  }
  f.set_threads(nthreads);
  /* one array per argument: the count is the model's, as in ABI 1 (other
   * forms are for the library to judge: lists of another length run) */
  bool words = true;
  for (uint32_t k = 0; k < nargs; k++)
    words = words && args[k].kind == TS_TOOL_ARG_WORD;
  if (words && f.num_inputs() >= 0 && (int)nargs != f.num_inputs()) {
    fprintf(stderr, "tsaot-run: error: %s: the model takes %d argument%s, %u given\n", path, f.num_inputs(),
            f.num_inputs() == 1 ? "" : "s", nargs);
    goto out;
  }
  if (!ts_tool_slots_make(&ctx, args, nargs, &slots)) {
    fprintf(stderr, "tsaot-run: error: %s\n", ctx.err.data ? ctx.err.data : "out of memory");
    goto out;
  }
  if (!(dls = calloc(slots.n + 1, sizeof *dls))) {
    fprintf(stderr, "tsaot-run: error: out of memory\n");
    goto out;
  }
  for (uint32_t k = 0; k < slots.n; k++) {
    if (!slots.t[k])
      dls[k] = tsaot_none();
    else if (!ts_rt_tensor_to_dl(slots.t[k], &dls[k])) {
      fprintf(stderr, "tsaot-run: error: %s: unsupported dtype\n", slots.word[k]);
      goto out;
    }
  }
  /* a model whose output count only a run knows: room for plenty */
  int cap = f.num_outputs() >= 0 ? f.num_outputs() : 4096;
  if (!(outs = calloc((size_t)cap + 1, sizeof *outs))) {
    fprintf(stderr, "tsaot-run: error: out of memory\n");
    goto out;
  }
  int r = f.run(dls, (int)slots.n, outs, cap, &nout);
  if (r != 0) {
    /* a failing node's error comes placed ("file:line:col: error: ...") */
    const char *e = f.last_error();
    fprintf(stderr, "%s%s\n", ts_run_placed(e) ? "" : "tsaot-run: error: ", e);
    nout = 0;
    goto out;
  }
  if (f.last_bailout())
    fprintf(stderr, "tsaot-run: note: ran in the interpreter: %s\n", f.last_error());
  if (cuda) {
    tsaot_device_stats ds;
    f.device_stats(&ds);
    fprintf(stderr,
            "tsaot-run: note: %s: %llu kernel launches, %llu cuBLAS calls, %llu ops on the CPU with GPU data, "
            "%llu bytes to the GPU, %llu back\n",
            ds.description, (unsigned long long)ds.kernel_launches, (unsigned long long)ds.gemms,
            (unsigned long long)ds.host_ops, (unsigned long long)ds.bytes_to_device,
            (unsigned long long)ds.bytes_to_host);
  }
  if (!ts_run_mkdirs(outdir)) {
    fprintf(stderr, "tsaot-run: error: %s: cannot make the folder: %s\n", outdir, strerror(errno));
    goto out;
  }
  ts_run_out o = {.ctx = &ctx, .dir = outdir};
  for (int k = 0; k < nout; k++) {
    ts_rt_tensor *t = ts_rt_tensor_from_dl(&ctx, &outs[k]->dl_tensor);
    bool ok = t && ts_run_write(&o, t, ts_iv_tensor(t));
    if (t)
      ts_rt_tensor_release(t);
    if (!ok) {
      fprintf(stderr, "tsaot-run: error: %s\n", ctx.err.data ? ctx.err.data : "cannot write the outputs");
      goto out;
    }
  }
  rc = 0;
out:
  for (int k = 0; k < nout; k++)
    if (outs[k]->deleter)
      outs[k]->deleter(outs[k]);
  free(outs);
  ts_tool_slots_free(&slots);
  free(dls);
  if (f.release)
    f.release();
  ts_rt_ctx_free(&ctx);
  /* no dlclose: the library's one-time tables (its op table, its kernels'
   * bindings) live until exit, as they would in the program it belongs to */
  return rc;
}

/* --strict: the operators without a kernel that graph g reaches, listed as
 * tsaot lists them; false (the model refused) when there is one. */
static bool ts_run_strict(ts_rt_model *m, const ts_graph *g, const char *path, const char *method) {
  ts_pass_missing_set s = {0};
  ts_pass_missing_collect(&s, g, 0);
  bool ok = !s.oom && !s.n;
  if (s.oom)
    fprintf(stderr, "tsaot-run: error: out of memory\n");
  else if (s.n) {
    ts_buf b = {0};
    uint32_t nops = ts_pass_missing_print(&b, &s, ts_rt_model_source, m, NULL, 0);
    fprintf(stderr, "tsaot-run: %s: error: %s reaches %u operator%s that tsaot has no kernel for, at %u place%s; "
                    "refused (--strict)\n%s",
            path, method, nops, nops == 1 ? "" : "s", s.n, s.n == 1 ? "" : "s",
            b.data && !b.failed ? b.data : "  (out of memory)\n");
    ts_buf_free(&b);
  }
  ts_pass_missing_free(&s);
  return ok;
}

int main(int argc, char **argv) {
  const char *path = NULL, *outdir = NULL, *method = "forward", *passes = NULL, *log = NULL, *device = "cpu";
  bool stats = false, strict = false;
  int nthreads = 0;
  const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
  int ninputs = 0;
  if (!inputs) {
    fprintf(stderr, "tsaot-run: error: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      ts_tool_print_version("tsaot-run");
      free(inputs);
      return 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_run_usage(stdout);
      free(inputs);
      return 0;
    } else if (strcmp(a, "--optimize") == 0) {
      passes = "default";
    } else if (strcmp(a, "--print-after-all") == 0) {
      log = "all";
    } else if (strcmp(a, "--stats") == 0) {
      stats = true;
    } else if (strcmp(a, "--strict") == 0) {
      strict = true;
    } else if (strcmp(a, "--passes") == 0) {
      if (++i == argc) {
        fprintf(stderr, "tsaot-run: error: %s needs a value\n", a);
        free(inputs);
        return 2;
      }
      const char *bad;
      size_t k;
      if (!ts_pass_list_check(argv[i], false, &bad, &k)) {
        fprintf(stderr, "tsaot-run: error: unknown pass '%.*s' (tsaot-opt --help lists them)\n", (int)k, bad);
        free(inputs);
        return 2;
      }
      passes = argv[i];
    } else if (strcmp(a, "--device") == 0) {
      if (++i == argc || (strcmp(argv[i], "cpu") != 0 && strcmp(argv[i], "cuda") != 0)) {
        fprintf(stderr, "tsaot-run: error: --device wants cpu or cuda\n");
        free(inputs);
        return 2;
      }
      device = argv[i];
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--threads") == 0 || strcmp(a, "--method") == 0) {
      if (++i == argc) {
        fprintf(stderr, "tsaot-run: error: %s needs a value\n", a);
        free(inputs);
        return 2;
      }
      if (a[1] == 'o')
        outdir = argv[i];
      else if (a[2] == 'm')
        method = argv[i];
      else {
        char *end;
        errno = 0;
        long n = strtol(argv[i], &end, 10);
        if (errno || *end || end == argv[i] || n < 1 || n > 1024) {
          fprintf(stderr, "tsaot-run: error: --threads wants a number from 1 to 1024, got '%s'\n", argv[i]);
          free(inputs);
          return 2;
        }
        nthreads = (int)n;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tsaot-run: error: unknown option '%s'\n", a);
      ts_run_short_usage();
      free(inputs);
      return 2;
    } else if (!path)
      path = a;
    else
      inputs[ninputs++] = a;
  }
  if (!path || !outdir) {
    if (path) {
      fprintf(stderr, "tsaot-run: error: no output folder (-o OUTDIR)\n");
      ts_run_short_usage();
    } else
      ts_run_usage(stderr);
    free(inputs);
    return 2;
  }
  ts_tool_arg *targs = NULL;
  uint32_t ntargs = 0;
  char why[256];
  if (!ts_tool_args_parse(inputs, (uint32_t)ninputs, &targs, &ntargs, why, sizeof why)) {
    fprintf(stderr, "tsaot-run: error: the arguments: %s\n", why);
    ts_run_short_usage();
    free(inputs);
    return 2;
  }
  size_t plen = strlen(path);
  if (plen > 3 && strcmp(path + plen - 3, ".so") == 0) {
    if (passes || log || stats || strict || strcmp(method, "forward") != 0) {
      fprintf(stderr, "tsaot-run: error: --method, --optimize, --passes, --print-after-all, --stats and --strict "
                      "are for MODEL.pt, not a compiled MODEL.so (tsaot --strict refuses at compile time)\n");
      ts_tool_args_free(targs, ntargs);
      free(inputs);
      return 2;
    }
    int rc = ts_run_so(path, targs, ntargs, outdir, nthreads, strcmp(device, "cuda") == 0);
    ts_tool_args_free(targs, ntargs);
    free(inputs);
    return rc;
  }

  if (strcmp(device, "cuda") == 0) {
    fprintf(stderr, "tsaot-run: error: --device cuda runs a model compiled by tsaot --device cuda (MODEL.so); the "
                    "interpreter runs on the CPU only\n");
    ts_tool_args_free(targs, ntargs);
    free(inputs);
    return 2;
  }
  int rc = 1;
  ts_diag d = {0};
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, nthreads);
  ts_iv *args = calloc((size_t)ntargs + 1, sizeof *args);
  ts_tool_slots slots = {0};
  const ts_type **ptypes = NULL;
  const char **pnames = NULL;
  ts_iv ret = ts_iv_none();
  bool have_ret = false;
  ts_buf where = {0};
  ts_rt_model *m = NULL;
  ts_graph *og = NULL;
  if (!args) {
    fprintf(stderr, "tsaot-run: error: out of memory\n");
    goto out;
  }
  if (!(m = ts_rt_model_load(path, &d))) {
    if (!ts_tool_explain_not_torchscript("tsaot-run", path))
      ts_tool_diag_print("tsaot-run", d.text.data, "cannot load the model");
    goto out;
  }
  ts_graph *g = ts_rt_model_graph(m, method, &d);
  if (!g) {
    ts_tool_diag_print("tsaot-run", d.text.data, "cannot compile the method");
    goto out;
  }
  uint32_t nparams = ts_block_ninputs(g->block) - 1;
  /* fewer is fine where the method has defaults: ts_rt_model_run fills them */
  if (ntargs > nparams) {
    ts_buf names = {0};
    for (uint32_t k = 0; k < nparams; k++) {
      const ts_value *v = ts_block_input(g->block, k + 1);
      ts_buf_printf(&names, "%s%s", k ? ", " : "", v->name ? v->name : "?");
    }
    fprintf(stderr, "tsaot-run: error: %s: %s takes %u argument%s (%s), %u given\n", path, method, (unsigned)nparams,
            nparams == 1 ? "" : "s", names.data ? names.data : "", ntargs);
    ts_buf_free(&names);
    goto out;
  }
  /* the arguments: their shapes against the parameters' types, then the
   * arrays read and made into values (runtime/hosted/io.c) */
  ptypes = calloc(ntargs + 1, sizeof *ptypes);
  pnames = calloc(ntargs + 1, sizeof *pnames);
  if (!ptypes || !pnames) {
    fprintf(stderr, "tsaot-run: error: out of memory\n");
    goto out;
  }
  for (uint32_t k = 0; k < ntargs; k++) {
    const ts_value *pv = ts_block_input(g->block, k + 1);
    ptypes[k] = pv->type;
    pnames[k] = pv->name;
  }
  ts_buf bad = {0};
  bool aok = ts_tool_args_check(targs, ntargs, ptypes, pnames, NULL, NULL, NULL, NULL, &bad) &&
             ts_tool_slots_make(&ctx, targs, ntargs, &slots);
  if (aok && !ts_tool_slots_values(&ctx, &slots, ptypes, pnames, ntargs, args, &bad))
    aok = false;
  if (!aok) {
    fprintf(stderr, "tsaot-run: error: %s\n", bad.len ? bad.data : ctx.err.data ? ctx.err.data : "bad input");
    ts_buf_free(&bad);
    goto out;
  }
  ts_buf_free(&bad);
  if (passes) {
    /* the optimized copy; the model's own graph stays for the argument
     * checks above and the defaults */
    uint32_t before = ts_graph_count_nodes(g);
    const ts_type **types = NULL;
    og = ts_graph_copy(g);
    if (!og) {
      fprintf(stderr, "tsaot-run: error: out of memory\n");
      goto out;
    }
    /* the spec: each tensor argument's dtype and sizes (numbers and lists
     * made from arrays stay unspecified) */
    if (!(types = calloc(ts_block_ninputs(og->block), sizeof *types))) {
      fprintf(stderr, "tsaot-run: error: out of memory\n");
      goto out;
    }
    for (uint32_t k = 0; k < ntargs; k++)
      if (args[k].tag == TS_IV_TENSOR && !(types[k + 1] = ts_pass_spec_of_tensor(ts_graph_arena(og), args[k].u.t))) {
        fprintf(stderr, "tsaot-run: error: out of memory\n");
        free(types);
        goto out;
      }
    ts_iv root = ts_rt_model_root(m);
    ts_pass_env env = {.d = &d,
                       .module = &root,
                       .input_types = types,
                       .ninput_types = ts_block_ninputs(og->block),
                       .log_passes = log};
    bool pok = ts_pass_run_list(og, passes, &env);
    free(types);
    if (!pok) {
      ts_tool_diag_print("tsaot-run", d.text.data, "a pass failed");
      goto out;
    }
    if (stats)
      fprintf(stderr, "tsaot-run: %s: %u nodes before the passes, %u after (%u prim::FusionGroup)\n", path,
              before, ts_graph_count_nodes(og), ts_graph_count_kind(og, TS_K_prim_FusionGroup));
  }
  if (strict && !ts_run_strict(m, og ? og : g, path, method))
    goto out;
  bool ok = ts_rt_model_run_graph(m, &ctx, method, og, args, ntargs, &ret, &where);
  if (ctx.out.len) {
    fwrite(ctx.out.data, 1, ctx.out.len, stdout);
    fflush(stdout);
  }
  if (!ok) {
    if (where.len)
      fputs(where.data, stderr);
    else
      fprintf(stderr, "tsaot-run: error: %s\n", ctx.err.data ? ctx.err.data : "the model failed");
    goto out;
  }
  have_ret = true;
  if (!ts_run_mkdirs(outdir)) {
    fprintf(stderr, "tsaot-run: error: %s: cannot make the folder: %s\n", outdir, strerror(errno));
    goto out;
  }
  ts_run_out o = {.ctx = &ctx, .dir = outdir};
  if (!ts_rt_io_flatten(&ctx, ret, ts_run_write, &o)) {
    fprintf(stderr, "tsaot-run: error: %s\n", ctx.err.data ? ctx.err.data : "cannot write the outputs");
    goto out;
  }
  rc = 0;
out:
  if (have_ret)
    ts_iv_release(ret);
  for (uint32_t k = 0; args && k < ntargs; k++)
    ts_iv_release(args[k]);
  free(args);
  ts_tool_slots_free(&slots);
  free(ptypes);
  free(pnames);
  ts_tool_args_free(targs, ntargs);
  ts_graph_free(og);
  ts_rt_model_free(m);
  ts_buf_free(&where);
  ts_diag_free(&d);
  ts_rt_ctx_free(&ctx);
  free(inputs);
  return rc;
}
