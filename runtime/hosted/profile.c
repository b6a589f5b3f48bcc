/* runtime/hosted/profile.c: time per node for tsaot-bench --profile, and
 * with trace set one event per node run for tsaot-bench --trace (runtime.h,
 * "profile.c"). Entries are found by node pointer through a small open
 * addressing table; the cost when profiling is off is one pointer test in
 * the interpreter's loop and in compiled code's calls. Entries use libc's
 * malloc, not ts_rt_malloc: a run's heap (an arena) ends with the run, the
 * profile outlives it. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t ts_prof_hash(const ts_node *n, uint32_t mask) {
  uint64_t h = (uint64_t)(uintptr_t)n * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 32) & mask;
}

static bool ts_prof_grow(ts_rt_profile *p) {
  uint32_t cap = p->cap ? p->cap * 2 : 64;
  ts_rt_prof_entry *e = realloc(p->entries, (size_t)cap * sizeof *e);
  if (!e)
    return false;
  p->entries = e;
  uint32_t *ix = malloc((size_t)cap * 2 * sizeof *ix);
  if (!ix)
    return false;
  for (uint32_t i = 0; i < cap * 2; i++)
    ix[i] = UINT32_MAX;
  for (uint32_t i = 0; i < p->nentries; i++) {
    uint32_t h = ts_prof_hash(e[i].node, cap * 2 - 1);
    while (ix[h] != UINT32_MAX)
      h = (h + 1) & (cap * 2 - 1);
    ix[h] = i;
  }
  free(p->index);
  p->index = ix;
  p->cap = cap;
  return true;
}

/* Tracing: the node that just ended as one more event. */
static void ts_prof_event(ts_rt_profile *p, const ts_node *n, uint64_t t0, uint64_t dt, int native) {
  if (p->nevents == p->evcap) {
    uint32_t cap = p->evcap ? p->evcap * 2 : 256;
    ts_rt_prof_event *e = p->nevents < TS_RT_PROF_MAX_EVENTS ? realloc(p->events, (size_t)cap * sizeof *e) : NULL;
    if (!e) {
      p->dropped++;
      return;
    }
    p->events = e;
    p->evcap = cap;
  }
  p->events[p->nevents++] = (ts_rt_prof_event){.node = n,
                                               .start = t0 >= p->t_start ? t0 - p->t_start : 0,
                                               .ns = dt,
                                               .native = native,
                                               .out_at = (uint32_t)p->ev_text.len};
  p->ev_open = true;
}

void ts_rt_profile_end(ts_rt_profile *p, bool outer, const ts_node *n, uint64_t t0, int native) {
  p->depth--;
  p->ev_open = false;
  if (!outer || !n)
    return;
  uint64_t dt = ts_rt_now_ns() - t0;
  if (p->trace)
    ts_prof_event(p, n, t0, dt, native);
  if (p->nentries == p->cap && !ts_prof_grow(p)) {
    p->failed = true;
    return;
  }
  uint32_t mask = p->cap * 2 - 1, h = ts_prof_hash(n, mask);
  while (p->index[h] != UINT32_MAX && p->entries[p->index[h]].node != n)
    h = (h + 1) & mask;
  if (p->index[h] == UINT32_MAX) {
    p->index[h] = p->nentries;
    p->entries[p->nentries++] = (ts_rt_prof_entry){.node = n};
  }
  ts_rt_prof_entry *e = &p->entries[p->index[h]];
  e->calls++;
  e->ns += dt;
  if (native)
    e->native = native;
}

void ts_rt_profile_clear(ts_rt_profile *p) {
  p->nentries = 0;
  p->depth = 0;
  p->failed = false;
  p->nevents = 0;
  p->dropped = 0;
  p->ev_open = false;
  p->ev_text.len = 0;
  p->t_start = ts_rt_now_ns();
  if (p->index)
    for (uint32_t i = 0; i < p->cap * 2; i++)
      p->index[i] = UINT32_MAX;
}

void ts_rt_profile_free(ts_rt_profile *p) {
  free(p->entries);
  free(p->index);
  free(p->events);
  ts_buf_free(&p->ev_text);
  *p = (ts_rt_profile){0};
}

void ts_rt_profile_describe(const ts_node *n, ts_buf *detail) {
  const ts_attr *a = ts_node_attr(n, "Subgraph");
  if (!a || a->kind != TS_ATTR_GRAPH || !a->u.g)
    return;
  const ts_block *b = a->u.g->block;
  bool first = true;
  for (const ts_node *x = ts_block_first(b); x != b->ret; x = x->next) {
    if (ts_node_is(x, TS_K_prim_Constant))
      continue;
    const char *k = x->kind_name;
    const char *colon = strstr(k, "::");
    ts_buf_printf(detail, "%s%s", first ? "" : "+", colon ? colon + 2 : k);
    first = false;
  }
}

/* A value's type as a graph prints it, with a tensor's sizes: "Float(4, 32)". */
static void ts_prof_type(ts_buf *b, const ts_iv *v) {
  switch ((ts_iv_tag)v->tag) {
  case TS_IV_TENSOR: {
    const ts_rt_tensor *t = v->u.t;
    const char *dt = ts_dtype_name((ts_dtype)t->dtype);
    ts_buf_printf(b, "%s(", dt ? dt : "Tensor");
    for (int32_t d = 0; d < t->ndim; d++)
      ts_buf_printf(b, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
    ts_buf_putc(b, ')');
    return;
  }
  case TS_IV_NONE: ts_buf_puts(b, "NoneType"); return;
  case TS_IV_INT: ts_buf_puts(b, "int"); return;
  case TS_IV_DOUBLE: ts_buf_puts(b, "float"); return;
  case TS_IV_BOOL: ts_buf_puts(b, "bool"); return;
  case TS_IV_DEVICE: ts_buf_puts(b, "Device"); return;
  case TS_IV_STR: ts_buf_puts(b, "str"); return;
  case TS_IV_LIST: ts_buf_puts(b, "list"); return;
  case TS_IV_TUPLE: ts_buf_puts(b, "tuple"); return;
  case TS_IV_DICT: ts_buf_puts(b, "dict"); return;
  case TS_IV_OBJECT: ts_buf_puts(b, "object"); return;
  case TS_IV_FUNCTION: ts_buf_puts(b, "function"); return;
  case TS_IV_UNINIT: ts_buf_puts(b, "uninitialized"); return;
  }
  ts_buf_puts(b, "?");
}

void ts_rt_profile_trace_out(ts_rt_profile *p, const ts_iv *v) {
  if (!p->trace || !p->ev_open || !p->nevents || p->ev_text.len > UINT32_MAX / 2)
    return;
  ts_rt_prof_event *e = &p->events[p->nevents - 1];
  if (e->out_len)
    ts_buf_puts(&p->ev_text, "; ");
  ts_prof_type(&p->ev_text, v);
  e->out_len = (uint32_t)(p->ev_text.len - e->out_at);
}

/* Appends s with tabs and line breaks as spaces: the detail's fields are
 * split at tabs, and a file name comes from the model (hostile). */
static void ts_prof_field(ts_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n && s[i]; i++)
    ts_buf_putc(b, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
}

void ts_rt_profile_event_detail(const ts_rt_profile *p, uint32_t i, ts_buf *out) {
  const ts_rt_prof_event *e = &p->events[i];
  ts_rt_profile_describe(e->node, out);
  ts_buf_putc(out, '\t');
  /* a fusion group's place is its first op's that has one */
  const ts_node *at = e->node;
  const ts_attr *a = ts_node_attr(at, "Subgraph");
  if (!at->loc.file && a && a->kind == TS_ATTR_GRAPH && a->u.g) {
    const ts_block *b = a->u.g->block;
    for (const ts_node *x = ts_block_first(b); x != b->ret; x = x->next)
      if (x->loc.file) {
        at = x;
        break;
      }
  }
  if (at->loc.file) {
    ts_prof_field(out, at->loc.file, strlen(at->loc.file));
    ts_buf_printf(out, ":%d", (int)at->loc.line);
  }
  ts_buf_putc(out, '\t');
  if (e->out_len && (size_t)e->out_at + e->out_len <= p->ev_text.len)
    ts_prof_field(out, p->ev_text.data + e->out_at, e->out_len);
}
