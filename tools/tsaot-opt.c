/* tools/tsaot-opt.c: reads a graph in PyTorch's text format, verifies it,
 * runs passes over it and prints it.
 *
 *   tsaot-opt FILE.ir -p PASS[,PASS...] [-o OUT] [--no-verify]
 *
 * Exit status: 0 success, 1 the graph is malformed or fails to verify,
 * 2 usage error. */
#include "ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TS_OPT_MAX_INPUT = 1 << 30 };

/* Passes land with the passes issue; "none" prints the graph as read. */
static const char *const ts_opt_passes[] = {"none"};

static void ts_opt_usage(FILE *f) {
  fprintf(f,
          "usage: tsaot-opt FILE.ir -p PASS[,PASS...] [-o OUT] [--no-verify]\n"
          "\n"
          "Reads a graph in PyTorch's text format (FILE '-' reads standard input),\n"
          "verifies it, runs the passes in order and prints the result.\n"
          "\n"
          "  -p PASSES     comma-separated pass list; available: none\n"
          "  -o OUT        write the graph to OUT instead of standard output\n"
          "  --no-verify   skip the verifier (for looking at broken graphs)\n"
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

static bool ts_opt_pass_known(const char *name, size_t n) {
  for (size_t i = 0; i < sizeof ts_opt_passes / sizeof *ts_opt_passes; i++)
    if (strlen(ts_opt_passes[i]) == n && memcmp(ts_opt_passes[i], name, n) == 0)
      return true;
  return false;
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
  for (const char *p = passes; *p;) {
    size_t n = strcspn(p, ",");
    if (!ts_opt_pass_known(p, n)) {
      fprintf(stderr, "tsaot-opt: error: unknown pass '%.*s' (available: none)\n", (int)n, p);
      return 2;
    }
    p += n + (p[n] == ',');
  }

  size_t len;
  char *src = ts_opt_read(in, &len);
  if (!src)
    return 1;
  ts_diag d = {.max_errors = 20};
  int rc = 1;
  ts_graph *g = ts_graph_parse(strcmp(in, "-") == 0 ? "<stdin>" : in, src, len, &d);
  if (g && verify && !ts_graph_verify(g, &d)) {
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
