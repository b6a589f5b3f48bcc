/* tools/tsaot-opt.c: reads a graph in PyTorch's text format, verifies it,
 * runs passes over it (verifying the graph after each) and prints it.
 *
 *   tsaot-opt FILE.ir -p PASS[,PASS...] [-o OUT] [--no-verify]
 *
 * Exit status: 0 success, 1 the graph is malformed or fails to verify,
 * 2 usage error. */
#include "ir.h"
#include "passes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_OPT_MAX_INPUT = 1 << 30 };

/* The passes by name; "none" runs nothing (prints the graph as read).
 * ts_pass_inline needs a callee resolver and is not offered here. */
typedef struct ts_opt_pass {
  const char *name;
  bool (*run)(ts_graph *g, ts_diag *d);
} ts_opt_pass;

static const ts_opt_pass ts_opt_passes[] = {
    {"none", NULL},
    {"constant-pooling", ts_pass_constant_pooling},
    {"lower-simple-tuples", ts_pass_lower_simple_tuples},
    {"constant-prop-immutable", ts_pass_constant_prop_immutable},
    {"dce", ts_pass_dce},
    {"peephole", ts_pass_peephole},
};

enum { TS_OPT_NPASSES = sizeof ts_opt_passes / sizeof *ts_opt_passes, TS_OPT_MAX_PIPELINE = 64 };

#define TS_OPT_PASS_NAMES "none, constant-pooling, lower-simple-tuples, constant-prop-immutable, dce, peephole"

static void ts_opt_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-opt FILE.ir -p PASS[,PASS...] [-o OUT] [--no-verify]\n"
          "\n"
          "Reads a graph in PyTorch's text format (FILE '-' reads standard input),\n"
          "verifies it, runs the passes in order, verifying the graph after each,\n"
          "and prints the result.\n"
          "\n"
          "  -p PASSES     comma-separated pass list, run in order; available:\n"
          "                  none                     nothing (print the graph as read)\n"
          "                  constant-pooling         one constant per value, hoisted\n"
          "                  lower-simple-tuples      unpack/index of TupleConstruct\n"
          "                  constant-prop-immutable  fold scalar ops, constant If/Loop\n"
          "                  dce                      dead code elimination\n"
          "                  peephole                 shape-free peephole rules\n"
          "  -o OUT        write the graph to OUT instead of standard output\n"
          "  --no-verify   skip the verifier, before and after the passes (for looking\n"
          "                at broken graphs)\n"
          "  -h, --help    this text\n"
          "\n"
          "Exit status: 0 success, 1 malformed or invalid graph, 2 usage error.\n");
}

/* Reads all of `path` ("-": stdin) into a malloc'd buffer. */
static char *ts_opt_read(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tsaot-opt: error: cannot open '%s': %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) {
      if (ferror(f)) {
        fprintf(stderr, "tsaot-opt: error: cannot read '%s': %s\n", path, strerror(errno));
        free(buf);
        buf = NULL;
      }
      break;
    }
    if (cap >= TS_OPT_MAX_INPUT) {
      fprintf(stderr, "tsaot-opt: error: '%s' is larger than %d bytes\n", path, TS_OPT_MAX_INPUT);
      free(buf);
      buf = NULL;
      break;
    }
    char *b2 = realloc(buf, cap * 2);
    if (!b2) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = b2;
    cap *= 2;
  }
  if (f != stdin)
    fclose(f);
  *len = n;
  return buf;
}

static const ts_opt_pass *ts_opt_pass_find(const char *name, size_t n) {
  for (size_t i = 0; i < TS_OPT_NPASSES; i++)
    if (strlen(ts_opt_passes[i].name) == n && memcmp(ts_opt_passes[i].name, name, n) == 0)
      return &ts_opt_passes[i];
  return NULL;
}

/* Runs the pipeline; false (with the reason in `d`) when a pass fails or
 * leaves a graph that does not verify, which is a bug in the pass. */
static bool ts_opt_run(ts_graph *g, const ts_opt_pass *const *pipeline, size_t n, bool verify, ts_diag *d) {
  for (size_t i = 0; i < n; i++) {
    const ts_opt_pass *p = pipeline[i];
    if (!p->run)
      continue;
    if (!p->run(g, d)) {
      ts_diag_error(d, "pass '%s' failed", p->name);
      return false;
    }
    if (verify && !ts_graph_verify(g, d)) {
      ts_diag_error(d, "the graph does not verify after pass '%s' (a bug in the pass)", p->name);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *passes = NULL;
  bool verify = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      ts_opt_usage(stdout);
      return 0;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "tsaot-opt: error: %s needs an argument\n", a);
        return 2;
      }
      *(a[1] == 'p' ? &passes : &out) = argv[++i];
    } else if (strncmp(a, "-p", 2) == 0 && a[2]) {
      passes = a + 2;
    } else if (strcmp(a, "--no-verify") == 0) {
      verify = false;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "tsaot-opt: error: unknown option '%s'\n", a);
      ts_opt_usage(stderr);
      return 2;
    } else if (in) {
      fprintf(stderr, "tsaot-opt: error: more than one input file ('%s' and '%s')\n", in, a);
      return 2;
    } else {
      in = a;
    }
  }
  if (!in || !passes) {
    fprintf(stderr, "tsaot-opt: error: %s\n", !in ? "no input file" : "no pass list (-p none prints the graph as read)");
    ts_opt_usage(stderr);
    return 2;
  }
  const ts_opt_pass *pipeline[TS_OPT_MAX_PIPELINE];
  size_t npipeline = 0;
  for (const char *p = passes; *p;) {
    size_t n = strcspn(p, ",");
    const ts_opt_pass *pass = ts_opt_pass_find(p, n);
    if (!pass) {
      fprintf(stderr, "tsaot-opt: error: unknown pass '%.*s' (available: " TS_OPT_PASS_NAMES ")\n", (int)n, p);
      return 2;
    }
    if (npipeline == TS_OPT_MAX_PIPELINE) {
      fprintf(stderr, "tsaot-opt: error: more than %d passes\n", TS_OPT_MAX_PIPELINE);
      return 2;
    }
    pipeline[npipeline++] = pass;
    p += n + (p[n] == ',');
  }

  size_t len;
  char *src = ts_opt_read(in, &len);
  if (!src)
    return 1;
  ts_diag d = {.max_errors = 20};
  int rc = 1;
  ts_graph *g = ts_graph_parse(strcmp(in, "-") == 0 ? "<stdin>" : in, src, len, &d);
  if (g && ((verify && !ts_graph_verify(g, &d)) || !ts_opt_run(g, pipeline, npipeline, verify, &d))) {
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
  } else {
    fputs(d.text.data ? d.text.data : "tsaot-opt: error: cannot read the graph\n", stderr);
    if (d.errors > d.max_errors)
      fprintf(stderr, "(%d more errors not shown)\n", d.errors - d.max_errors);
  }
  ts_diag_free(&d);
  free(src);
  return rc;
}
