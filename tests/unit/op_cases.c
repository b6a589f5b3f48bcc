/* tests/unit/op_cases.c: the reader of tests/fixtures/ops/ (see op_cases.h). */
#include "op_cases.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void oc_split(char *line, oc_toks *tk) {
  tk->n = tk->i = 0;
  char *save = NULL;
  for (char *p = strtok_r(line, " \n", &save); p && tk->n < OC_MAX_TOKS; p = strtok_r(NULL, " \n", &save))
    tk->t[tk->n++] = p;
}

const char *oc_next(oc_toks *tk) { return tk->i < tk->n ? tk->t[tk->i++] : NULL; }

bool oc_bad(oc_env *e, const char *what) {
  ts_buf_printf(&e->why, "manifest: %s", what);
  return false;
}

/* Element type of a list or dict from its manifest word (NULL: not known). */
static const ts_type *oc_elem_type(const char *k) {
  if (!strcmp(k, "int")) return ts_type_leaf(TS_TY_INT);
  if (!strcmp(k, "float")) return ts_type_leaf(TS_TY_FLOAT);
  if (!strcmp(k, "bool")) return ts_type_leaf(TS_TY_BOOL);
  if (!strcmp(k, "str")) return ts_type_leaf(TS_TY_STR);
  if (!strcmp(k, "Tensor")) return ts_type_leaf(TS_TY_TENSOR);
  return NULL;
}

/* Applies one view mod ("T:0:1", "S:d:start:end:step", "E:s0:s1", "P:0:2:1",
 * "I:d:i") to *t, replacing it with the new view. */
static bool oc_apply_mod(oc_env *e, ts_rt_tensor **t, char *mod) {
  int64_t v[TS_RT_MAX_DIMS + 1];
  int nv = 0;
  char kind = mod[0];
  for (char *p = strchr(mod, ':'); p && nv <= TS_RT_MAX_DIMS; p = strchr(p + 1, ':'))
    v[nv++] = strtoll(p + 1, NULL, 10);
  ts_rt_tensor *x = *t;
  int32_t nd = x->ndim;
  int64_t sizes[TS_RT_MAX_DIMS], strides[TS_RT_MAX_DIMS], off = x->offset;
  memcpy(sizes, x->sizes, sizeof(int64_t) * (size_t)nd);
  memcpy(strides, x->strides, sizeof(int64_t) * (size_t)nd);
  switch (kind) {
  case 'T': {
    if (nv != 2 || v[0] < 0 || v[0] >= nd || v[1] < 0 || v[1] >= nd) return oc_bad(e, "bad transpose");
    int64_t s = sizes[v[0]], st = strides[v[0]];
    sizes[v[0]] = sizes[v[1]], strides[v[0]] = strides[v[1]];
    sizes[v[1]] = s, strides[v[1]] = st;
    break;
  }
  case 'S': {
    if (nv != 4 || v[0] < 0 || v[0] >= nd || v[1] < 0 || v[1] > v[2] || v[2] > sizes[v[0]] || v[3] <= 0)
      return oc_bad(e, "bad slice");
    off += v[1] * strides[v[0]];
    sizes[v[0]] = (v[2] - v[1] + v[3] - 1) / v[3];
    strides[v[0]] *= v[3];
    break;
  }
  case 'E': {
    if (nv < nd || nv > TS_RT_MAX_DIMS) return oc_bad(e, "bad expand");
    int64_t ns[TS_RT_MAX_DIMS], nst[TS_RT_MAX_DIMS];
    for (int k = nv - 1, j = nd - 1; k >= 0; k--, j--) {
      if (j >= 0) {
        ns[k] = v[k] == -1 ? sizes[j] : v[k];
        nst[k] = sizes[j] == ns[k] ? strides[j] : 0;
        if (sizes[j] != ns[k] && sizes[j] != 1) return oc_bad(e, "bad expand");
      } else {
        ns[k] = v[k];
        nst[k] = 0;
      }
    }
    nd = nv;
    memcpy(sizes, ns, sizeof(int64_t) * (size_t)nd);
    memcpy(strides, nst, sizeof(int64_t) * (size_t)nd);
    break;
  }
  case 'P': {
    if (nv != nd) return oc_bad(e, "bad permute");
    for (int k = 0; k < nd; k++) {
      if (v[k] < 0 || v[k] >= nd) return oc_bad(e, "bad permute");
      sizes[k] = x->sizes[v[k]];
      strides[k] = x->strides[v[k]];
    }
    break;
  }
  case 'I': {
    if (nv != 2 || v[0] < 0 || v[0] >= nd || v[1] < 0 || v[1] >= sizes[v[0]]) return oc_bad(e, "bad select");
    off += v[1] * strides[v[0]];
    for (int k = (int)v[0]; k + 1 < nd; k++) sizes[k] = sizes[k + 1], strides[k] = strides[k + 1];
    nd--;
    break;
  }
  default:
    return oc_bad(e, "unknown view mod");
  }
  ts_rt_tensor *y = ts_rt_tensor_view(e->c, x, off, nd, sizes, strides);
  if (!y) return oc_bad(e, "view failed");
  ts_rt_tensor_release(x);
  *t = y;
  return true;
}

/* "t OFF:LEN MODS": a stored array, reinterpreted as bfloat16 when MODS says
 * bf16, then viewed through the mods. *base (if not NULL) gets a reference
 * to the stored array itself; *noval whether its values are not compared. */
static bool oc_tensor(oc_env *e, oc_toks *tk, ts_iv *out, ts_rt_tensor **base, bool *noval) {
  const char *ref = oc_next(tk), *mods = oc_next(tk);
  if (!ref || !mods) return oc_bad(e, "tensor needs OFF:LEN MODS");
  char *colon;
  unsigned long long off = strtoull(ref, &colon, 10), len = *colon == ':' ? strtoull(colon + 1, NULL, 10) : 0;
  if (*colon != ':' || off > e->blob_len || len > e->blob_len - off) return oc_bad(e, "array outside arrays.bin");
  ts_rt_tensor *t = ts_rt_npy_parse(e->c, e->blob + off, (size_t)len, ref);
  if (!t) return oc_bad(e, e->c->err.data ? e->c->err.data : "bad array");
  char mbuf[512];
  snprintf(mbuf, sizeof mbuf, "%s", mods);
  char *save = NULL;
  bool ok = true;
  if (noval) *noval = false;
  for (char *m = strtok_r(mbuf, ",", &save); m && ok; m = strtok_r(NULL, ",", &save)) {
    if (!strcmp(m, "-")) continue;
    if (!strcmp(m, "noval")) {
      if (noval) *noval = true;
      continue;
    }
    if (!strcmp(m, "bf16")) {
      if (t->dtype != TS_DT_INT16) return oc_bad(e, "bf16 array not stored as int16");
      ts_rt_tensor *b = ts_rt_tensor_new_view(e->c, t->storage, TS_DT_BFLOAT16, t->offset, t->ndim, t->sizes,
                                              t->strides);
      ts_rt_tensor_release(t);
      if (!(t = b)) return oc_bad(e, "bf16 view failed");
      continue;
    }
    if (base && !*base) {
      ts_rt_tensor_retain(t);
      *base = t;
    }
    ok = oc_apply_mod(e, &t, m);
  }
  if (!ok) {
    ts_rt_tensor_release(t);
    return false;
  }
  if (base && !*base) {
    ts_rt_tensor_retain(t);
    *base = t;
  }
  *out = ts_iv_tensor(t);
  return true;
}

static int oc_hex(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool oc_unhex(const char *s, ts_buf *b) {
  if (!strcmp(s, "_")) return true;
  for (; s[0] && s[1]; s += 2) {
    int hi = oc_hex(s[0]), lo = oc_hex(s[1]);
    if (hi < 0 || lo < 0) return false;
    ts_buf_putc(b, (char)(hi * 16 + lo));
  }
  return !*s;
}

/* oc_value at nesting depth `depth` (bounded: the file is input). */
static bool oc_value_at(oc_env *e, oc_toks *tk, ts_iv *out, ts_rt_tensor **base, bool *noval, int depth) {
  *out = ts_iv_none();
  const char *k = oc_next(tk);
  if (!k || depth > 32) return oc_bad(e, "value expected");
  if (!strcmp(k, "n")) return true;
  if (!strcmp(k, "u")) {
    out->tag = TS_IV_UNINIT;
    return true;
  }
  if (!strcmp(k, "t")) return oc_tensor(e, tk, out, base, noval);
  const char *a = oc_next(tk);
  if (!a) return oc_bad(e, "value truncated");
  if (!strcmp(k, "i")) {
    *out = ts_iv_int(strtoll(a, NULL, 10));
    return true;
  }
  if (!strcmp(k, "f")) {
    *out = ts_iv_double(strtod(a, NULL));
    return true;
  }
  if (!strcmp(k, "b")) {
    *out = ts_iv_bool(a[0] == '1');
    return true;
  }
  if (!strcmp(k, "s")) {
    ts_buf b = {0};
    if (!oc_unhex(a, &b)) {
      ts_buf_free(&b);
      return oc_bad(e, "bad hex string");
    }
    ts_rt_str *s = ts_rt_str_new(e->c, b.data ? b.data : "", b.len);
    ts_buf_free(&b);
    if (!s) return oc_bad(e, "str failed");
    out->u.s = s;
    out->tag = TS_IV_STR;
    return true;
  }
  if (!strcmp(k, "dev")) {
    ts_device d;
    if (!ts_device_parse(a, strlen(a), &d)) return oc_bad(e, "bad device");
    *out = ts_iv_device(d);
    return true;
  }
  if (!strcmp(k, "L")) {
    const char *ns = oc_next(tk);
    long n = ns ? strtol(ns, NULL, 10) : -1;
    if (n < 0) return oc_bad(e, "bad list");
    ts_rt_list *l = ts_rt_list_new(e->c, oc_elem_type(a), (uint32_t)n);
    if (!l) return oc_bad(e, "list failed");
    out->u.l = l;
    out->tag = TS_IV_LIST;
    for (long i = 0; i < n; i++) {
      ts_iv v;
      if (!oc_value_at(e, tk, &v, NULL, NULL, depth + 1)) return false;
      if (!ts_rt_list_append(e->c, l, v)) return oc_bad(e, "append failed");
    }
    return true;
  }
  if (!strcmp(k, "U")) {
    long n = strtol(a, NULL, 10);
    if (n < 0 || n > 1000) return oc_bad(e, "bad tuple");
    ts_rt_tuple *t = ts_rt_tuple_new(e->c, (uint32_t)n);
    if (!t) return oc_bad(e, "tuple failed");
    out->u.tup = t;
    out->tag = TS_IV_TUPLE;
    for (long i = 0; i < n; i++)
      if (!oc_value_at(e, tk, &t->items[i], NULL, NULL, depth + 1)) return false;
    return true;
  }
  if (!strcmp(k, "D")) {
    const char *vk = oc_next(tk), *ns = oc_next(tk);
    long n = ns ? strtol(ns, NULL, 10) : -1;
    if (!vk || n < 0) return oc_bad(e, "bad dict");
    ts_rt_dict *d = ts_rt_dict_new(e->c, oc_elem_type(a), oc_elem_type(vk));
    if (!d) return oc_bad(e, "dict failed");
    out->u.dict = d;
    out->tag = TS_IV_DICT;
    for (long i = 0; i < n; i++) {
      ts_iv key, val;
      if (!oc_value_at(e, tk, &key, NULL, NULL, depth + 1)) return false;
      if (!oc_value_at(e, tk, &val, NULL, NULL, depth + 1)) {
        ts_iv_release(key);
        return false;
      }
      bool ok = ts_rt_dict_set(e->c, d, key, val);
      ts_iv_release(key);
      ts_iv_release(val);
      if (!ok) return oc_bad(e, "dict set failed");
    }
    return true;
  }
  return oc_bad(e, "unknown value kind");
}

bool oc_value(oc_env *e, oc_toks *tk, ts_iv *out, ts_rt_tensor **base, bool *noval) {
  return oc_value_at(e, tk, out, base, noval, 0);
}

uint8_t *oc_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, n = 0;
  uint8_t *d = malloc(cap + 1);
  while (d) {
    n += fread(d + n, 1, cap - n, f);
    if (n < cap) break;
    uint8_t *nd = realloc(d, cap * 2 + 1);
    if (!nd) {
      free(d);
      d = NULL;
      break;
    }
    d = nd;
    cap *= 2;
  }
  fclose(f);
  if (d) d[n] = 0;
  *len = n;
  return d;
}

char *oc_open(oc_env *e, const char *dir) {
  char path[4096];
  size_t text_len = 0;
  snprintf(path, sizeof path, "%s/arrays.bin", dir);
  e->blob = oc_slurp(path, &e->blob_len);
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  char *text = e->blob ? (char *)oc_slurp(path, &text_len) : NULL;
  if (!text) {
    int err = errno;
    free(e->blob);
    e->blob = NULL;
    e->blob_len = 0;
    errno = err;
  }
  return text;
}

void oc_close(oc_env *e) {
  free(e->blob);
  e->blob = NULL;
  e->blob_len = 0;
  ts_buf_free(&e->why);
}

static int oc_dir_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool oc_dirs_list(const char *root, oc_dirs *out) {
  out->v = malloc(sizeof *out->v);
  if (!out->v || !(out->v[0] = strdup(root))) return false;
  out->n = 1;
  DIR *d = opendir(root);
  if (!d) return true; /* oc_open reports it */
  struct dirent *de;
  bool ok = true;
  while (ok && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    size_t len = strlen(root) + strlen(de->d_name) + 16;
    char *sub = malloc(len);
    if (!sub) { ok = false; break; }
    snprintf(sub, len, "%s/%s/cases.txt", root, de->d_name);
    struct stat st;
    if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
      snprintf(sub, len, "%s/%s", root, de->d_name);
      char **nv = realloc(out->v, (size_t)(out->n + 1) * sizeof *nv);
      if (!nv) { free(sub); ok = false; break; }
      out->v = nv;
      out->v[out->n++] = sub;
    } else {
      free(sub);
    }
  }
  closedir(d);
  qsort(out->v + 1, (size_t)(out->n - 1), sizeof *out->v, oc_dir_cmp);
  return ok;
}

void oc_dirs_free(oc_dirs *d) {
  for (int i = 0; i < d->n; i++) free(d->v[i]);
  free(d->v);
  d->v = NULL;
  d->n = 0;
}
