/* ir/arena.c: the bump allocator that owns a graph's memory. */
#include "ir.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct ts_arena_chunk {
  struct ts_arena_chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

enum { TS_ARENA_CHUNK = 64 * 1024 };

/* All arenas' chunk bytes, against the optional process-wide limit. */
static atomic_size_t ts_arena_total, ts_arena_total_max;
static atomic_bool ts_arena_total_hit;

void ts_arena_set_total_limit(size_t bytes) {
  atomic_store(&ts_arena_total_max, bytes);
  atomic_store(&ts_arena_total_hit, false);
}

bool ts_arena_total_limit_hit(void) { return atomic_load(&ts_arena_total_hit); }

/* Counts a new chunk of `bytes` against the limit: false (nothing counted)
 * when it would pass it. */
static bool ts_arena_total_take(size_t bytes) {
  size_t max = atomic_load(&ts_arena_total_max);
  size_t before = atomic_fetch_add(&ts_arena_total, bytes);
  if (max && (before + bytes < before || before + bytes > max)) {
    atomic_fetch_sub(&ts_arena_total, bytes);
    atomic_store(&ts_arena_total_hit, true);
    return false;
  }
  return true;
}

void ts_arena_init(ts_arena *a, size_t limit) {
  memset(a, 0, sizeof *a);
  a->limit = limit;
}

void ts_arena_release(ts_arena *a) {
  struct ts_arena_chunk *c = a->head;
  while (c) {
    struct ts_arena_chunk *next = c->next;
    atomic_fetch_sub(&ts_arena_total, sizeof *c + c->size);
    free(c);
    c = next;
  }
  a->head = NULL;
  a->used = 0;
}

/* Bump-allocates from the newest chunk; a request larger than the chunk size
 * gets a chunk of its own so big tensors do not waste a whole chunk each. */
void *ts_arena_alloc(ts_arena *a, size_t size) {
  if (a->failed)
    return NULL;
  size_t need = (size + 15) & ~(size_t)15;
  if (need < size || (a->limit && (need > a->limit || a->used > a->limit - need))) {
    a->failed = true;
    return NULL;
  }
  struct ts_arena_chunk *c = a->head;
  if (!c || c->size - c->used < need) {
    size_t cap = need > TS_ARENA_CHUNK ? need : TS_ARENA_CHUNK;
    if (!ts_arena_total_take(sizeof *c + cap)) {
      a->failed = true;
      return NULL;
    }
    c = malloc(sizeof *c + cap);
    if (!c) {
      atomic_fetch_sub(&ts_arena_total, sizeof *c + cap);
      a->failed = true;
      return NULL;
    }
    c->size = cap;
    c->used = 0;
    /* A big one-off chunk goes behind the current one, which keeps serving. */
    if (a->head && need > TS_ARENA_CHUNK) {
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = a->head;
      a->head = c;
    }
  }
  void *p = c->data + c->used;
  c->used += need;
  a->used += need;
  memset(p, 0, need);
  return p;
}

void *ts_arena_grow(ts_arena *a, void *old, size_t old_n, size_t new_n, size_t elem) {
  if (new_n && elem > SIZE_MAX / new_n) {
    a->failed = true;
    return NULL;
  }
  void *p = ts_arena_alloc(a, new_n * elem);
  if (p && old && old_n)
    memcpy(p, old, (old_n < new_n ? old_n : new_n) * elem);
  return p;
}

char *ts_arena_strndup(ts_arena *a, const char *s, size_t n) {
  if (n == SIZE_MAX)
    return NULL;
  char *p = ts_arena_alloc(a, n + 1);
  if (p && n)
    memcpy(p, s, n);
  return p;
}

char *ts_arena_strdup(ts_arena *a, const char *s) { return ts_arena_strndup(a, s, strlen(s)); }
