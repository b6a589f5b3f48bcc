/* runtime/alloc.c: the run path's allocator. ts_rt_malloc and friends go to
 * the calling thread's current heap, or to the C library when there is none.
 *
 * A heap over memory is a segregated-fits allocator with boundary tags over
 * the caller's bytes: free blocks sit in power-of-two size bins (a bitmap
 * says which bins hold any), the first block of the smallest bin that fits
 * is split, and freeing coalesces with both neighbours at once, so no two
 * free blocks are ever adjacent. Payloads are 16-byte aligned, 64-byte for
 * requests of 64 bytes or more (tensor data, for vector loads). One mutex
 * guards a heap: the pool's workers allocate from their caller's heap.
 *
 * A counting heap (no memory) hands out C library blocks and remembers each
 * block's size in a hash of addresses, so that a block it did not make (a
 * tensor made at load time, released during a run) is told apart without
 * reading memory before it. Its used/peak count the block size a heap over
 * memory would use for the same request (header and rounding included);
 * what alignment and fragmentation cost a real heap is not counted, so an
 * arena needs some slack over the peak.
 *
 * Less than a C library: no per-thread caches (one lock per call), and
 * ts_rt_realloc of a block that is not the current heap's stays in the C
 * library (its size is not known, so it cannot be copied into the heap). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* A block of a heap over memory, at address b (16-byte aligned):
 *   b + 0  the previous block's size, valid only while that block is free
 *          (its footer: freeing finds its start from there)
 *   b + 8  this block's size (a multiple of 16, the 16 header bytes
 *          included) | TS_AL_USED | TS_AL_PREV_USED
 *   b + 16 the payload; in a free block, the bin list's next/prev links
 * The last 16 bytes of the region are an epilogue: size 0, marked used. */
#define TS_AL_HDR ((size_t)16)
#define TS_AL_MIN ((size_t)32) /* header + two links */
#define TS_AL_USED ((size_t)1)
#define TS_AL_PREV_USED ((size_t)2)
#define TS_AL_FLAGS ((size_t)15)
#define TS_AL_BIG ((size_t)64) /* requests this large get 64-byte aligned payloads */
#define TS_AL_NBINS 64

typedef struct ts_al_links {
  uint8_t *next, *prev; /* block addresses */
} ts_al_links;

struct ts_rt_heap {
  pthread_mutex_t mu;
  uint8_t *start, *end; /* blocks lie in [start, end); the epilogue at end. NULL: counting */
  size_t used, peak;
  uint64_t binmap; /* bit k: bins[k] is not empty */
  uint8_t *bins[TS_AL_NBINS];
  /* Counting heap: block address -> counted size (open addressing, linear
   * probing, a power of two slots, at most half full). */
  void **keys;
  size_t *vals;
  size_t cap, count;
};

static TS_TLS ts_rt_heap *ts_al_current;

/* ------------------------------------------------------------ block words */

static size_t *ts_al_hdr(uint8_t *b) { return (size_t *)(void *)(b + 8); }
static size_t *ts_al_prev_foot(uint8_t *b) { return (size_t *)(void *)b; }
static size_t ts_al_size(uint8_t *b) { return *ts_al_hdr(b) & ~TS_AL_FLAGS; }
static ts_al_links *ts_al_links_of(uint8_t *b) { return (ts_al_links *)(void *)(b + TS_AL_HDR); }

/* The block size for a request of n bytes; 0 if it overflows. */
static size_t ts_al_block_size(size_t n) {
  if (n > SIZE_MAX - TS_AL_HDR - 15 - 2 * TS_AL_BIG)
    return 0;
  size_t s = ((n + 15) & ~(size_t)15) + TS_AL_HDR;
  return s < TS_AL_MIN ? TS_AL_MIN : s;
}

static unsigned ts_al_bin(size_t size) {
  unsigned k = 0;
  while (size >>= 1)
    k++;
  return k;
}

static void ts_al_bin_insert(ts_rt_heap *h, uint8_t *b) {
  unsigned k = ts_al_bin(ts_al_size(b));
  ts_al_links *l = ts_al_links_of(b);
  l->prev = NULL;
  l->next = h->bins[k];
  if (l->next)
    ts_al_links_of(l->next)->prev = b;
  h->bins[k] = b;
  h->binmap |= (uint64_t)1 << k;
}

static void ts_al_bin_remove(ts_rt_heap *h, uint8_t *b) {
  unsigned k = ts_al_bin(ts_al_size(b));
  ts_al_links *l = ts_al_links_of(b);
  if (l->prev)
    ts_al_links_of(l->prev)->next = l->next;
  else
    h->bins[k] = l->next;
  if (l->next)
    ts_al_links_of(l->next)->prev = l->prev;
  if (!h->bins[k])
    h->binmap &= ~((uint64_t)1 << k);
}

/* Makes [b, b + size) a free block (keeping b's PREV_USED bit as given),
 * writes its footer and tells the next block, and bins it. */
static void ts_al_make_free(ts_rt_heap *h, uint8_t *b, size_t size, size_t prev_used) {
  *ts_al_hdr(b) = size | prev_used;
  *ts_al_prev_foot(b + size) = size;
  *ts_al_hdr(b + size) &= ~TS_AL_PREV_USED;
  ts_al_bin_insert(h, b);
}

/* Bytes to skip at the start of free block b so that its payload is
 * 64-byte aligned: 0, or a gap large enough to be a free block itself. */
static size_t ts_al_gap(uint8_t *b, bool big) {
  if (!big)
    return 0;
  uintptr_t p = (uintptr_t)(b + TS_AL_HDR);
  size_t gap = (size_t)(((p + TS_AL_BIG - 1) & ~(uintptr_t)(TS_AL_BIG - 1)) - p);
  if (gap && gap < TS_AL_MIN)
    gap += TS_AL_BIG;
  return gap;
}

/* A free block that can hold `need` bytes (plus its alignment gap), or
 * NULL: first fit in the smallest bin that may hold one, then the next
 * non-empty bins. */
static uint8_t *ts_al_find(ts_rt_heap *h, size_t need, bool big) {
  unsigned k = ts_al_bin(need);
  uint64_t map = h->binmap & (~(uint64_t)0 << k);
  while (map) {
    unsigned bin = 0;
    while (!(map & ((uint64_t)1 << bin)))
      bin++;
    for (uint8_t *b = h->bins[bin]; b; b = ts_al_links_of(b)->next)
      if (ts_al_size(b) >= need + ts_al_gap(b, big))
        return b;
    map &= ~((uint64_t)1 << bin);
  }
  return NULL;
}

/* Takes `need` bytes out of free block b (already unbinned): the alignment
 * gap before and any usable rest after go back to the bins. Returns the
 * used block. */
static uint8_t *ts_al_carve(ts_rt_heap *h, uint8_t *b, size_t need, bool big) {
  size_t size = ts_al_size(b);
  size_t prev_used = *ts_al_hdr(b) & TS_AL_PREV_USED;
  size_t gap = ts_al_gap(b, big);
  if (gap) {
    ts_al_make_free(h, b, gap, prev_used);
    b += gap;
    size -= gap;
    prev_used = 0;
  }
  if (size - need >= TS_AL_MIN) {
    *ts_al_hdr(b) = need | TS_AL_USED | prev_used;
    ts_al_make_free(h, b + need, size - need, TS_AL_PREV_USED);
  } else {
    *ts_al_hdr(b) = size | TS_AL_USED | prev_used;
    *ts_al_hdr(b + size) |= TS_AL_PREV_USED;
  }
  return b;
}

static void ts_al_count(ts_rt_heap *h, size_t add) {
  h->used += add;
  if (h->used > h->peak)
    h->peak = h->used;
}

static void *ts_al_heap_malloc(ts_rt_heap *h, size_t n) {
  size_t need = ts_al_block_size(n);
  if (!need)
    return NULL;
  bool big = n >= TS_AL_BIG;
  pthread_mutex_lock(&h->mu);
  uint8_t *b = ts_al_find(h, need, big);
  if (b) {
    ts_al_bin_remove(h, b);
    b = ts_al_carve(h, b, need, big);
    ts_al_count(h, ts_al_size(b));
  }
  pthread_mutex_unlock(&h->mu);
  return b ? b + TS_AL_HDR : NULL;
}

/* Whether p is a payload inside h's region (any block's, used or not). */
static bool ts_al_owns(const ts_rt_heap *h, const void *p) {
  uintptr_t a = (uintptr_t)p;
  return h && h->start && a >= (uintptr_t)h->start + TS_AL_HDR && a < (uintptr_t)h->end;
}

static void ts_al_heap_free(ts_rt_heap *h, void *p) {
  uint8_t *b = (uint8_t *)p - TS_AL_HDR;
  pthread_mutex_lock(&h->mu);
  /* A payload address of a used block, or a caller's bug (double free, an
   * interior pointer): that is ignored rather than corrupting the bins. */
  if (((uintptr_t)p & 15) || !(*ts_al_hdr(b) & TS_AL_USED)) {
    pthread_mutex_unlock(&h->mu);
    return;
  }
  size_t size = ts_al_size(b);
  size_t prev_used = *ts_al_hdr(b) & TS_AL_PREV_USED;
  h->used -= size;
  /* Cleared even when b merges into the block before it, so that a second
   * free of p sees a free block. */
  *ts_al_hdr(b) &= ~TS_AL_USED;
  uint8_t *next = b + size;
  if (!(*ts_al_hdr(next) & TS_AL_USED)) {
    ts_al_bin_remove(h, next);
    size += ts_al_size(next);
  }
  if (!prev_used) {
    uint8_t *prev = b - *ts_al_prev_foot(b);
    ts_al_bin_remove(h, prev);
    size += ts_al_size(prev);
    prev_used = *ts_al_hdr(prev) & TS_AL_PREV_USED;
    b = prev;
  }
  ts_al_make_free(h, b, size, prev_used);
  pthread_mutex_unlock(&h->mu);
}

/* Grows or shrinks in place where the block itself or a free next block
 * allows; else a new block and a copy. */
static void *ts_al_heap_realloc(ts_rt_heap *h, void *p, size_t n) {
  size_t need = ts_al_block_size(n);
  if (!need)
    return NULL;
  uint8_t *b = (uint8_t *)p - TS_AL_HDR;
  pthread_mutex_lock(&h->mu);
  size_t size = ts_al_size(b);
  /* A block made for a small request is only 16-byte aligned: one that
   * grows to 64 bytes or more moves, so that big payloads stay aligned. */
  bool aligned_enough = n < TS_AL_BIG || ((uintptr_t)p & (TS_AL_BIG - 1)) == 0;
  if (aligned_enough) {
    uint8_t *next = b + size;
    size_t avail = size;
    if (need > size && !(*ts_al_hdr(next) & TS_AL_USED) && size + ts_al_size(next) >= need) {
      ts_al_bin_remove(h, next);
      avail = size + ts_al_size(next);
      *ts_al_hdr(b + avail) |= TS_AL_PREV_USED;
    }
    if (avail >= need) {
      size_t flags = *ts_al_hdr(b) & TS_AL_FLAGS;
      if (avail - need >= TS_AL_MIN) {
        *ts_al_hdr(b) = need | flags;
        uint8_t *rest = b + need;
        size_t rest_size = avail - need;
        /* The rest may touch a free block (after a shrink): merge them. */
        uint8_t *after = rest + rest_size;
        if (!(*ts_al_hdr(after) & TS_AL_USED)) {
          ts_al_bin_remove(h, after);
          rest_size += ts_al_size(after);
        }
        ts_al_make_free(h, rest, rest_size, TS_AL_PREV_USED);
        avail = need;
      } else {
        *ts_al_hdr(b) = avail | flags;
      }
      h->used -= size;
      ts_al_count(h, avail);
      pthread_mutex_unlock(&h->mu);
      return p;
    }
  }
  pthread_mutex_unlock(&h->mu);
  void *q = ts_al_heap_malloc(h, n);
  if (!q)
    return NULL;
  size_t keep = size - TS_AL_HDR;
  memcpy(q, p, keep < n ? keep : n);
  ts_al_heap_free(h, p);
  return q;
}

/* --------------------------------------------------------- counting heap */

static size_t ts_al_hash(const void *p, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 29;
  return (size_t)x & mask;
}

/* The slot of key p, or the empty slot where it would go. */
static size_t ts_al_map_slot(const ts_rt_heap *h, const void *p) {
  size_t mask = h->cap - 1;
  size_t i = ts_al_hash(p, mask);
  while (h->keys[i] && h->keys[i] != p)
    i = (i + 1) & mask;
  return i;
}

static bool ts_al_map_grow(ts_rt_heap *h) {
  size_t cap = h->cap ? h->cap * 2 : 256;
  void **keys = calloc(cap, sizeof *keys);
  size_t *vals = calloc(cap, sizeof *vals);
  if (!keys || !vals || cap < h->cap) {
    free(keys);
    free(vals);
    return false;
  }
  void **okeys = h->keys;
  size_t *ovals = h->vals;
  size_t ocap = h->cap;
  h->keys = keys;
  h->vals = vals;
  h->cap = cap;
  for (size_t i = 0; i < ocap; i++)
    if (okeys[i]) {
      size_t j = ts_al_map_slot(h, okeys[i]);
      h->keys[j] = okeys[i];
      h->vals[j] = ovals[i];
    }
  free(okeys);
  free(ovals);
  return true;
}

/* Records p -> size (replacing a stale entry for a reused address). */
static bool ts_al_map_put(ts_rt_heap *h, void *p, size_t size) {
  if ((h->count + 1) * 2 > h->cap && !ts_al_map_grow(h))
    return false;
  size_t i = ts_al_map_slot(h, p);
  if (!h->keys[i]) {
    h->keys[i] = p;
    h->count++;
  } else {
    h->used -= h->vals[i];
  }
  h->vals[i] = size;
  return true;
}

/* Removes p; its size in *size. False if p is not there. Backward-shift
 * deletion keeps every probe chain unbroken without tombstones. */
static bool ts_al_map_take(ts_rt_heap *h, const void *p, size_t *size) {
  if (!h->cap)
    return false;
  size_t mask = h->cap - 1;
  size_t i = ts_al_map_slot(h, p);
  if (!h->keys[i])
    return false;
  *size = h->vals[i];
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!h->keys[j])
      break;
    size_t home = ts_al_hash(h->keys[j], mask);
    /* Entry j may move to the hole at i unless its home lies in (i, j]. */
    bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays)
      continue;
    h->keys[i] = h->keys[j];
    h->vals[i] = h->vals[j];
    i = j;
  }
  h->keys[i] = NULL;
  h->count--;
  return true;
}

static void *ts_al_count_malloc(ts_rt_heap *h, size_t n, bool zero) {
  size_t size = ts_al_block_size(n);
  if (!size)
    return NULL;
  void *p = zero ? calloc(1, n ? n : 1) : malloc(n ? n : 1);
  if (!p)
    return NULL;
  pthread_mutex_lock(&h->mu);
  bool ok = ts_al_map_put(h, p, size);
  if (ok)
    ts_al_count(h, size);
  pthread_mutex_unlock(&h->mu);
  if (!ok) {
    free(p);
    return NULL;
  }
  return p;
}

static void ts_al_count_free(ts_rt_heap *h, void *p) {
  size_t size;
  pthread_mutex_lock(&h->mu);
  if (ts_al_map_take(h, p, &size))
    h->used -= size;
  pthread_mutex_unlock(&h->mu);
  free(p);
}

static void *ts_al_count_realloc(ts_rt_heap *h, void *p, size_t n) {
  size_t size = ts_al_block_size(n);
  if (!size)
    return NULL;
  /* Only blocks this heap made are counted. p leaves the table before the
   * realloc (its address means nothing after it); it or q goes back in the
   * slot it left, so the put never needs to grow the table. */
  size_t old = 0;
  pthread_mutex_lock(&h->mu);
  bool mine = ts_al_map_take(h, p, &old);
  if (mine)
    h->used -= old;
  pthread_mutex_unlock(&h->mu);
  void *q = realloc(p, n ? n : 1);
  if (mine) {
    pthread_mutex_lock(&h->mu);
    if (q ? ts_al_map_put(h, q, size) : ts_al_map_put(h, p, old))
      ts_al_count(h, q ? size : old);
    pthread_mutex_unlock(&h->mu);
  }
  return q;
}

/* ------------------------------------------------------------------ API */

void *ts_rt_malloc(size_t n) {
  ts_rt_heap *h = ts_al_current;
  if (!h)
    return malloc(n ? n : 1);
  return h->start ? ts_al_heap_malloc(h, n) : ts_al_count_malloc(h, n, false);
}

void *ts_rt_calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size)
    return NULL;
  size_t total = n * size;
  ts_rt_heap *h = ts_al_current;
  if (!h)
    return calloc(1, total ? total : 1);
  if (!h->start)
    return ts_al_count_malloc(h, total, true);
  void *p = ts_al_heap_malloc(h, total);
  if (p)
    memset(p, 0, total);
  return p;
}

void *ts_rt_realloc(void *p, size_t n) {
  if (!p)
    return ts_rt_malloc(n);
  ts_rt_heap *h = ts_al_current;
  if (ts_al_owns(h, p))
    return ts_al_heap_realloc(h, p, n);
  if (h && !h->start)
    return ts_al_count_realloc(h, p, n);
  return realloc(p, n ? n : 1);
}

void ts_rt_free(void *p) {
  if (!p)
    return;
  ts_rt_heap *h = ts_al_current;
  if (ts_al_owns(h, p))
    ts_al_heap_free(h, p);
  else if (h && !h->start)
    ts_al_count_free(h, p);
  else
    free(p);
}

ts_rt_heap *ts_rt_heap_init(void *mem, size_t size) {
  if (!mem) {
    ts_rt_heap *h = calloc(1, sizeof *h);
    if (!h)
      return NULL;
    if (pthread_mutex_init(&h->mu, NULL) != 0) {
      free(h);
      return NULL;
    }
    return h;
  }
  uintptr_t lo = (uintptr_t)mem, hi = lo + size;
  if (hi < lo)
    return NULL;
  uintptr_t at = (lo + TS_AL_BIG - 1) & ~(uintptr_t)(TS_AL_BIG - 1);
  /* The first block's payload lands 64-byte aligned, the common case of a
   * fresh arena's first (large) request. */
  uintptr_t start = ((at + sizeof(ts_rt_heap) + TS_AL_HDR + TS_AL_BIG - 1) & ~(uintptr_t)(TS_AL_BIG - 1)) - TS_AL_HDR;
  if (hi < TS_AL_HDR || start > hi)
    return NULL;
  uintptr_t end = (hi - TS_AL_HDR) & ~(uintptr_t)15;
  if (end < start || end - start < TS_AL_MIN)
    return NULL;
  ts_rt_heap *h = (ts_rt_heap *)at;
  memset(h, 0, sizeof *h);
  if (pthread_mutex_init(&h->mu, NULL) != 0)
    return NULL;
  h->start = (uint8_t *)start;
  h->end = (uint8_t *)end;
  *ts_al_hdr(h->end) = TS_AL_USED; /* the epilogue */
  ts_al_make_free(h, h->start, (size_t)(end - start), TS_AL_PREV_USED);
  return h;
}

ts_rt_heap *ts_rt_heap_use(ts_rt_heap *h) {
  ts_rt_heap *old = ts_al_current;
  ts_al_current = h;
  return old;
}

ts_rt_heap *ts_rt_heap_current(void) { return ts_al_current; }

size_t ts_rt_heap_used(const ts_rt_heap *h) {
  if (!h)
    return 0;
  ts_rt_heap *m = (ts_rt_heap *)h;
  pthread_mutex_lock(&m->mu);
  size_t n = m->used;
  pthread_mutex_unlock(&m->mu);
  return n;
}

size_t ts_rt_heap_peak(const ts_rt_heap *h) {
  if (!h)
    return 0;
  ts_rt_heap *m = (ts_rt_heap *)h;
  pthread_mutex_lock(&m->mu);
  size_t n = m->peak;
  pthread_mutex_unlock(&m->mu);
  return n;
}

void ts_rt_heap_dispose(ts_rt_heap *h) {
  if (!h)
    return;
  if (ts_al_current == h)
    ts_al_current = NULL;
  pthread_mutex_destroy(&h->mu);
  if (h->start)
    return;
  free(h->keys);
  free(h->vals);
  free(h);
}
