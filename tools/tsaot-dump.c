/* tools/tsaot-dump.c: loads a TorchScript archive and prints a method's
 * graph in PyTorch's text format, or the module tree.
 *
 *   tsaot-dump MODEL.pt [--inlined] [--frozen] [--method NAME] [--code]
 *
 * --frozen prints what torch.jit.freeze would make of the method: the
 * inlined graph with the root module's attributes as constants, then the
 * cleanups PyTorch's freezing runs (ts_dump_frozen_passes).
 *
 * Exit status: 0 success, 1 the model cannot be loaded or compiled, 2 usage
 * error. */
#include "frontend.h"
#include "loader.h"
#include "passes.h"

#include <stdio.h>
#include <string.h>

/* What --frozen runs on the inlined graph: freezing, then the part of
 * torch.jit.freeze's cleanup (and of OptimizeFrozenGraph) written so far.
 * peephole decides the rank checks on conv outputs (dim(conv2d) == 4) so
 * that batch_norm's input has no other use and folds. */
static const char ts_dump_frozen_passes[] = "freeze,lower-simple-tuples,constprop,remove-dropout,peephole,"
                                            "constprop,fold-conv-bn,constant-pooling,dce";

static void ts_dump_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-dump MODEL.pt [--inlined] [--frozen] [--method NAME] [--code]\n"
          "\n"
          "Loads MODEL.pt (an archive torch.jit.save wrote) and prints the graph of\n"
          "one method of its root module in PyTorch's text format.\n"
          "\n"
          "  --method NAME  the method to print (default: forward)\n"
          "  --inlined      inline every call, like PyTorch's `inlined_graph`\n"
          "  --frozen       the graph after freezing, as torch.jit.freeze gives it: the\n"
          "                 inlined graph with the root module's parameters and\n"
          "                 attributes as constants, dropout in eval mode removed,\n"
          "                 batch_norm folded into the conv/linear before it\n"
          "  --code         print the module tree instead: classes, attributes with\n"
          "                 their types and values, constants and method signatures\n"
          "  -h, --help     this text\n"
          "\n"
          "Exit status: 0 success, 1 the model cannot be loaded or compiled, 2 usage error.\n");
}

/* --frozen: the model as the runtime loads it (the module object whose
 * tensors the frozen constants point at), its inlined method graph copied
 * and frozen. 0 or 1 as main returns. */
static int ts_dump_frozen(const char *path, const char *method, ts_buf *out, ts_diag *d) {
  int rc = 1;
  ts_rt_model *m = ts_rt_model_load(path, d);
  ts_graph *src = m ? ts_rt_model_graph(m, method, d) : NULL;
  ts_graph *g = src ? ts_graph_copy(src) : NULL;
  if (src && !g)
    ts_diag_error(d, "out of memory");
  if (g) {
    ts_iv root = ts_rt_model_root(m);
    ts_pass_env env = {.d = d, .module = &root};
    if (ts_pass_run_list(g, ts_dump_frozen_passes, &env)) {
      ts_graph_print(out, g);
      rc = 0;
    }
  }
  ts_graph_free(g);
  ts_rt_model_free(m);
  return rc;
}

/* Prints the output or the errors; frees both. Returns rc, or 1 when the
 * output ran out of memory. */
static int ts_dump_finish(int rc, const char *path, ts_buf *out, ts_diag *d) {
  if (rc == 0 && out->failed) {
    fprintf(stderr, "tsaot-dump: error: out of memory\n");
    rc = 1;
  }
  if (rc == 0)
    fwrite(out->data, 1, out->len, stdout);
  if (d->text.len)
    fwrite(d->text.data, 1, d->text.len, stderr);
  if (rc && d->errors > d->max_errors && d->max_errors)
    fprintf(stderr, "tsaot-dump: %d more errors not shown\n", d->errors - d->max_errors);
  if (rc && !d->text.len)
    fprintf(stderr, "tsaot-dump: error: %s: cannot load the model\n", path);
  ts_buf_free(out);
  ts_diag_free(d);
  return rc;
}

int main(int argc, char **argv) {
  const char *path = NULL, *method = "forward";
  bool inlined = false, code = false, frozen = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_dump_usage(stdout);
      return 0;
    } else if (strcmp(a, "--inlined") == 0)
      inlined = true;
    else if (strcmp(a, "--frozen") == 0)
      frozen = true;
    else if (strcmp(a, "--code") == 0)
      code = true;
    else if (strcmp(a, "--method") == 0) {
      if (++i == argc) {
        fprintf(stderr, "tsaot-dump: error: --method needs a name\n");
        return 2;
      }
      method = argv[i];
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tsaot-dump: error: unknown option '%s'\n", a);
      ts_dump_usage(stderr);
      return 2;
    } else if (path) {
      fprintf(stderr, "tsaot-dump: error: more than one model given\n");
      return 2;
    } else
      path = a;
  }
  if (!path) {
    ts_dump_usage(stderr);
    return 2;
  }
  if (frozen && code) {
    fprintf(stderr, "tsaot-dump: error: --frozen prints a graph, --code the module tree: give one\n");
    return 2;
  }
  ts_diag d = {0};
  d.max_errors = 50;
  int rc = 1;
  ts_buf out = {0};
  if (frozen) {
    rc = ts_dump_frozen(path, method, &out, &d);
    return ts_dump_finish(rc, path, &out, &d);
  }
  ts_fe_model *m = ts_fe_model_load(path, &d);
  if (m) {
    if (code) {
      if (ts_fe_model_print_code(m, &out, &d))
        rc = 0;
    } else {
      ts_graph *g = inlined ? ts_fe_model_method_inlined(m, method, &d) : ts_fe_model_method(m, method, &d);
      if (g) {
        ts_graph_print(&out, g);
        rc = 0;
      }
    }
  }
  ts_fe_model_free(m);
  return ts_dump_finish(rc, path, &out, &d);
}
