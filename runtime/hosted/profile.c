/* runtime/hosted/profile.c: time per node for tsaot-bench --profile (runtime.h,
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

void ts_rt_profile_end(ts_rt_profile *p, bool outer, const ts_node *n, uint64_t t0, int native) {
  p->depth--;
  if (!outer || !n)
    return;
  uint64_t dt = ts_rt_now_ns() - t0;
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
  if (p->index)
    for (uint32_t i = 0; i < p->cap * 2; i++)
      p->index[i] = UINT32_MAX;
}

void ts_rt_profile_free(ts_rt_profile *p) {
  free(p->entries);
  free(p->index);
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
