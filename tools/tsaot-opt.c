/* tools/tsaot-opt.c: runs passes on a graph and prints it.
 *
 *   tsaot-opt FILE.ir|MODEL.pt -p PASS[,PASS...] [-o OUT] [--no-verify]
 *             [--method NAME] [--input SPEC]... [--example X.npy]...
 *             [--print-after-all] [--print-after PASS[,PASS...]]
 *
 * A text graph is read in PyTorch's format; a model (an archive
 * torch.jit.save wrote) gives the inlined graph of a method of its root
 * module, with the module object for freezing. Exit status: 0 success, 1
 * the graph is malformed, fails to verify or a pass fails, 2 usage error. */
#include "ir.h"
#include "loader.h"
#include "passes.h"
#include "tool_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_OPT_MAX_INPUT = 1 << 30 };

static void ts_opt_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-opt FILE.ir|MODEL.pt -p PASS[,PASS...] [options]\n"
          "\n"
          "Reads a graph in PyTorch's text format (FILE '-' reads standard input), or\n"
          "the inlined graph of a method of a model's root module, verifies it, runs\n"
          "the passes in order, verifying the graph after each, and prints the result.\n"
          "\n"
          "  -p PASSES          comma-separated pass list, run in order; 'default' is\n"
          "                     the whole optimization pipeline, 'none' nothing;\n"
          "                     the passes:\n");
  uint32_t n;
  const ts_pass_info *const *all = ts_pass_all(&n);
  for (uint32_t i = 0; i < n; i++)
    fprintf(f, "                       %-24s %s\n", all[i]->name, all[i]->summary);
  fprintf(f,
          "  -o OUT             write the graph to OUT instead of standard output\n"
          "  --method NAME      with a model: the method (default: forward)\n"
          "  --input SPEC       the next argument's spec for shape-prop, as\n"
          "                     f32[1,3,224,224] (arguments after self, in order)\n"
          "  --example X.npy    the next argument's spec from an example array\n"
          "  --print-after-all  print the graph after every pass (to stderr)\n"
          "  --print-after L    print it after the passes named in L (TSAOT_LOG=L\n"
          "                     does the same)\n"
          "  --no-verify        skip the verifier, before and after the passes (for\n"
          "                     looking at broken graphs)\n"
          "  --version          tsaot's version and LLVM's\n"
          "  -h, --help         this text\n"
          "\n"
          "The default pipeline: %s\n"
          "\n"
          "Exit status: 0 success, 1 malformed or invalid graph or a failed pass,\n"
          "2 usage error.\n",
          ts_pass_default_pipeline);
}

static bool ts_opt_is_model(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".pt") == 0;
}

/* Whether the list names only passes; prints the first name that is not. */
static bool ts_opt_check_names(const char *list, bool log_list) {
  const char *bad;
  size_t n;
  if (ts_pass_list_check(list, log_list, &bad, &n))
    return true;
  fprintf(stderr, "tsaot-opt: error: unknown pass '%.*s' (tsaot-opt --help lists them)\n", (int)n, bad);
  return false;
}

int main(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *passes = NULL, *method = "forward", *log = NULL;
  bool verify = true;
  const char **specs = calloc((size_t)argc + 1, sizeof *specs);
  uint32_t nspecs = 0;
  if (!specs) {
    fprintf(stderr, "tsaot-opt: error: out of memory\n");
    return 1;
  }
  int rc = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      ts_tool_print_version("tsaot-opt");
      free(specs);
      return 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_opt_usage(stdout);
      free(specs);
      return 0;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "-o") == 0 || strcmp(a, "--method") == 0 ||
               strcmp(a, "--input") == 0 || strcmp(a, "--example") == 0 || strcmp(a, "--print-after") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tsaot-opt: error: %s needs an argument\n", a);
        goto done;
      }
      const char *v = argv[++i];
      if (a[1] == 'p')
        passes = v;
      else if (a[1] == 'o')
        out = v;
      else if (a[2] == 'm')
        method = v;
      else if (a[2] == 'i' || a[2] == 'e')
        specs[nspecs++] = v;
      else
        log = v;
    } else if (strncmp(a, "-p", 2) == 0 && a[2]) {
      passes = a + 2;
    } else if (strcmp(a, "--print-after-all") == 0) {
      log = "all";
    } else if (strcmp(a, "--no-verify") == 0) {
      verify = false;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tsaot-opt: error: unknown option '%s'\n", a);
      ts_opt_usage(stderr);
      goto done;
    } else if (in) {
      fprintf(stderr, "tsaot-opt: error: more than one input file ('%s' and '%s')\n", in, a);
      goto done;
    } else {
      in = a;
    }
  }
  if (!in || !passes) {
    fprintf(stderr, "tsaot-opt: error: %s\n", !in ? "no input file" : "no pass list (-p none prints the graph as read)");
    ts_opt_usage(stderr);
    goto done;
  }
  if (!ts_opt_check_names(passes, false) || (log && !ts_opt_check_names(log, true)))
    goto done;

  rc = 1;
  ts_diag d = {.max_errors = 20};
  ts_graph *g = NULL;
  ts_rt_model *m = NULL;
  ts_iv root = ts_iv_none();
  char *src = NULL;
  const ts_type **types = NULL;
  bool told = false; /* the load's failure is explained already */
  if (ts_opt_is_model(in)) {
    m = ts_rt_model_load(in, &d);
    told = !m && ts_tool_explain_not_torchscript("tsaot-opt", in);
    ts_graph *mg = m ? ts_rt_model_graph(m, method, &d) : NULL;
    if (mg && !(g = ts_graph_copy(mg)))
      ts_diag_error(&d, "out of memory");
    if (m)
      root = ts_rt_model_root(m);
  } else {
    size_t len;
    src = ts_tool_read_file("tsaot-opt", in, TS_OPT_MAX_INPUT, &len);
    if (!src) {
      ts_diag_free(&d);
      goto done;
    }
    g = ts_graph_parse(strcmp(in, "-") == 0 ? "<stdin>" : in, src, len, &d);
  }
  if (g && nspecs && !(types = ts_tool_input_types(g, specs, nspecs, &d))) {
    ts_graph_free(g);
    g = NULL;
  }
  ts_pass_env env = {
      .d = &d,
      .module = m ? &root : NULL,
      .input_types = types,
      .ninput_types = types ? ts_block_ninputs(g->block) : 0,
      .log_passes = log,
      .no_verify = !verify,
  };
  if (g && ((verify && !ts_graph_verify(g, &d)) || !ts_pass_run_list(g, passes, &env))) {
    ts_graph_free(g);
    g = NULL;
  }
  if (g) {
    ts_buf b = {0};
    ts_graph_print(&b, g);
    FILE *f = out ? fopen(out, "wb") : stdout;
    if (b.failed)
      fprintf(stderr, "tsaot-opt: error: out of memory while printing\n");
    else if (!f)
      fprintf(stderr, "tsaot-opt: error: cannot write '%s': %s\n", out, strerror(errno));
    else if (fwrite(b.data, 1, b.len, f) != b.len || fflush(f) != 0)
      fprintf(stderr, "tsaot-opt: error: cannot write '%s'\n", out ? out : "<stdout>");
    else
      rc = 0;
    if (f && f != stdout)
      fclose(f);
    ts_buf_free(&b);
    ts_graph_free(g);
  } else if (!told) {
    ts_tool_diag_print("tsaot-opt", d.text.data, "cannot read the graph");
    if (d.errors > d.max_errors)
      fprintf(stderr, "tsaot-opt: note: %d more errors not shown\n", d.errors - d.max_errors);
  }
  free(types);
  ts_rt_model_free(m);
  ts_diag_free(&d);
  free(src);
done:
  free(specs);
  return rc;
}
