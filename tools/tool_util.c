/* tools/tool_util.c: see tool_util.h. */
#include "tool_util.h"

#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ts_tool_read_file(const char *prog, const char *path, size_t max, size_t *len) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: error: cannot open '%s': %s\n", prog, path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) {
      if (ferror(f)) {
        fprintf(stderr, "%s: error: cannot read '%s': %s\n", prog, path, strerror(errno));
        free(buf);
        buf = NULL;
      }
      break;
    }
    if (cap >= max) {
      fprintf(stderr, "%s: error: '%s' is larger than %zu bytes\n", prog, path, max);
      free(buf);
      buf = NULL;
      break;
    }
    char *b2 = realloc(buf, cap * 2 + 1);
    if (!b2) {
      fprintf(stderr, "%s: error: out of memory reading '%s'\n", prog, path);
      free(buf);
      buf = NULL;
      break;
    }
    buf = b2;
    cap *= 2;
  }
  if (f != stdin)
    fclose(f);
  if (buf)
    buf[n] = 0;
  *len = n;
  return buf;
}

static bool ts_tool_is_npy(const char *s) {
  size_t n = strlen(s);
  return n > 4 && strcmp(s + n - 4, ".npy") == 0;
}

const ts_type **ts_tool_input_types(ts_graph *g, const char *const *specs, uint32_t nspecs, ts_diag *d) {
  uint32_t nin = ts_block_ninputs(g->block);
  uint32_t first = nin && ts_block_input(g->block, 0)->type->kind == TS_TY_CLASS ? 1 : 0;
  if (nspecs > nin - first) {
    ts_diag_error(d, "%u input specs given for %u input%s", (unsigned)nspecs, (unsigned)(nin - first),
                  nin - first == 1 ? "" : "s");
    return NULL;
  }
  const ts_type **types = calloc(nin ? nin : 1, sizeof *types);
  if (!types) {
    ts_diag_error(d, "out of memory");
    return NULL;
  }
  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 1);
  bool ok = true;
  for (uint32_t k = 0; ok && k < nspecs; k++) {
    const ts_value *in = ts_block_input(g->block, first + k);
    const char *s = specs[k];
    if (!ts_tool_is_npy(s)) {
      types[first + k] = ts_pass_spec_parse(ts_graph_arena(g), s, strlen(s), d);
      ok = types[first + k] != NULL;
      continue;
    }
    ts_rt_tensor *t = ts_rt_npy_read(&ctx, s);
    if (!t) {
      ts_diag_error(d, "%s", ctx.err.data ? ctx.err.data : s);
      ok = false;
      break;
    }
    ts_type_kind pk = in->type->kind;
    bool number = t->ndim == 0 && (pk == TS_TY_INT || pk == TS_TY_FLOAT || pk == TS_TY_BOOL || pk == TS_TY_NUMBER);
    if (!number) {
      types[first + k] = ts_pass_spec_of_tensor(ts_graph_arena(g), t);
      if (!types[first + k]) {
        ts_diag_error(d, "%s: cannot make an input spec of it", s);
        ok = false;
      }
    }
    ts_rt_tensor_release(t);
  }
  ts_rt_ctx_free(&ctx);
  if (!ok) {
    free(types);
    return NULL;
  }
  return types;
}
