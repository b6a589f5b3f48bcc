/* tools/tsaot-dump.c: loads a TorchScript archive and prints a method's
 * graph in PyTorch's text format, or the module tree; or a summary of an
 * archive or of a library tsaot compiled.
 *
 *   tsaot-dump MODEL.pt [--inlined] [--frozen] [--method NAME] [--code]
 *   tsaot-dump --summary MODEL.pt|MODEL.so
 *
 * --frozen prints what torch.jit.freeze would make of the method: the
 * inlined graph with the root module's attributes as constants, then the
 * cleanups PyTorch's freezing runs (ts_dump_frozen_passes).
 *
 * Exit status: 0 success, 1 the model cannot be loaded or compiled, 2 usage
 * error. */
#include "archive.h"
#include "frontend.h"
#include "loader.h"
#include "passes.h"
#include "so_load.h"
#include "tool_util.h"

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
          "       tsaot-dump --summary MODEL.pt|MODEL.so\n"
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
          "  --summary      print what the model is instead: of MODEL.pt its methods,\n"
          "                 forward's arguments and result, weight bytes, the operators\n"
          "                 after tsaot's passes with counts and those tsaot has no\n"
          "                 kernel for with their source lines; of MODEL.so (a library\n"
          "                 tsaot wrote) its input and output specs, arena size, and\n"
          "                 what the compiler recorded: version, target, weights,\n"
          "                 arena, operators (argument names where the library has\n"
          "                 NAME_signature)\n"
          "  --version      tsaot's version and LLVM's\n"
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

/* ------------------------------------------------------------ --summary */

static bool ts_dump_ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A slot's spec as tsaot-run's messages write them: f32[4,16], int, ... */
static void ts_dump_spec(ts_buf *b, const tsaot_spec *sp) {
  int kind = sp->kind & TSAOT_SPEC_KIND_MASK;
  if (sp->kind & TSAOT_SPEC_OPTIONAL)
    ts_buf_puts(b, "Optional ");
  static const char *const kinds[] = {NULL, "int", "float", "bool", "None", NULL, "str", NULL};
  if (kind == TSAOT_SPEC_LENGTH) {
    if (sp->ndim >= 1 && sp->shape && sp->shape[0] >= 0)
      ts_buf_printf(b, "a list's length, %lld (a 0-d int64)", (long long)sp->shape[0]);
    else
      ts_buf_puts(b, "a list's length, any (a 0-d int64)");
    return;
  }
  if (kind >= 0 && kind < 8 && kinds[kind]) {
    ts_buf_puts(b, kinds[kind]);
    return;
  }
  const char *code = "?";
  switch ((int)sp->dtype.code) {
  case 6: /* kDLBool of DLPack 0.8; Debian's header (0.6) predates it */
    code = "bool";
    break;
  case kDLFloat:
    code = "f";
    break;
  case kDLInt:
    code = "i";
    break;
  case kDLUInt:
    code = "u";
    break;
  case kDLBfloat:
    code = "bf";
    break;
  case kDLComplex:
    code = "c";
    break;
  default:
    break;
  }
  if (sp->dtype.code == 6)
    ts_buf_puts(b, code);
  else
    ts_buf_printf(b, "%s%u", code, (unsigned)sp->dtype.bits);
  if (kind == TSAOT_SPEC_LIST)
    ts_buf_puts(b, " list");
  if (sp->ndim < 0) {
    ts_buf_puts(b, "[...]");
    return;
  }
  ts_buf_putc(b, '[');
  for (int32_t i = 0; i < sp->ndim && sp->shape; i++) {
    if (sp->shape[i] < 0)
      ts_buf_printf(b, "%s?", i ? "," : "");
    else
      ts_buf_printf(b, "%s%lld", i ? "," : "", (long long)sp->shape[i]);
  }
  ts_buf_putc(b, ']');
}

/* The slots of inputs (in) or outputs (!in): n of them, or (n < 0) as many
 * as the spec function gives, up to a bound. */
static void ts_dump_slots(ts_buf *b, const char *what, int n, int (*spec)(int, tsaot_spec *)) {
  enum { TS_DUMP_MAX_SLOTS = 4096 };
  if (n < 0)
    ts_buf_printf(b, "%ss: a number of slots that depends on the values; one form:\n", what);
  else
    ts_buf_printf(b, "%ss: %d slot%s\n", what, n, n == 1 ? "" : "s");
  for (int i = 0; i < (n < 0 ? TS_DUMP_MAX_SLOTS : n); i++) {
    tsaot_spec sp;
    if (spec(i, &sp) != TSAOT_OK)
      break;
    ts_buf_printf(b, "  %s %d: ", what, i);
    ts_dump_spec(b, &sp);
    ts_buf_putc(b, '\n');
  }
}

/* --summary of a library tsaot wrote: the ABI's specs and arena size, and
 * what the compiler embedded (NAME_tsaot_info, NAME_signature) where the
 * library has them. */
static int ts_dump_summary_so(const char *path, ts_buf *b) {
  ts_tool_so so;
  char why[512];
  if (!ts_tool_so_open(&so, path, why, sizeof why)) {
    fprintf(stderr, "tsaot-dump: error: %s\n", why);
    return 1;
  }
  ts_buf_printf(b, "library: %s (compiled by tsaot; its functions are %s_*)\n", path, so.name);
  ts_buf_printf(b, "methods: forward\n");
  if (so.signature) {
    const char *sig = so.signature();
    ts_buf_printf(b, "arguments (%s_signature):\n", so.name);
    for (const char *s = sig ? sig : ""; *s;) {
      const char *nl = strchr(s, '\n');
      size_t len = nl ? (size_t)(nl - s) : strlen(s);
      ts_buf_printf(b, "  %.*s\n", (int)len, s);
      s += len + (nl != NULL);
    }
  } else
    ts_buf_printf(b, "arguments: names not recorded (the library has no %s_signature)\n", so.name);
  ts_dump_slots(b, "input", so.num_inputs(), so.input_spec);
  ts_dump_slots(b, "output", so.num_outputs(), so.output_spec);
  ts_buf_printf(b, "arena size: %zu bytes (%s_arena_size, what run_static needs)\n", so.arena_size(), so.name);
  if (so.info)
    ts_buf_puts(b, so.info);
  else
    ts_buf_printf(b, "tsaot: not recorded (no %s_tsaot_info: compiled by an older tsaot)\n", so.name);
  return 0;
}

/* --summary of a TorchScript archive: the root module's methods (their
 * signatures as --code prints them), forward's arguments and result, the
 * weights' bytes (the archive's storages), and the operators of forward
 * after tsaot's passes, as compiled without examples (not specialised: no
 * arena size yet). */
static int ts_dump_summary_pt(const char *path, ts_buf *b, ts_diag *d) {
  int rc = 1;
  ts_fe_model *fm = ts_fe_model_load(path, d);
  ts_fe_archive *ar = NULL;
  ts_rt_model *m = NULL;
  ts_graph *g = NULL;
  ts_buf code = {0};
  if (!fm || !ts_fe_model_print_code(fm, &code, d))
    goto out;
  /* "self : CLS" first, the root's methods as "  def NAME(self: CLS, ...)" */
  const char *cls = code.data && strncmp(code.data, "self : ", 7) == 0 ? code.data + 7 : "?";
  size_t clslen = strcspn(cls, "\n");
  ts_buf_printf(b, "model: %s (TorchScript; root module %.*s)\n", path, (int)clslen, cls);
  ts_buf_puts(b, "methods:\n");
  for (const char *s = code.data; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    if (len > 6 && strncmp(s, "  def ", 6) == 0) {
      /* "  def forward(self: CLS, x: Tensor) -> Tensor" -> "forward(x: Tensor) -> Tensor" */
      const char *name = s + 6, *paren = memchr(name, '(', len - 6);
      const char *rest = paren ? memchr(paren, ',', (size_t)(s + len - paren)) : NULL;
      const char *close = paren ? memchr(paren, ')', (size_t)(s + len - paren)) : NULL;
      if (paren && rest && (!close || rest < close))
        ts_buf_printf(b, "  %.*s(%.*s\n", (int)(paren - name), name, (int)(s + len - rest - 2), rest + 2);
      else if (paren && close)
        ts_buf_printf(b, "  %.*s(%.*s\n", (int)(paren - name), name, (int)(s + len - close), close);
      else
        ts_buf_printf(b, "  %.*s\n", (int)(len - 6), name);
    }
    s += len + (nl != NULL);
  }
  /* forward's arguments and result, from its graph */
  ts_graph *src = (m = ts_rt_model_load(path, d)) ? ts_rt_model_graph(m, "forward", d) : NULL;
  if (!src)
    goto out;
  uint32_t nin = ts_block_ninputs(src->block);
  ts_buf_printf(b, "inputs: %u argument%s after self (specs: any, until tsaot --example/--input fixes them)\n",
                nin ? nin - 1 : 0, nin == 2 ? "" : "s");
  for (uint32_t i = 1; i < nin; i++) {
    const ts_value *v = ts_block_input(src->block, i);
    ts_buf_printf(b, "  %u %s: ", i - 1, v->name ? v->name : "?");
    ts_type_print(b, v->type);
    ts_buf_putc(b, '\n');
  }
  uint32_t nout = ts_block_noutputs(src->block);
  ts_buf_printf(b, "outputs: %u\n", nout);
  for (uint32_t i = 0; i < nout; i++) {
    ts_buf_printf(b, "  %u: ", i);
    ts_type_print(b, ts_block_output(src->block, i)->type);
    ts_buf_putc(b, '\n');
  }
  /* the weights: the archive's storages */
  if (!(ar = ts_fe_archive_open(path, NULL, d)))
    goto out;
  uint64_t wbytes = 0;
  uint32_t nw = 0;
  for (uint32_t i = 0, n = ts_fe_archive_count(ar); i < n; i++) {
    const char *e = ts_fe_archive_name(ar, i);
    if (strncmp(e, "data/", 5) != 0 && strncmp(e, "constants/", 10) != 0)
      continue;
    size_t len = 0;
    if (!ts_fe_archive_read(ar, e, &len, d))
      goto out;
    wbytes += len;
    nw++;
  }
  ts_buf_printf(b, "weights: %llu bytes in %u storage%s\n", (unsigned long long)wbytes, nw, nw == 1 ? "" : "s");
  ts_buf_puts(b, "arena: not known until compiled (it depends on the input specs)\n");
  ts_buf_puts(b, "target: none (TorchScript, run by the interpreter; tsaot compiles it for one)\n");
  ts_buf_printf(b, "tsaot: %s (LLVM %s), reading it\n", ts_tool_version(), ts_tool_llvm_version());
  /* the operators as tsaot compiles forward without examples */
  if (!(g = ts_graph_copy(src))) {
    ts_diag_error(d, "out of memory");
    goto out;
  }
  ts_iv mroot = ts_rt_model_root(m);
  ts_pass_env env = {.d = d, .module = &mroot};
  if (!ts_pass_run_list(g, "default", &env))
    goto out;
  if (!ts_tool_summary_ops(b, g, ts_rt_model_source, m)) {
    ts_diag_error(d, "out of memory");
    goto out;
  }
  rc = 0;
out:
  ts_buf_free(&code);
  ts_graph_free(g);
  ts_rt_model_free(m);
  ts_fe_archive_close(ar);
  ts_fe_model_free(fm);
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
  if (rc && ts_tool_explain_not_torchscript("tsaot-dump", path)) {
    ts_buf_free(out);
    ts_diag_free(d);
    return rc;
  }
  if (d->text.len)
    ts_tool_diag_print("tsaot-dump", d->text.data, "failed");
  if (rc && d->errors > d->max_errors && d->max_errors)
    fprintf(stderr, "tsaot-dump: note: %d more errors not shown\n", d->errors - d->max_errors);
  if (rc && !d->text.len)
    fprintf(stderr, "tsaot-dump: error: %s: cannot load the model\n", path);
  ts_buf_free(out);
  ts_diag_free(d);
  return rc;
}

int main(int argc, char **argv) {
  const char *path = NULL, *method = "forward";
  bool inlined = false, code = false, frozen = false, summary = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      ts_tool_print_version("tsaot-dump");
      return 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_dump_usage(stdout);
      return 0;
    } else if (strcmp(a, "--inlined") == 0)
      inlined = true;
    else if (strcmp(a, "--frozen") == 0)
      frozen = true;
    else if (strcmp(a, "--code") == 0)
      code = true;
    else if (strcmp(a, "--summary") == 0)
      summary = true;
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
  if (summary && (frozen || code || inlined)) {
    fprintf(stderr, "tsaot-dump: error: --summary prints on its own: not with --inlined, --frozen or --code\n");
    return 2;
  }
  ts_diag d = {0};
  d.max_errors = 50;
  int rc = 1;
  ts_buf out = {0};
  if (summary) {
    /* a library (or a shared object of another name) is read through the
     * ABI; an object file (-c) is not loadable */
    if (ts_dump_ends_with(path, ".so") || strstr(path, ".so.")) {
      rc = ts_dump_summary_so(path, &out);
      if (rc)
        ts_buf_free(&out);
      return rc ? rc : ts_dump_finish(rc, path, &out, &d);
    }
    rc = ts_dump_summary_pt(path, &out, &d);
    return ts_dump_finish(rc, path, &out, &d);
  }
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
