/* tests/unit/test_rt_alloc.c: runtime/alloc.c's heaps (alignment, reuse,
 * coalescing, realloc, exhaustion, the counting heap), the heap carried to
 * ts_rt_parallel_for's workers, kernels run over a heap in a static buffer
 * (their tensors inside it, nothing leaked, out of memory reported cleanly)
 * and ctx->plan_ptr in ts_rt_tensor_new. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "test.h"

/* The arena of most tests: 64-byte aligned storage for 4 MiB. */
static _Alignas(64) unsigned char arena[4 << 20];

static bool inside(const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p, lo = (uintptr_t)arena;
  return a >= lo && a + n <= lo + sizeof arena;
}

static void test_heap_basics(void) {
  ts_rt_heap *h = ts_rt_heap_init(arena, sizeof arena);
  if (!TS_CHECK(h != NULL))
    return;
  TS_CHECK(ts_rt_heap_current() == NULL);
  TS_CHECK(ts_rt_heap_use(h) == NULL);
  TS_CHECK(ts_rt_heap_current() == h);
  size_t used0 = ts_rt_heap_used(h);
  TS_CHECK_INTEQ(used0, 0);

  /* Alignment: 16 bytes for small requests, 64 for requests >= 64. */
  void *small[40], *big[40];
  int bad_small = 0, bad_big = 0, outside = 0;
  for (int i = 0; i < 40; i++) {
    small[i] = ts_rt_malloc((size_t)(i % 63) + 1);
    big[i] = ts_rt_malloc(64 + (size_t)i * 37);
    bad_small += small[i] == NULL || ((uintptr_t)small[i] & 15) != 0;
    bad_big += big[i] == NULL || ((uintptr_t)big[i] & 63) != 0;
    outside += !inside(small[i], (size_t)(i % 63) + 1) || !inside(big[i], 64 + (size_t)i * 37);
    if (small[i])
      memset(small[i], 0xa0 + (i & 15), (size_t)(i % 63) + 1);
    if (big[i])
      memset(big[i], i, 64 + (size_t)i * 37);
  }
  TS_CHECK_INTEQ(bad_small, 0);
  TS_CHECK_INTEQ(bad_big, 0);
  TS_CHECK_INTEQ(outside, 0);
  TS_CHECK(ts_rt_heap_used(h) > used0);
  /* Nothing was overwritten by a neighbour. */
  int clobbered = 0;
  for (int i = 0; i < 40; i++) {
    for (size_t k = 0; k < (size_t)(i % 63) + 1; k++)
      clobbered += ((unsigned char *)small[i])[k] != 0xa0 + (i & 15);
    for (size_t k = 0; k < 64 + (size_t)i * 37; k++)
      clobbered += ((unsigned char *)big[i])[k] != (unsigned char)i;
  }
  TS_CHECK_INTEQ(clobbered, 0);
  for (int i = 0; i < 40; i++) {
    ts_rt_free(small[i]);
    ts_rt_free(big[i]);
  }
  TS_CHECK_INTEQ(ts_rt_heap_used(h), used0);
  TS_CHECK(ts_rt_heap_peak(h) > 0);

  /* A zero-byte request is a real block; calloc zeroes (the memory was
   * dirtied above) and refuses an overflowing product. */
  void *z = ts_rt_malloc(0);
  TS_CHECK(z != NULL && inside(z, 1));
  ts_rt_free(z);
  unsigned char *c = ts_rt_calloc(100, 3);
  int nonzero = 0;
  for (int i = 0; c && i < 300; i++)
    nonzero += c[i] != 0;
  TS_CHECK(c != NULL);
  TS_CHECK_INTEQ(nonzero, 0);
  ts_rt_free(c);
  TS_CHECK(ts_rt_calloc(SIZE_MAX / 2, 3) == NULL);
  TS_CHECK(ts_rt_malloc(SIZE_MAX - 8) == NULL);
  ts_rt_free(NULL);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), used0);

  TS_CHECK(ts_rt_heap_use(NULL) == h);
  TS_CHECK(ts_rt_heap_current() == NULL);
  ts_rt_heap_dispose(h);
}

/* Freed neighbours merge: after freeing three adjacent blocks (in an order
 * that merges with the previous, then the next, then both), one request as
 * large as all three fits where they were, in a heap with no other room. */
static void test_heap_coalesce(void) {
  static _Alignas(64) unsigned char mem[8192];
  ts_rt_heap *h = ts_rt_heap_init(mem, sizeof mem);
  if (!TS_CHECK(h != NULL))
    return;
  ts_rt_heap_use(h);
  void *a = ts_rt_malloc(1000), *b = ts_rt_malloc(1000), *c = ts_rt_malloc(1000);
  TS_CHECK(a && b && c);
  /* Fill the rest of the heap with small blocks until it refuses. */
  void *fill[512];
  int nfill = 0;
  while (nfill < 512 && (fill[nfill] = ts_rt_malloc(16)) != NULL)
    nfill++;
  TS_CHECK(nfill > 0 && nfill < 512);
  TS_CHECK(ts_rt_malloc(2000) == NULL);
  ts_rt_free(a);
  TS_CHECK(ts_rt_malloc(2000) == NULL);
  ts_rt_free(c);
  TS_CHECK(ts_rt_malloc(2000) == NULL);
  ts_rt_free(b); /* merges with a before it and c after it */
  void *abc = ts_rt_malloc(3000);
  TS_CHECK(abc != NULL);
  TS_CHECK(abc == a || (uintptr_t)abc - (uintptr_t)a < 64);
  ts_rt_free(abc);
  /* Free in the other orders too: b first, then a (merge forward), then c. */
  a = ts_rt_malloc(1000), b = ts_rt_malloc(1000), c = ts_rt_malloc(1000);
  TS_CHECK(a && b && c);
  ts_rt_free(b);
  ts_rt_free(a);
  ts_rt_free(c);
  abc = ts_rt_malloc(3000);
  TS_CHECK(abc != NULL);
  ts_rt_free(abc);
  for (int i = 0; i < nfill; i++)
    ts_rt_free(fill[i]);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  /* Everything merged back into one block: the largest request fits. */
  size_t n = sizeof mem - 1024;
  void *all = ts_rt_malloc(n);
  TS_CHECK(all != NULL);
  ts_rt_free(all);
  ts_rt_heap_use(NULL);
}

static void test_heap_realloc(void) {
  static _Alignas(64) unsigned char mem[16384];
  ts_rt_heap *h = ts_rt_heap_init(mem, sizeof mem);
  if (!TS_CHECK(h != NULL))
    return;
  ts_rt_heap_use(h);
  unsigned char *p = ts_rt_realloc(NULL, 10);
  TS_CHECK(p != NULL);
  for (int i = 0; p && i < 10; i++)
    p[i] = (unsigned char)i;
  /* Growing past 64 bytes keeps the contents and gets a 64-byte alignment. */
  unsigned char *q = ts_rt_realloc(p, 300);
  TS_CHECK(q != NULL && ((uintptr_t)q & 63) == 0);
  int bad = 0;
  for (int i = 0; q && i < 10; i++)
    bad += q[i] != i;
  TS_CHECK_INTEQ(bad, 0);
  for (int i = 0; q && i < 300; i++)
    q[i] = (unsigned char)(i * 7);
  /* Growing in place into the free space after the block. */
  unsigned char *r = ts_rt_realloc(q, 3000);
  TS_CHECK(r == q);
  bad = 0;
  for (int i = 0; r && i < 300; i++)
    bad += r[i] != (unsigned char)(i * 7);
  TS_CHECK_INTEQ(bad, 0);
  /* Shrinking stays in place and gives the rest back. */
  size_t before = ts_rt_heap_used(h);
  unsigned char *s = ts_rt_realloc(r, 100);
  TS_CHECK(s == r);
  TS_CHECK(ts_rt_heap_used(h) < before);
  /* A block that cannot grow in place moves, with its contents. */
  void *blocker = ts_rt_malloc(64);
  unsigned char *t = ts_rt_realloc(s, 5000);
  TS_CHECK(t != NULL && t != s);
  bad = 0;
  for (int i = 0; t && i < 100; i++)
    bad += t[i] != (unsigned char)(i * 7);
  TS_CHECK_INTEQ(bad, 0);
  /* Too large: NULL, and the block is still there. */
  TS_CHECK(ts_rt_realloc(t, sizeof mem) == NULL);
  TS_CHECK(t && t[99] == (unsigned char)(99 * 7));
  ts_rt_free(t);
  ts_rt_free(blocker);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  ts_rt_heap_use(NULL);
}

/* Random allocations, frees and reallocs against a shadow of what each
 * block must hold; the heap must never hand out overlapping blocks, and
 * must end empty and whole. */
static void test_heap_random(void) {
  static _Alignas(64) unsigned char mem[1 << 18];
  ts_rt_heap *h = ts_rt_heap_init(mem, sizeof mem);
  if (!TS_CHECK(h != NULL))
    return;
  ts_rt_heap_use(h);
  enum { N = 200 };
  unsigned char *blk[N] = {0};
  size_t len[N] = {0};
  uint32_t seed = 12345;
  int bad = 0, misaligned = 0, nulls = 0;
  for (int step = 0; step < 20000; step++) {
    seed = seed * 1103515245u + 12345u;
    int i = (int)((seed >> 8) % N);
    seed = seed * 1103515245u + 12345u;
    size_t n = (seed >> 8) % ((seed >> 30) ? 200 : 6000);
    if (blk[i]) {
      for (size_t k = 0; k < len[i]; k++)
        bad += blk[i][k] != (unsigned char)(i + k);
      if (step % 3 == 0) {
        unsigned char *q = ts_rt_realloc(blk[i], n);
        if (!q) {
          nulls++;
          continue;
        }
        size_t keep = len[i] < n ? len[i] : n;
        for (size_t k = 0; k < keep; k++)
          bad += q[k] != (unsigned char)(i + k);
        blk[i] = q;
      } else {
        ts_rt_free(blk[i]);
        blk[i] = NULL;
        len[i] = 0;
        continue;
      }
    } else {
      blk[i] = ts_rt_malloc(n);
      if (!blk[i]) {
        nulls++;
        continue;
      }
    }
    len[i] = n;
    misaligned += ((uintptr_t)blk[i] & (n >= 64 ? 63 : 15)) != 0;
    for (size_t k = 0; k < n; k++)
      blk[i][k] = (unsigned char)(i + k);
  }
  for (int i = 0; i < N; i++) {
    for (size_t k = 0; blk[i] && k < len[i]; k++)
      bad += blk[i][k] != (unsigned char)(i + k);
    ts_rt_free(blk[i]);
  }
  TS_CHECK_INTEQ(bad, 0);
  TS_CHECK_INTEQ(misaligned, 0);
  TS_CHECK_INTEQ(nulls, 0);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  void *all = ts_rt_malloc(sizeof mem - 1024);
  TS_CHECK(all != NULL);
  ts_rt_free(all);
  ts_rt_heap_use(NULL);
}

/* Exhaustion returns NULL; tiny memory gives no heap. */
static void test_heap_exhaustion(void) {
  static _Alignas(64) unsigned char mem[4096];
  TS_CHECK(ts_rt_heap_init(mem, 16) == NULL);
  TS_CHECK(ts_rt_heap_init(mem, 0) == NULL);
  ts_rt_heap *h = ts_rt_heap_init(mem + 3, sizeof mem - 3); /* unaligned memory is fine */
  if (!TS_CHECK(h != NULL))
    return;
  ts_rt_heap_use(h);
  TS_CHECK(ts_rt_malloc(sizeof mem) == NULL);
  void *ps[400];
  int n = 0;
  while (n < 400 && (ps[n] = ts_rt_malloc(100)) != NULL)
    n++;
  TS_CHECK(n > 10 && n < 400);
  TS_CHECK(ts_rt_malloc(100) == NULL);
  TS_CHECK(ts_rt_calloc(10, 10) == NULL);
  for (int i = 0; i < n; i++)
    ts_rt_free(ps[i]);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  ts_rt_heap_use(NULL);
}

/* A counting heap: libc blocks, peak of block sizes; a block made before
 * the heap became current is freed to libc without being counted. */
static void test_counting_heap(void) {
  void *before = ts_rt_malloc(50); /* libc: no heap current */
  ts_rt_heap *h = ts_rt_heap_init(NULL, 0);
  if (!TS_CHECK(h != NULL))
    return;
  ts_rt_heap_use(h);
  void *a = ts_rt_malloc(100);
  size_t one = ts_rt_heap_used(h);
  TS_CHECK(one >= 100 + 16 && one <= 100 + 64);
  void *b = ts_rt_calloc(10, 10);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 2 * one);
  ts_rt_free(before);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 2 * one);
  ts_rt_free(a);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), one);
  b = ts_rt_realloc(b, 1000);
  TS_CHECK(b != NULL);
  TS_CHECK(ts_rt_heap_used(h) >= 1000 + 16);
  ts_rt_free(b);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  TS_CHECK(ts_rt_heap_peak(h) >= 1000 + 16);
  /* Many blocks (the address table grows) and back to zero. */
  void *ps[3000];
  for (int i = 0; i < 3000; i++)
    ps[i] = ts_rt_malloc((size_t)i);
  size_t peak = ts_rt_heap_used(h);
  for (int i = 0; i < 3000; i += 2)
    ts_rt_free(ps[i]);
  for (int i = 1; i < 3000; i += 2)
    ts_rt_free(ps[i]);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  TS_CHECK_INTEQ(ts_rt_heap_peak(h), peak);
  ts_rt_heap_use(NULL);
  ts_rt_heap_dispose(h);
  TS_CHECK(ts_rt_heap_current() == NULL);
}

/* ---------------------------------------------------------- thread pool */

typedef struct pool_probe {
  ts_rt_heap *want;      /* the heap every chunk must see current */
  atomic_int started;    /* chunks that began */
  int nchunks;           /* chunks to wait for before going on */
  atomic_int wrong_heap; /* chunks that saw another heap */
  atomic_int outside;    /* allocations that missed the arena (heap jobs) */
  atomic_int inside_n;   /* allocations in the arena (jobs without a heap) */
  atomic_int nulls;
  atomic_ullong threads[8];
  atomic_int nthreads;
} pool_probe;

static void probe_chunk(void *arg, int64_t begin, int64_t end) {
  pool_probe *p = arg;
  (void)begin;
  (void)end;
  /* Hold this thread here until every chunk has started (bounded, in case
   * the pool has fewer threads than asked), so that each chunk runs on its
   * own thread and the workers take part. */
  atomic_fetch_add(&p->started, 1);
  for (long spin = 0; spin < 5000000L && atomic_load(&p->started) < p->nchunks; spin++)
    sched_yield();
  if (ts_rt_heap_current() != p->want)
    atomic_fetch_add(&p->wrong_heap, 1);
  void *a = ts_rt_malloc(200), *b = ts_rt_calloc(3, 100);
  if (!a || !b)
    atomic_fetch_add(&p->nulls, 1);
  a = ts_rt_realloc(a, 2000);
  if (!a)
    atomic_fetch_add(&p->nulls, 1);
  if (p->want) {
    atomic_fetch_add(&p->outside, !inside(a, 2000) + !inside(b, 300));
  } else {
    atomic_fetch_add(&p->inside_n, inside(a, 2000) + inside(b, 300));
  }
  ts_rt_free(a);
  ts_rt_free(b);
  /* Which threads ran chunks (pthread_t is not an integer everywhere: the
   * address of a thread-local stands for the thread). */
  static _Thread_local char me;
  unsigned long long id = (unsigned long long)(uintptr_t)&me;
  int n = atomic_load(&p->nthreads);
  bool seen = false;
  for (int i = 0; i < n && i < 8; i++)
    seen |= atomic_load(&p->threads[i]) == id;
  if (!seen) {
    int k = atomic_fetch_add(&p->nthreads, 1);
    if (k < 8)
      atomic_store(&p->threads[k], id);
  }
}

/* ts_rt_parallel_for's workers allocate from the caller's heap during its
 * job, and from their own (none) again after it. */
static void test_parallel_heap(void) {
  ts_rt_ctx c;
  ts_rt_ctx_init(&c, 4);
  ts_rt_heap *h = ts_rt_heap_init(arena, sizeof arena);
  if (!TS_CHECK(h != NULL))
    return;
  for (int round = 0; round < 3; round++) {
    bool with_heap = round != 1;
    ts_rt_heap_use(with_heap ? h : NULL);
    pool_probe p = {.want = with_heap ? h : NULL, .nchunks = 4};
    ts_rt_parallel_for(&c, 4, 1, probe_chunk, &p);
    TS_CHECK_INTEQ(atomic_load(&p.started), 4);
    TS_CHECK(atomic_load(&p.nthreads) >= 2); /* the pool's workers ran chunks */
    TS_CHECK_INTEQ(atomic_load(&p.wrong_heap), 0);
    TS_CHECK_INTEQ(atomic_load(&p.outside), 0);
    TS_CHECK_INTEQ(atomic_load(&p.inside_n), 0);
    TS_CHECK_INTEQ(atomic_load(&p.nulls), 0);
    TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
    ts_rt_heap_use(NULL);
  }
  TS_CHECK(ts_rt_heap_peak(h) > 0);
  ts_rt_ctx_free(&c);
}

/* -------------------------------------------------------------- kernels */

static ts_rt_ctx C;

/* A contiguous float tensor of the given shape, every element v. */
static ts_rt_tensor *filled(int32_t nd, const int64_t *sizes, float v) {
  ts_rt_tensor *t = ts_rt_tensor_new(&C, TS_DT_FLOAT32, nd, sizes, false);
  if (!t)
    return NULL;
  float *d = ts_rt_tensor_data(t);
  for (int64_t i = 0; i < ts_rt_tensor_numel(t); i++)
    d[i] = v;
  return t;
}

static ts_iv int_list(int64_t a, int64_t b) {
  ts_rt_list *l = ts_rt_list_new(&C, ts_type_leaf(TS_TY_INT), 2);
  if (!l)
    return ts_iv_none();
  ts_rt_list_append(&C, l, ts_iv_int(a));
  ts_rt_list_append(&C, l, ts_iv_int(b));
  return (ts_iv){.u.l = l, .tag = TS_IV_LIST};
}

/* Counts the parts of tensor t (header, storage, data) outside the arena. */
static int tensor_outside(const ts_rt_tensor *t) {
  return !inside(t, sizeof *t) + !inside(t->storage, sizeof *t->storage) +
         !inside(t->storage->data, t->storage->nbytes ? t->storage->nbytes : 1);
}

/* The weights of a little network, made while no heap is current, as a
 * model's are at load time. */
typedef struct net {
  ts_rt_tensor *w, *b;
} net;

/* relu(conv2d(x, w, b, padding=1)), chunked in two along the channels and
 * put back together with cat: a kernel, a pointwise op and two list ops.
 * *out is the result (NULL after an error, which is in C). `outside`
 * counts the run's objects that missed the arena (when not NULL). */
static bool net_run(const net *n, ts_rt_tensor *x, ts_rt_tensor **out, int *outside) {
  *out = NULL;
  ts_rt_clear_error(&C);
  ts_iv conv_in[7] = {ts_iv_tensor(x), ts_iv_tensor(n->w), ts_iv_tensor(n->b), int_list(1, 1), int_list(1, 1),
                      int_list(1, 1), ts_iv_int(1)};
  ts_iv y = ts_iv_none(), z = ts_iv_none(), parts = ts_iv_none(), w = ts_iv_none();
  bool ok = conv_in[3].tag == TS_IV_LIST && conv_in[4].tag == TS_IV_LIST && conv_in[5].tag == TS_IV_LIST;
  if (!ok)
    ts_rt_oom(&C);
  ts_rt_call call = {conv_in, 7, &y, 1, NULL};
  ok = ok && ts_rt_kernel_by_name("aten::conv2d")(&C, &call);
  for (int i = 3; i < 6; i++)
    ts_iv_release(conv_in[i]);
  if (ok) {
    ts_iv relu_in[1] = {y};
    call = (ts_rt_call){relu_in, 1, &z, 1, NULL};
    ok = ts_rt_kernel_by_name("aten::relu")(&C, &call);
  }
  if (ok) {
    ts_iv chunk_in[3] = {z, ts_iv_int(2), ts_iv_int(1)};
    call = (ts_rt_call){chunk_in, 3, &parts, 1, NULL};
    ok = ts_rt_kernel_by_name("aten::chunk")(&C, &call);
  }
  if (ok) {
    ts_iv cat_in[2] = {parts, ts_iv_int(1)};
    call = (ts_rt_call){cat_in, 2, &w, 1, NULL};
    ok = ts_rt_kernel_by_name("aten::cat")(&C, &call);
  }
  if (ok && outside) {
    *outside += tensor_outside(y.u.t) + tensor_outside(z.u.t) + tensor_outside(w.u.t);
    *outside += !inside(parts.u.l, sizeof *parts.u.l) + !inside(parts.u.l->items, 2 * sizeof(ts_iv));
    for (uint32_t i = 0; i < parts.u.l->n; i++)
      *outside += tensor_outside(parts.u.l->items[i].u.t);
  }
  ts_iv_release(y);
  ts_iv_release(z);
  ts_iv_release(parts);
  if (ok)
    *out = w.u.t;
  return ok;
}

/* torch.relu(F.conv2d(torch.ones(1,3,16,16), torch.ones(8,3,3,3), torch.full((8,), -20.), padding=1)):
 * 27 - 20 = 7 where the 3x3 window lies inside the image, 0 on the border
 * (at most 18 - 20 there). */
static int net_wrong(const ts_rt_tensor *t) {
  if (t->ndim != 4 || t->sizes[0] != 1 || t->sizes[1] != 8 || t->sizes[2] != 16 || t->sizes[3] != 16 ||
      !ts_rt_tensor_is_contiguous(t))
    return 1;
  const float *d = ts_rt_tensor_data(t);
  int bad = 0;
  for (int c = 0; c < 8; c++)
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 16; j++) {
        bool border = i == 0 || j == 0 || i == 15 || j == 15;
        bad += d[(c * 16 + i) * 16 + j] != (border ? 0.0f : 7.0f);
      }
  return bad;
}

static void test_kernels_in_heap(void) {
  ts_rt_ctx_init(&C, 2);
  ts_diag d = {0};
  if (!TS_CHECK(ts_rt_kernels_init(&d)))
    return;
  ts_diag_free(&d);
  net n = {filled(4, (const int64_t[]){8, 3, 3, 3}, 1.0f), filled(1, (const int64_t[]){8}, -20.0f)};
  if (!TS_CHECK(n.w && n.b))
    return;

  /* The counting heap measures the run (the input included; the weights
   * were made before it, as a model's are). */
  ts_rt_heap *count = ts_rt_heap_init(NULL, 0);
  ts_rt_heap_use(count);
  ts_rt_tensor *x = filled(4, (const int64_t[]){1, 3, 16, 16}, 1.0f);
  ts_rt_tensor *out = NULL;
  TS_CHECK(x && net_run(&n, x, &out, NULL));
  TS_CHECK_INTEQ(out ? net_wrong(out) : 1, 0);
  ts_rt_tensor_release(out);
  ts_rt_tensor_release(x);
  TS_CHECK_INTEQ(ts_rt_heap_used(count), 0);
  size_t counted = ts_rt_heap_peak(count);
  TS_CHECK(counted > 3 * 16 * 16 * 4 + 8 * 16 * 16 * 4);
  ts_rt_heap_use(NULL);
  ts_rt_heap_dispose(count);

  /* A heap over the arena: everything the run makes lies inside it, and
   * it is empty again after. */
  ts_rt_heap *h = ts_rt_heap_init(arena, sizeof arena);
  ts_rt_heap_use(h);
  x = filled(4, (const int64_t[]){1, 3, 16, 16}, 1.0f);
  int outside = 0;
  TS_CHECK(x && inside(x->storage->data, 3 * 16 * 16 * 4));
  TS_CHECK(x && net_run(&n, x, &out, &outside));
  TS_CHECK_INTEQ(outside, 0);
  TS_CHECK_INTEQ(out ? net_wrong(out) : 1, 0);
  /* A tensor of the C library released while the heap is current. */
  ts_rt_heap_use(NULL);
  ts_rt_tensor *libc_t = filled(1, (const int64_t[]){10}, 0.0f);
  ts_rt_heap_use(h);
  ts_rt_tensor_release(libc_t);
  ts_rt_tensor_release(out);
  ts_rt_tensor_release(x);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  size_t peak = ts_rt_heap_peak(h);
  /* Both count the same blocks, but a heap over memory may keep a split's
   * remainder under 32 bytes in the block. */
  TS_CHECK(peak >= counted && peak <= counted + counted / 16);
  ts_rt_heap_use(NULL);

  /* Memory of the counted peak (with the heap's own header and room for
   * 64-byte alignment gaps) runs it; every smaller heap fails cleanly with
   * an out-of-memory error and leaves nothing behind. */
  size_t room = counted + 4096;
  int ran = 0, failed = 0, bad_fail = 0, leaked = 0, wrong = 0;
  for (size_t size = 256; size <= room; size += size < 8192 ? 128 : 512) {
    ts_rt_heap *t = ts_rt_heap_init(arena, size);
    if (!t)
      continue;
    ts_rt_heap_use(t);
    ts_rt_clear_error(&C);
    ts_rt_tensor *xi = filled(4, (const int64_t[]){1, 3, 16, 16}, 1.0f);
    bool ok = xi && net_run(&n, xi, &out, NULL);
    if (ok) {
      ran++;
      wrong += net_wrong(out) != 0;
      ts_rt_tensor_release(out);
    } else {
      failed++;
      bad_fail += !C.failed || !C.err.data || !strstr(C.err.data, "memory");
    }
    ts_rt_tensor_release(xi);
    leaked += ts_rt_heap_used(t) != 0;
    ts_rt_heap_use(NULL);
  }
  TS_CHECK(failed > 0);
  TS_CHECK(ran > 0);
  TS_CHECK_INTEQ(bad_fail, 0);
  TS_CHECK_INTEQ(leaked, 0);
  TS_CHECK_INTEQ(wrong, 0);
  ts_rt_heap *fits = ts_rt_heap_init(arena, room);
  ts_rt_heap_use(fits);
  x = filled(4, (const int64_t[]){1, 3, 16, 16}, 1.0f);
  TS_CHECK(x && net_run(&n, x, &out, NULL));
  ts_rt_tensor_release(out);
  ts_rt_tensor_release(x);
  ts_rt_heap_use(NULL);

  ts_rt_tensor_release(n.w);
  ts_rt_tensor_release(n.b);
  ts_rt_clear_error(&C);
}

/* ctx->plan_ptr: the tensor of exactly plan_nbytes takes it (zeroed when
 * asked), once; other sizes leave it. */
static void test_plan(void) {
  static _Alignas(64) unsigned char plan[1024];
  memset(plan, 0xff, sizeof plan);
  ts_rt_heap *h = ts_rt_heap_init(arena, sizeof arena);
  ts_rt_heap_use(h);
  C.plan_ptr = plan;
  C.plan_nbytes = 256 * sizeof(float);
  ts_rt_tensor *other = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, (const int64_t[]){255}, false);
  TS_CHECK(other && other->storage->data != plan && inside(other->storage->data, 255 * 4));
  TS_CHECK(C.plan_ptr == plan && C.plan_nbytes == 1024);
  /* Same size in bytes, other dtype and shape: it is the size that counts. */
  ts_rt_tensor *t = ts_rt_tensor_new(&C, TS_DT_INT64, 2, (const int64_t[]){16, 8}, true);
  TS_CHECK(t && t->storage->data == plan);
  TS_CHECK(C.plan_ptr == NULL && C.plan_nbytes == 0);
  int nonzero = 0;
  for (size_t i = 0; i < sizeof plan; i++)
    nonzero += plan[i] != 0;
  TS_CHECK_INTEQ(nonzero, 0);
  TS_CHECK(t && inside(t, sizeof *t) && inside(t->storage, sizeof *t->storage));
  /* Taken once: the next tensor of that size has its own storage. */
  ts_rt_tensor *again = ts_rt_tensor_new(&C, TS_DT_FLOAT32, 1, (const int64_t[]){256}, false);
  TS_CHECK(again && again->storage->data != plan);
  /* A kernel's output lands in the plan (relu of 256 floats). */
  C.plan_ptr = plan;
  C.plan_nbytes = sizeof plan;
  float *a = ts_rt_tensor_data(again);
  for (int i = 0; i < 256; i++)
    a[i] = (float)(i - 100);
  ts_iv in[1] = {ts_iv_tensor(again)}, res = ts_iv_none();
  ts_rt_call call = {in, 1, &res, 1, NULL};
  TS_CHECK(ts_rt_kernel_by_name("aten::relu")(&C, &call));
  TS_CHECK(res.tag == TS_IV_TENSOR && res.u.t->storage->data == plan);
  const float *r = (const float *)(void *)plan;
  TS_CHECK(r[0] == 0.0f && r[100] == 0.0f && r[255] == 155.0f);
  ts_iv_release(res);
  ts_rt_tensor_release(t);
  ts_rt_tensor_release(other);
  ts_rt_tensor_release(again);
  TS_CHECK_INTEQ(ts_rt_heap_used(h), 0);
  TS_CHECK(r[255] == 155.0f); /* the storages left the plan's bytes alone */
  ts_rt_heap_use(NULL);
  C.plan_ptr = NULL;
  C.plan_nbytes = 0;
  ts_rt_ctx_free(&C);
}

int main(void) {
  test_heap_basics();
  test_heap_coalesce();
  test_heap_realloc();
  test_heap_random();
  test_heap_exhaustion();
  test_counting_heap();
  test_parallel_heap();
  test_kernels_in_heap();
  test_plan();
  return ts_test_finish();
}
