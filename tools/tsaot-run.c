/* tools/tsaot-run.c: runs a model on .npy inputs and writes its outputs as
 * .npy files (../shared/DESIGN.md, "Command-line contract").
 *
 *   tsaot-run MODEL.pt in0.npy ... -o OUTDIR [--threads N] [--method NAME]
 *             [--optimize] [--passes LIST] [--print-after-all] [--stats]
 *
 * --optimize runs the interpreter on the optimization pipeline's output
 * (passes/pipeline.c), specialised to the given inputs, so that the passes
 * are checked on a model before any code generation; --passes runs a list
 * of passes of one's own instead.
 *
 * Inputs: one .npy per argument of the method after self. A 0-d int64,
 * float64 or bool array is an int, float or bool argument where the
 * parameter has that type; any array is a Tensor argument; a 1-d array is a
 * List[int] / List[float] / List[bool] argument.
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
#include "model.h"
#include "npy.h"
#include "passes.h"
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void ts_run_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-run MODEL.pt [in0.npy ...] -o OUTDIR [--threads N] [--method NAME]\n"
          "\n"
          "Runs a method of MODEL.pt (an archive torch.jit.save wrote) in the reference\n"
          "interpreter on the arguments in0.npy ... (after self, in order) and writes its\n"
          "outputs, flattened depth-first, to OUTDIR/out0.npy, out1.npy, ...\n"
          "\n"
          "  -o OUTDIR      where the outputs go (made if missing)\n"
          "  --threads N    threads for the kernels (default: every processor)\n"
          "  --method NAME  the method to run (default: forward)\n"
          "  --optimize     run the optimized graph: the default pass pipeline,\n"
          "                 specialised to these inputs (tsaot-opt --help lists it)\n"
          "  --passes LIST  run the graph after these passes instead (comma-separated;\n"
          "                 'default' is the pipeline)\n"
          "  --print-after-all  print the graph after each pass to stderr\n"
          "                 (TSAOT_LOG=pass,pass prints it after the passes named)\n"
          "  --stats        print node counts before and after the passes to stderr\n"
          "  -h, --help     this text\n"
          "\n"
          "A 0-d int64/float64/bool array is an int/float/bool argument where the\n"
          "method's parameter has that type. An int/float/bool output is written as a\n"
          "0-d int64/float64/bool array, a List[int]/List[float]/List[bool] as one\n"
          "array, a dict's values in order; None writes nothing.\n"
          "\n"
          "Exit status: 0 success, 1 a model or input error, 2 usage error.\n");
}

static void ts_run_short_usage(void) {
  fprintf(stderr, "usage: tsaot-run MODEL.pt [in0.npy ...] -o OUTDIR [--threads N] [--method NAME] [--optimize] "
                  "(--help: more)\n");
}

static const char *ts_run_dtype(ts_dtype dt) {
  switch (dt) {
  case TS_DT_FLOAT32: return "float32";
  case TS_DT_FLOAT64: return "float64";
  case TS_DT_FLOAT16: return "float16";
  case TS_DT_BFLOAT16: return "bfloat16";
  case TS_DT_INT64: return "int64";
  case TS_DT_INT32: return "int32";
  case TS_DT_INT16: return "int16";
  case TS_DT_INT8: return "int8";
  case TS_DT_UINT8: return "uint8";
  case TS_DT_BOOL: return "bool";
  default: return "?";
  }
}

/* "a 2-d float32 array of shape (2, 3)" */
static void ts_run_describe(ts_buf *b, const ts_rt_tensor *t) {
  ts_buf_printf(b, "a %d-d %s array", (int)t->ndim, ts_run_dtype((ts_dtype)t->dtype));
  if (t->ndim) {
    ts_buf_puts(b, " of shape (");
    for (int32_t i = 0; i < t->ndim; i++)
      ts_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    ts_buf_puts(b, t->ndim == 1 ? ",)" : ")");
  }
}

/* Turns the array read from `path` into the argument for a parameter of
 * type `ty` (t borrowed). False with the reason (a phrase) in why. */
static bool ts_run_arg(ts_rt_ctx *c, ts_rt_tensor *t, const ts_type *ty, ts_iv *out, ts_buf *why) {
  while (ty->kind == TS_TY_OPTIONAL)
    ty = ty->elems[0];
  ts_dtype dt = (ts_dtype)t->dtype;
  bool fl = ts_rt_dtype_is_float(dt), in = ts_rt_dtype_is_integral(dt, false), bo = dt == TS_DT_BOOL;
  const char *want = NULL;
  switch (ty->kind) {
  case TS_TY_TENSOR:
  case TS_TY_ANY:
    ts_rt_tensor_retain(t);
    *out = ts_iv_tensor(t);
    return true;
  case TS_TY_INT:
  case TS_TY_SYMINT:
    if (t->ndim == 0 && in) {
      *out = ts_iv_int(ts_rt_load_i64(ts_rt_tensor_data(t), dt));
      return true;
    }
    want = "an int (a 0-d int64 array)";
    break;
  case TS_TY_FLOAT:
    if (t->ndim == 0 && (fl || in)) {
      *out = ts_iv_double(ts_rt_load_f64(ts_rt_tensor_data(t), dt));
      return true;
    }
    want = "a float (a 0-d float64 array)";
    break;
  case TS_TY_BOOL:
    if (t->ndim == 0 && bo) {
      *out = ts_iv_bool(ts_rt_load_i64(ts_rt_tensor_data(t), dt) != 0);
      return true;
    }
    want = "a bool (a 0-d bool array)";
    break;
  case TS_TY_NUMBER:
    if (t->ndim == 0) {
      const void *p = ts_rt_tensor_data(t);
      *out = bo ? ts_iv_bool(ts_rt_load_i64(p, dt) != 0) : in ? ts_iv_int(ts_rt_load_i64(p, dt))
                                                              : ts_iv_double(ts_rt_load_f64(p, dt));
      return true;
    }
    want = "a number (a 0-d array)";
    break;
  case TS_TY_LIST: {
    ts_type_kind ek = ty->elems[0]->kind;
    bool ok = t->ndim == 1 &&
              ((ek == TS_TY_INT && in) || (ek == TS_TY_FLOAT && (fl || in)) || (ek == TS_TY_BOOL && bo));
    if (ek != TS_TY_INT && ek != TS_TY_FLOAT && ek != TS_TY_BOOL)
      break;
    if (!ok) {
      want = ek == TS_TY_INT ? "a List[int] (a 1-d int64 array)"
             : ek == TS_TY_FLOAT ? "a List[float] (a 1-d float64 array)" : "a List[bool] (a 1-d bool array)";
      break;
    }
    if (t->sizes[0] > UINT32_MAX / 2) {
      ts_buf_puts(why, "the list is too long");
      return false;
    }
    ts_rt_list *l = ts_rt_list_new(c, ty->elems[0], (uint32_t)t->sizes[0]);
    if (!l)
      return false;
    size_t es = ts_dtype_size(dt);
    for (int64_t i = 0; i < t->sizes[0]; i++) {
      const char *p = (const char *)ts_rt_tensor_data(t) + i * t->strides[0] * (int64_t)es;
      ts_iv v = ek == TS_TY_INT ? ts_iv_int(ts_rt_load_i64(p, dt))
                : ek == TS_TY_FLOAT ? ts_iv_double(ts_rt_load_f64(p, dt)) : ts_iv_bool(ts_rt_load_i64(p, dt) != 0);
      if (!ts_rt_list_append(c, l, v)) {
        ts_iv lv = {.u.l = l, .tag = TS_IV_LIST};
        ts_iv_release(lv);
        return false;
      }
    }
    out->u.l = l;
    out->tag = TS_IV_LIST;
    return true;
  }
  default:
    break;
  }
  if (!want) {
    ts_buf_puts(why, "a parameter of type ");
    ts_type_print(why, ty);
    ts_buf_puts(why, " cannot be given as a .npy file");
    return false;
  }
  ts_buf_printf(why, "expected %s, got ", want);
  ts_run_describe(why, t);
  return false;
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

/* Writes one array as the next outN.npy (t borrowed). */
static bool ts_run_write(ts_run_out *o, const ts_rt_tensor *t) {
  ts_buf path = {0};
  ts_buf_printf(&path, "%s/out%d.npy", o->dir, o->count++);
  bool ok = !path.failed && ts_rt_npy_write(o->ctx, path.data, t);
  if (path.failed)
    ts_rt_oom(o->ctx);
  ts_buf_free(&path);
  return ok;
}

static bool ts_run_write_scalar(ts_run_out *o, ts_dtype dt, double f, int64_t i) {
  ts_rt_tensor *t = ts_rt_tensor_scalar(o->ctx, dt, f, i);
  if (!t)
    return false;
  bool ok = ts_run_write(o, t);
  ts_rt_tensor_release(t);
  return ok;
}

/* A list of numbers of one kind (tag) as one 1-d array. */
static bool ts_run_write_numbers(ts_run_out *o, const ts_rt_list *l, int32_t tag) {
  ts_dtype dt = tag == TS_IV_BOOL ? TS_DT_BOOL : tag == TS_IV_DOUBLE ? TS_DT_FLOAT64 : TS_DT_INT64;
  int64_t n = l->n;
  ts_rt_tensor *t = ts_rt_tensor_new(o->ctx, dt, 1, &n, true);
  if (!t)
    return false;
  char *p = ts_rt_tensor_data(t);
  size_t es = ts_dtype_size(dt);
  for (uint32_t k = 0; k < l->n; k++) {
    ts_iv v = l->items[k];
    if (tag == TS_IV_DOUBLE)
      ts_rt_store_f64(p + k * es, dt, v.u.d);
    else
      ts_rt_store_i64(p + k * es, dt, tag == TS_IV_BOOL ? (int64_t)v.u.b : v.u.i);
  }
  bool ok = ts_run_write(o, t);
  ts_rt_tensor_release(t);
  return ok;
}

/* Flattens one output value depth-first. */
static bool ts_run_flatten(ts_run_out *o, ts_iv v, int depth) {
  if (depth > 200)
    return ts_rt_fail(o->ctx, "the output is nested too deeply");
  switch ((ts_iv_tag)v.tag) {
  case TS_IV_NONE:
    return true;
  case TS_IV_TENSOR:
    return ts_run_write(o, v.u.t);
  case TS_IV_INT:
    return ts_run_write_scalar(o, TS_DT_INT64, 0, v.u.i);
  case TS_IV_DOUBLE:
    return ts_run_write_scalar(o, TS_DT_FLOAT64, v.u.d, 0);
  case TS_IV_BOOL:
    return ts_run_write_scalar(o, TS_DT_BOOL, 0, v.u.b);
  case TS_IV_LIST: {
    const ts_rt_list *l = v.u.l;
    int32_t tag = l->n ? l->items[0].tag : TS_IV_INT;
    bool same = tag == TS_IV_INT || tag == TS_IV_DOUBLE || tag == TS_IV_BOOL;
    for (uint32_t k = 1; k < l->n && same; k++)
      same = l->items[k].tag == tag;
    if (same)
      return ts_run_write_numbers(o, l, tag);
    for (uint32_t k = 0; k < l->n; k++)
      if (!ts_run_flatten(o, l->items[k], depth + 1))
        return false;
    return true;
  }
  case TS_IV_TUPLE:
    for (uint32_t k = 0; k < v.u.tup->n; k++)
      if (!ts_run_flatten(o, v.u.tup->items[k], depth + 1))
        return false;
    return true;
  case TS_IV_DICT:
    for (uint32_t k = 0; k < v.u.dict->n; k++)
      if (!ts_run_flatten(o, v.u.dict->values[k], depth + 1))
        return false;
    return true;
  default:
    fprintf(stderr, "tsaot-run: note: an output of type %s has no .npy form; skipped\n", ts_iv_tag_name(v));
    return true;
  }
}

int main(int argc, char **argv) {
  const char *path = NULL, *outdir = NULL, *method = "forward", *passes = NULL, *log = NULL;
  bool stats = false;
  int nthreads = 0;
  const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
  int ninputs = 0;
  if (!inputs) {
    fprintf(stderr, "tsaot-run: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_run_usage(stdout);
      free(inputs);
      return 0;
    } else if (strcmp(a, "--optimize") == 0) {
      passes = "default";
    } else if (strcmp(a, "--print-after-all") == 0) {
      log = "all";
    } else if (strcmp(a, "--stats") == 0) {
      stats = true;
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
  size_t plen = strlen(path);
  if (plen > 3 && strcmp(path + plen - 3, ".so") == 0) {
    fprintf(stderr, "tsaot-run: %s: running compiled models (.so) is not written yet\n", path);
    free(inputs);
    return 1;
  }

  int rc = 1;
  ts_diag d = {0};
  d.max_errors = 50;
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, nthreads);
  ts_iv *args = calloc((size_t)ninputs + 1, sizeof *args);
  ts_iv ret = ts_iv_none();
  bool have_ret = false;
  ts_buf where = {0}, why = {0};
  ts_rt_model *m = NULL;
  ts_graph *og = NULL;
  if (!args) {
    fprintf(stderr, "tsaot-run: out of memory\n");
    goto out;
  }
  if (!(m = ts_rt_model_load(path, &d))) {
    fputs(d.text.data ? d.text.data : "tsaot-run: cannot load the model\n", stderr);
    goto out;
  }
  ts_graph *g = ts_rt_model_graph(m, method, &d);
  if (!g) {
    fputs(d.text.data ? d.text.data : "tsaot-run: cannot compile the method\n", stderr);
    goto out;
  }
  uint32_t nparams = ts_block_ninputs(g->block) - 1;
  /* fewer is fine where the method has defaults: ts_rt_model_run fills them */
  if ((uint32_t)ninputs > nparams) {
    ts_buf names = {0};
    for (uint32_t k = 0; k < nparams; k++) {
      const ts_value *v = ts_block_input(g->block, k + 1);
      ts_buf_printf(&names, "%s%s", k ? ", " : "", v->name ? v->name : "?");
    }
    fprintf(stderr, "tsaot-run: %s: %s takes %u argument%s (%s), %d given\n", path, method, (unsigned)nparams,
            nparams == 1 ? "" : "s", names.data ? names.data : "", ninputs);
    ts_buf_free(&names);
    goto out;
  }
  for (int k = 0; k < ninputs; k++) {
    const ts_value *pv = ts_block_input(g->block, (uint32_t)k + 1);
    ts_rt_tensor *t = ts_rt_npy_read(&ctx, inputs[k]);
    if (!t) {
      fprintf(stderr, "tsaot-run: %s\n", ctx.err.data ? ctx.err.data : inputs[k]);
      goto out;
    }
    why.len = 0;
    bool ok = ts_run_arg(&ctx, t, pv->type, &args[k], &why);
    ts_rt_tensor_release(t);
    if (!ok) {
      fprintf(stderr, "tsaot-run: %s (argument %d '%s'): %s\n", inputs[k], k + 1, pv->name ? pv->name : "?",
              why.len ? why.data : ctx.err.data ? ctx.err.data : "bad input");
      goto out;
    }
  }
  if (passes) {
    /* the optimized copy; the model's own graph stays for the argument
     * checks above and the defaults */
    uint32_t before = ts_pass_count_nodes(g);
    const ts_type **types = NULL;
    og = ts_graph_copy(g);
    if (!og) {
      fprintf(stderr, "tsaot-run: out of memory\n");
      goto out;
    }
    /* the spec: each tensor argument's dtype and sizes (numbers and lists
     * made from arrays stay unspecified) */
    if (!(types = calloc(ts_block_ninputs(og->block), sizeof *types))) {
      fprintf(stderr, "tsaot-run: out of memory\n");
      goto out;
    }
    for (int k = 0; k < ninputs; k++)
      if (args[k].tag == TS_IV_TENSOR && !(types[k + 1] = ts_pass_spec_of_tensor(ts_graph_arena(og), args[k].u.t))) {
        fprintf(stderr, "tsaot-run: out of memory\n");
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
      fputs(d.text.data ? d.text.data : "tsaot-run: a pass failed\n", stderr);
      goto out;
    }
    if (stats)
      fprintf(stderr, "tsaot-run: %s: %u nodes before the passes, %u after (%u prim::FusionGroup)\n", path,
              before, ts_pass_count_nodes(og), ts_pass_count_kind(og, TS_K_prim_FusionGroup));
  }
  bool ok = ts_rt_model_run_graph(m, &ctx, method, og, args, (uint32_t)ninputs, &ret, &where);
  if (ctx.out.len) {
    fwrite(ctx.out.data, 1, ctx.out.len, stdout);
    fflush(stdout);
  }
  if (!ok) {
    if (where.len)
      fputs(where.data, stderr);
    else
      fprintf(stderr, "error: %s\n", ctx.err.data ? ctx.err.data : "the model failed");
    goto out;
  }
  have_ret = true;
  if (!ts_run_mkdirs(outdir)) {
    fprintf(stderr, "tsaot-run: %s: cannot make the folder: %s\n", outdir, strerror(errno));
    goto out;
  }
  ts_run_out o = {.ctx = &ctx, .dir = outdir};
  if (!ts_run_flatten(&o, ret, 0)) {
    fprintf(stderr, "tsaot-run: %s\n", ctx.err.data ? ctx.err.data : "cannot write the outputs");
    goto out;
  }
  rc = 0;
out:
  if (have_ret)
    ts_iv_release(ret);
  for (int k = 0; args && k < ninputs; k++)
    ts_iv_release(args[k]);
  free(args);
  ts_graph_free(og);
  ts_rt_model_free(m);
  ts_buf_free(&where);
  ts_buf_free(&why);
  ts_diag_free(&d);
  ts_rt_ctx_free(&ctx);
  free(inputs);
  return rc;
}
