/* tests/unit/test_ops.c: every op-level case of tests/fixtures/ops/cases.txt
 * (PyTorch 1.13's values, written by tests/fixtures/make_op_cases.py) run
 * through the kernel registry: look the kernel up by schema name, build the
 * arguments (views of stored arrays where the case says so), call it with
 * node=NULL and compare what it returns, what it wrote through its mutable
 * arguments, what it printed, or the error it raised.
 *
 *   test_ops [-v] [-d OPS_DIR] [SUBSTRING...]
 *
 * reads OPS_DIR's cases.txt and arrays.bin, then those of each subfolder of
 * OPS_DIR that has a cases.txt (a group made by make_op_cases_GROUP.py),
 * runs the cases whose name contains one of the substrings (all without
 * any), prints each failure with the case's name and what differed, and ends
 * with "ops: N passed, N failed, N without kernel". Exit status 1 when any
 * case failed or had no kernel. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_cases.h"

#ifndef TSAOT_SOURCE_DIR
#define TSAOT_SOURCE_DIR "."
#endif

#define MAX_ARGS 64

/* Whether two doubles agree within the case's tolerance (NaN matches NaN,
 * infinities match themselves). */
static bool op_close(oc_env *e, double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= e->atol + e->rtol * fabs(b);
}

/* Compares tensor a (actual, any strides) with b (expected). */
static bool op_tensor_eq(oc_env *e, const ts_rt_tensor *a, const ts_rt_tensor *b, bool noval, const char *where) {
  if (a->dtype != b->dtype) {
    ts_buf_printf(&e->why, "%s: dtype %s, expected %s", where, ts_dtype_name((ts_dtype)a->dtype),
                  ts_dtype_name((ts_dtype)b->dtype));
    return false;
  }
  bool same_shape = a->ndim == b->ndim;
  for (int32_t k = 0; same_shape && k < a->ndim; k++) same_shape = a->sizes[k] == b->sizes[k];
  if (!same_shape) {
    ts_buf_printf(&e->why, "%s: shape [", where);
    for (int32_t k = 0; k < a->ndim; k++) ts_buf_printf(&e->why, "%s%lld", k ? ", " : "", (long long)a->sizes[k]);
    ts_buf_puts(&e->why, "], expected [");
    for (int32_t k = 0; k < b->ndim; k++) ts_buf_printf(&e->why, "%s%lld", k ? ", " : "", (long long)b->sizes[k]);
    ts_buf_puts(&e->why, "]");
    return false;
  }
  if (noval) return true;
  int64_t n = ts_rt_tensor_numel(b), idx[TS_RT_MAX_DIMS] = {0}, oa = 0, ob = 0, bad = 0, first = -1;
  double fa = 0, fb = 0;
  ts_dtype dt = (ts_dtype)a->dtype;
  size_t es = ts_dtype_size(dt);
  bool cx = ts_dtype_is_complex(dt), isf = ts_rt_dtype_is_float(dt) || cx;
  ts_dtype part = dt == TS_DT_COMPLEX128 ? TS_DT_FLOAT64 : TS_DT_FLOAT32; /* a complex element's parts */
  const uint8_t *pa = ts_rt_tensor_data(a), *pb = ts_rt_tensor_data(b);
  for (int64_t i = 0; i < n; i++) {
    const void *xa = pa + oa * (int64_t)es, *xb = pb + ob * (int64_t)es;
    bool ok;
    if (isf) ok = op_close(e, ts_rt_load_f64(xa, dt), ts_rt_load_f64(xb, dt));
    else ok = ts_rt_load_i64(xa, dt) == ts_rt_load_i64(xb, dt);
    if (cx && ok)
      ok = op_close(e, ts_rt_load_f64((const uint8_t *)xa + es / 2, part),
                    ts_rt_load_f64((const uint8_t *)xb + es / 2, part));
    if (!ok && bad++ == 0) {
      first = i;
      fa = isf ? ts_rt_load_f64(xa, dt) : (double)ts_rt_load_i64(xa, dt);
      fb = isf ? ts_rt_load_f64(xb, dt) : (double)ts_rt_load_i64(xb, dt);
    }
    for (int32_t k = a->ndim - 1; k >= 0; k--) {
      idx[k]++;
      oa += a->strides[k];
      ob += b->strides[k];
      if (idx[k] < a->sizes[k]) break;
      oa -= a->strides[k] * idx[k];
      ob -= b->strides[k] * idx[k];
      idx[k] = 0;
    }
  }
  if (bad) {
    ts_buf_printf(&e->why, "%s: %lld of %lld values differ; first at flat index %lld: %.9g, expected %.9g", where,
                  (long long)bad, (long long)n, (long long)first, fa, fb);
    return false;
  }
  return true;
}

/* Compares any value (actual a with expected b). */
static bool op_eq(oc_env *e, ts_iv a, ts_iv b, bool noval, const char *where) {
  if (a.tag != b.tag) {
    ts_buf_printf(&e->why, "%s: %s, expected %s", where, ts_iv_tag_name(a), ts_iv_tag_name(b));
    return false;
  }
  char sub[256];
  switch (a.tag) {
  case TS_IV_NONE:
  case TS_IV_UNINIT:
    return true;
  case TS_IV_INT:
    if (a.u.i == b.u.i) return true;
    ts_buf_printf(&e->why, "%s: %lld, expected %lld", where, (long long)a.u.i, (long long)b.u.i);
    return false;
  case TS_IV_DOUBLE:
    if (op_close(e, a.u.d, b.u.d)) return true;
    ts_buf_printf(&e->why, "%s: %.17g, expected %.17g", where, a.u.d, b.u.d);
    return false;
  case TS_IV_BOOL:
    if (a.u.b == b.u.b) return true;
    ts_buf_printf(&e->why, "%s: %s, expected %s", where, a.u.b ? "True" : "False", b.u.b ? "True" : "False");
    return false;
  case TS_IV_DEVICE:
    if (a.u.dev.type == b.u.dev.type && a.u.dev.index == b.u.dev.index) return true;
    ts_buf_printf(&e->why, "%s: another device", where);
    return false;
  case TS_IV_STR:
    if (a.u.s->len == b.u.s->len && memcmp(a.u.s->data, b.u.s->data, a.u.s->len) == 0) return true;
    ts_buf_printf(&e->why, "%s: \"%s\", expected \"%s\"", where, a.u.s->data, b.u.s->data);
    return false;
  case TS_IV_TENSOR:
    return op_tensor_eq(e, a.u.t, b.u.t, noval, where);
  case TS_IV_LIST:
    if (a.u.l->n != b.u.l->n) {
      ts_buf_printf(&e->why, "%s: list of %u, expected %u", where, a.u.l->n, b.u.l->n);
      return false;
    }
    for (uint32_t i = 0; i < a.u.l->n; i++) {
      snprintf(sub, sizeof sub, "%s[%u]", where, i);
      if (!op_eq(e, a.u.l->items[i], b.u.l->items[i], noval, sub)) return false;
    }
    return true;
  case TS_IV_TUPLE:
    if (a.u.tup->n != b.u.tup->n) {
      ts_buf_printf(&e->why, "%s: tuple of %u, expected %u", where, a.u.tup->n, b.u.tup->n);
      return false;
    }
    for (uint32_t i = 0; i < a.u.tup->n; i++) {
      snprintf(sub, sizeof sub, "%s[%u]", where, i);
      if (!op_eq(e, a.u.tup->items[i], b.u.tup->items[i], noval, sub)) return false;
    }
    return true;
  case TS_IV_DICT:
    if (a.u.dict->n != b.u.dict->n) {
      ts_buf_printf(&e->why, "%s: dict of %u, expected %u", where, a.u.dict->n, b.u.dict->n);
      return false;
    }
    for (uint32_t i = 0; i < a.u.dict->n; i++) {
      snprintf(sub, sizeof sub, "%s.key%u", where, i);
      if (!op_eq(e, a.u.dict->keys[i], b.u.dict->keys[i], false, sub)) return false;
      snprintf(sub, sizeof sub, "%s.value%u", where, i);
      if (!op_eq(e, a.u.dict->values[i], b.u.dict->values[i], noval, sub)) return false;
    }
    return true;
  default:
    ts_buf_printf(&e->why, "%s: cannot compare %s", where, ts_iv_tag_name(a));
    return false;
  }
}

/* One case, as read from the manifest. */
typedef struct op_case {
  char *name, *schema;
  uint32_t nout, nin;
  ts_iv in[MAX_ARGS];
  ts_rt_tensor *base[MAX_ARGS];
  ts_iv expect[MAX_ARGS];
  bool noval[MAX_ARGS];
  uint32_t nexpect;
  int same[MAX_ARGS][2], nsame;
  int after_k[MAX_ARGS];
  ts_iv after[MAX_ARGS];
  int nafter;
  char *error;
  ts_buf printed;
  bool has_printed;
} op_case;

static void op_case_free(op_case *k) {
  for (uint32_t i = 0; i < k->nin; i++) {
    ts_iv_release(k->in[i]);
    if (k->base[i]) ts_rt_tensor_release(k->base[i]);
  }
  for (uint32_t i = 0; i < k->nexpect; i++) ts_iv_release(k->expect[i]);
  for (int i = 0; i < k->nafter; i++) ts_iv_release(k->after[i]);
  free(k->name);
  free(k->schema);
  free(k->error);
  ts_buf_free(&k->printed);
  memset(k, 0, sizeof *k);
}

/* Runs a parsed case; true if it passed (the reason in e->why if not). */
static bool op_run(oc_env *e, op_case *k, ts_rt_kernel_fn fn) {
  ts_rt_ctx *c = e->c;
  ts_iv out[MAX_ARGS];
  for (uint32_t i = 0; i < MAX_ARGS; i++) out[i] = ts_iv_none();
  ts_rt_clear_error(c);
  c->out.len = 0;
  if (c->out.data) c->out.data[0] = '\0';
  ts_rt_call call = {.in = k->in, .nin = k->nin, .out = out, .nout = k->nout, .node = NULL};
  bool ok = fn(c, &call);
  bool pass = true;
  if (k->error) {
    if (ok) {
      ts_buf_printf(&e->why, "succeeded; expected an error containing \"%s\"", k->error);
      pass = false;
    } else if (!c->err.data || !strstr(c->err.data, k->error)) {
      ts_buf_printf(&e->why, "error \"%s\"; expected one containing \"%s\"", c->err.data ? c->err.data : "",
                    k->error);
      pass = false;
    }
  } else if (!ok) {
    ts_buf_printf(&e->why, "failed: %s", c->err.data ? c->err.data : "(no message)");
    pass = false;
  } else {
    char where[64];
    for (uint32_t r = 0; pass && r < k->nexpect && r < k->nout; r++) {
      snprintf(where, sizeof where, "output %u", r);
      pass = op_eq(e, out[r], k->expect[r], k->noval[r], where);
    }
    for (int i = 0; pass && i < k->nsame; i++) {
      ts_iv o = out[k->same[i][0]], x = k->in[k->same[i][1]];
      if (o.tag != x.tag || !ts_iv_is_ref(o) || o.u.o != x.u.o) {
        ts_buf_printf(&e->why, "output %d is not its input %d (in-place ops return self)", k->same[i][0],
                      k->same[i][1]);
        pass = false;
      }
    }
    for (int i = 0; pass && i < k->nafter; i++) {
      int a = k->after_k[i];
      snprintf(where, sizeof where, "input %d after the call", a);
      ts_iv now = k->base[a] ? ts_iv_tensor(k->base[a]) : k->in[a];
      pass = op_eq(e, now, k->after[i], false, where);
    }
    if (pass && k->has_printed) {
      const char *got = c->out.data ? c->out.data : "", *want = k->printed.data ? k->printed.data : "";
      if (strcmp(got, want) != 0) {
        ts_buf_printf(&e->why, "printed \"%s\", expected \"%s\"", got, want);
        pass = false;
      }
    }
  }
  if (ok)
    for (uint32_t r = 0; r < k->nout; r++) ts_iv_release(out[r]);
  return pass;
}

/* Schemas without a kernel, each once, for the summary. */
typedef struct op_names {
  char **v;
  int *count;
  int n, cap;
} op_names;

static void op_names_add(op_names *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], name)) {
      s->count[i]++;
      return;
    }
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 64;
    char **v = realloc(s->v, sizeof(char *) * (size_t)cap);
    if (!v) return;
    s->v = v;
    int *cnt = realloc(s->count, sizeof(int) * (size_t)cap);
    if (!cnt) return;
    s->count = cnt;
    s->cap = cap;
  }
  size_t l = strlen(name) + 1;
  char *copy = malloc(l);
  if (!copy) return;
  memcpy(copy, name, l);
  s->v[s->n] = copy;
  s->count[s->n++] = 1;
}

static char *op_strdup(const char *s) {
  size_t l = strlen(s) + 1;
  char *d = malloc(l);
  if (d) memcpy(d, s, l);
  return d;
}

/* Reads one case's lines from *pos (advanced past its "end"). False with
 * e->why set on a malformed case; *eof at the end of the manifest. */
static bool op_parse_case(oc_env *e, char **pos, op_case *k, bool *eof) {
  static oc_toks tk;
  *eof = false;
  bool in_case = false;
  for (;;) {
    char *line = *pos;
    if (!*line) {
      *eof = !in_case;
      return in_case ? oc_bad(e, "case without end") : true;
    }
    char *nl = strchr(line, '\n');
    if (nl) {
      *nl = '\0';
      *pos = nl + 1;
    } else {
      *pos = line + strlen(line);
    }
    if (!*line || line[0] == '#') continue;
    if (!strncmp(line, "error ", 6)) {
      k->error = op_strdup(line + 6);
      continue;
    }
    oc_split(line, &tk);
    const char *w = oc_next(&tk);
    if (!w) continue;
    if (!strcmp(w, "case")) {
      const char *n = oc_next(&tk), *s = oc_next(&tk);
      if (!n || !s) return oc_bad(e, "case NAME SCHEMA");
      k->name = op_strdup(n);
      k->schema = op_strdup(s);
      in_case = true;
      e->atol = e->rtol = 0;
    } else if (!in_case) {
      return oc_bad(e, "line outside a case");
    } else if (!strcmp(w, "end")) {
      return true;
    } else if (!strcmp(w, "nout")) {
      const char *n = oc_next(&tk);
      k->nout = n ? (uint32_t)strtoul(n, NULL, 10) : 0;
      if (k->nout > MAX_ARGS) return oc_bad(e, "nout too large");
    } else if (!strcmp(w, "arg")) {
      if (k->nin == MAX_ARGS) return oc_bad(e, "too many args");
      uint32_t i = k->nin++;
      if (!oc_value(e, &tk, &k->in[i], &k->base[i], NULL)) return false;
    } else if (!strcmp(w, "out")) {
      if (k->nexpect == MAX_ARGS) return oc_bad(e, "too many outs");
      uint32_t i = k->nexpect++;
      if (!oc_value(e, &tk, &k->expect[i], NULL, &k->noval[i])) return false;
    } else if (!strcmp(w, "same")) {
      const char *r = oc_next(&tk), *a = oc_next(&tk);
      if (!r || !a || k->nsame == MAX_ARGS) return oc_bad(e, "same R K");
      k->same[k->nsame][0] = atoi(r);
      k->same[k->nsame][1] = atoi(a);
      if (k->same[k->nsame][0] < 0 || k->same[k->nsame][0] >= (int)k->nout || k->same[k->nsame][1] < 0 ||
          k->same[k->nsame][1] >= (int)k->nin)
        return oc_bad(e, "same out of range");
      k->nsame++;
    } else if (!strcmp(w, "after")) {
      const char *a = oc_next(&tk);
      if (!a || k->nafter == MAX_ARGS) return oc_bad(e, "after K VALUE");
      int i = k->nafter;
      k->after_k[i] = atoi(a);
      if (k->after_k[i] < 0 || k->after_k[i] >= (int)k->nin) return oc_bad(e, "after out of range");
      if (!oc_value(e, &tk, &k->after[i], NULL, NULL)) return false;
      k->nafter++;
    } else if (!strcmp(w, "printed")) {
      const char *h = oc_next(&tk);
      k->has_printed = true;
      if (!h || !oc_unhex(h, &k->printed)) return oc_bad(e, "printed HEX");
    } else if (!strcmp(w, "tol")) {
      const char *a = oc_next(&tk), *r = oc_next(&tk);
      if (!a || !r) return oc_bad(e, "tol ATOL RTOL");
      e->atol = strtod(a, NULL);
      e->rtol = strtod(r, NULL);
    } else {
      return oc_bad(e, "unknown line");
    }
  }
}

static bool op_selected(const char *name, int argc, char **argv, int first) {
  if (first >= argc) return true;
  for (int i = first; i < argc; i++)
    if (strstr(name, argv[i])) return true;
  return false;
}

int main(int argc, char **argv) {
  const char *dir = TSAOT_SOURCE_DIR "/tests/fixtures/ops";
  bool verbose = false;
  int first = 1;
  while (first < argc && argv[first][0] == '-') {
    if (!strcmp(argv[first], "-v")) {
      verbose = true;
      first++;
    } else if (!strcmp(argv[first], "-d") && first + 1 < argc) {
      dir = argv[first + 1];
      first += 2;
    } else {
      fprintf(stderr, "usage: test_ops [-v] [-d OPS_DIR] [SUBSTRING...]\n");
      return 2;
    }
  }
  oc_dirs dirs = {0};
  if (!oc_dirs_list(dir, &dirs)) {
    fprintf(stderr, "test_ops: out of memory listing %s\n", dir);
    return 1;
  }
  ts_diag d = {0};
  bool init_ok = ts_rt_kernels_init(&d);
  if (!init_ok) fprintf(stderr, "test_ops: ts_rt_kernels_init failed:\n%s\n", d.text.data ? d.text.data : "");
  ts_buf_free(&d.text);

  ts_rt_ctx ctx;
  ts_rt_ctx_init(&ctx, 4);
  op_names missing = {0};
  int passed = 0, failed = 0, nokernel = 0;
  static op_case k;
  for (int di = 0; di < dirs.n; di++) {
    oc_env e = {.c = &ctx};
    char *text = oc_open(&e, dirs.v[di]);
    if (!text) {
      fprintf(stderr, "test_ops: cannot read %s/arrays.bin and cases.txt: %s\n", dirs.v[di], strerror(errno));
      failed++;
      continue;
    }
    char *pos = text;
    for (;;) {
      bool eof;
      e.why.len = 0;
      if (e.why.data) e.why.data[0] = '\0';
      ts_rt_clear_error(&ctx);
      bool parsed = op_parse_case(&e, &pos, &k, &eof);
      if (eof) {
        op_case_free(&k);
        break;
      }
      const char *name = k.name ? k.name : "?";
      if (!op_selected(name, argc, argv, first)) {
        op_case_free(&k);
        if (!parsed) break;
        continue;
      }
      if (!parsed) {
        printf("FAIL %s: %s\n", name, e.why.data ? e.why.data : "");
        failed++;
        op_case_free(&k);
        break; /* the rest of the manifest cannot be trusted */
      }
      ts_rt_kernel_fn fn = ts_rt_kernel_by_name(k.schema);
      if (!fn) {
        nokernel++;
        op_names_add(&missing, k.schema);
        if (verbose) printf("NO KERNEL %s\n", name);
      } else if (op_run(&e, &k, fn)) {
        passed++;
        if (verbose) printf("ok %s\n", name);
      } else {
        failed++;
        printf("FAIL %s: %s\n", name, e.why.data ? e.why.data : "");
      }
      op_case_free(&k);
    }
    oc_close(&e);
    free(text);
  }
  for (int i = 0; i < missing.n; i++) {
    printf("no kernel: %s (%d case%s)\n", missing.v[i], missing.count[i], missing.count[i] == 1 ? "" : "s");
    free(missing.v[i]);
  }
  free(missing.v);
  free(missing.count);
  oc_dirs_free(&dirs);
  printf("ops: %d passed, %d failed, %d without kernel\n", passed, failed, nokernel);
  ts_rt_ctx_free(&ctx);
  return failed || nokernel || !init_ok ? 1 : 0;
}
