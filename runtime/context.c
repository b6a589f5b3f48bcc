/* runtime/context.c: a run's state (the first error, the thread budget) and
 * ts_rt_parallel_for over a small persistent pthread pool, which the runs
 * of a compiled model share (one job at a time; a second caller runs its
 * range itself). The ctx's own buffers (the pool, error and print text)
 * come from the C library: they outlive runs; a job allocates nothing and
 * carries the caller's heap (runtime/alloc.c) to the workers. */
#include <cblas.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"

uint64_t ts_rt_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A job the pool runs: [0, n) cut into nchunks nearly equal chunks. */
typedef struct ts_ctx_job {
  ts_rt_range_fn fn;
  void *arg;
  int64_t n;
  int64_t nchunks;
  atomic_llong next; /* the next chunk to take */
  ts_rt_heap *heap;  /* the caller's heap, current in the workers for the job */
} ts_ctx_job;

struct ts_rt_pool {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a new job, or shutdown */
  pthread_cond_t done; /* the last worker left the job */
  pthread_t *threads;
  int nthreads;      /* workers started */
  int want;          /* workers asked for */
  /* gen and busy change under mu; they are atomic so that a worker waiting
   * for a job and a caller waiting for its workers can watch them for a
   * while without the lock before they sleep (ts_ctx_spin_*) */
  atomic_uint_fast64_t gen; /* bumped for each job */
  atomic_int busy;          /* workers still inside the current job */
  bool stop;
  ts_ctx_job *job;
  /* Taken by the caller whose job the pool runs: the runs of one compiled
   * model share its pool, and a caller that finds it taken runs its range
   * on its own thread rather than wait. */
  atomic_bool taken;
};

/* Set while a thread runs chunks, so that nested parallel_for calls run
 * serially instead of waiting on a pool that is busy with their parent. */
static TS_TLS bool ts_ctx_in_parallel;

/* How long a worker that finished a job, and a caller whose workers have
 * not, watch for the change they wait for before they sleep on a condition
 * variable: a model's kernels start parallel loops back to back, and
 * waking a sleeping thread took 10-30 us per loop, about what the smaller
 * convolutions of resnet18 take in all at 2 threads. */
#define TS_CTX_SPIN_NS 50000

/* Whether a worker's job has come (pool->gen moved on from *seen) or the
 * caller's workers are done (pool->busy is 0). */
static bool ts_ctx_gen_moved(const struct ts_rt_pool *p, uint64_t seen) {
  return atomic_load_explicit(&((struct ts_rt_pool *)p)->gen, memory_order_acquire) != seen;
}
static bool ts_ctx_all_done(const struct ts_rt_pool *p, uint64_t unused) {
  (void)unused;
  return atomic_load_explicit(&((struct ts_rt_pool *)p)->busy, memory_order_acquire) == 0;
}

/* Watches for ready(p, arg) for up to TS_CTX_SPIN_NS; whether it came. */
static bool ts_ctx_spin(bool (*ready)(const struct ts_rt_pool *, uint64_t), const struct ts_rt_pool *p,
                        uint64_t arg) {
  uint64_t t0 = 0;
  for (unsigned i = 1;; i++) {
    if (ready(p, arg))
      return true;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0) {
      uint64_t t = ts_rt_now_ns();
      if (!t0)
        t0 = t;
      else if (t - t0 > TS_CTX_SPIN_NS)
        return false;
    }
  }
}

/* Takes chunks of `job` until none are left. */
static void ts_ctx_run_chunks(ts_ctx_job *job) {
  for (;;) {
    long long k = atomic_fetch_add(&job->next, 1);
    if (k >= job->nchunks)
      return;
    /* The first n % nchunks chunks are one longer. */
    int64_t q = job->n / job->nchunks, r = job->n % job->nchunks;
    int64_t b = k * q + (k < r ? k : r);
    int64_t e = b + q + (k < r ? 1 : 0);
    if (b < e)
      job->fn(job->arg, b, e);
  }
}

static void *ts_ctx_worker(void *p) {
  ts_rt_pool *pool = p;
  uint64_t seen = 0;
  ts_ctx_in_parallel = true;
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    if (!pool->stop && atomic_load(&pool->gen) == seen) {
      /* the next job often comes within microseconds: watch before sleeping */
      pthread_mutex_unlock(&pool->mu);
      ts_ctx_spin(ts_ctx_gen_moved, pool, seen);
      pthread_mutex_lock(&pool->mu);
    }
    while (!pool->stop && atomic_load(&pool->gen) == seen)
      pthread_cond_wait(&pool->work, &pool->mu);
    if (pool->stop)
      break;
    seen = atomic_load(&pool->gen);
    ts_ctx_job *job = pool->job;
    pthread_mutex_unlock(&pool->mu);
    ts_rt_heap *own = ts_rt_heap_use(job->heap);
    ts_ctx_run_chunks(job);
    ts_rt_heap_use(own);
    pthread_mutex_lock(&pool->mu);
    if (atomic_fetch_sub(&pool->busy, 1) == 1)
      pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

static void ts_ctx_pool_free(ts_rt_pool *pool) {
  if (!pool)
    return;
  pthread_mutex_lock(&pool->mu);
  pool->stop = true;
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mu);
  for (int i = 0; i < pool->nthreads; i++)
    pthread_join(pool->threads[i], NULL);
  pthread_cond_destroy(&pool->work);
  pthread_cond_destroy(&pool->done);
  pthread_mutex_destroy(&pool->mu);
  free(pool->threads);
  free(pool);
}

/* A pool of `nworkers` threads; NULL if not even one could be started (the
 * caller then runs serially). */
static ts_rt_pool *ts_ctx_pool_new(int nworkers) {
  ts_rt_pool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return NULL;
  pool->threads = calloc((size_t)nworkers, sizeof *pool->threads);
  if (!pool->threads) {
    free(pool);
    return NULL;
  }
  pool->want = nworkers;
  atomic_init(&pool->taken, false);
  atomic_init(&pool->gen, 0);
  atomic_init(&pool->busy, 0);
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->work, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (int i = 0; i < nworkers; i++) {
    if (pthread_create(&pool->threads[i], NULL, ts_ctx_worker, pool) != 0)
      break;
    pool->nthreads++;
  }
  if (pool->nthreads == 0) {
    ts_ctx_pool_free(pool);
    return NULL;
  }
  return pool;
}

void ts_rt_ctx_init(ts_rt_ctx *c, int nthreads) {
  memset(c, 0, sizeof *c);
  if (nthreads <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = n > 0 ? (n > 1024 ? 1024 : (int)n) : 1;
  }
  c->nthreads = nthreads;
  c->plan_ptr = NULL;
  c->plan_nbytes = 0;
  openblas_set_num_threads(nthreads);
}

void ts_rt_ctx_free(ts_rt_ctx *c) {
  if (!c->pool_borrowed)
    ts_ctx_pool_free(c->pool);
  c->pool = NULL;
  ts_buf_free(&c->err);
  ts_buf_free(&c->out);
  c->failed = false;
  c->exc_class = NULL;
}

bool ts_rt_fail(ts_rt_ctx *c, const char *fmt, ...) {
  if (!c || c->failed)
    return false;
  c->failed = true;
  c->err.len = 0;
  if (c->err.data)
    c->err.data[0] = 0;
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&c->err, fmt, ap);
  va_end(ap);
  while (c->err.len && c->err.data[c->err.len - 1] == '\n')
    c->err.data[--c->err.len] = 0;
  return false;
}

void ts_rt_clear_error(ts_rt_ctx *c) {
  c->gen.seeded = false;
  c->gen.have_normal = false;
  c->failed = false;
  c->exc_class = NULL;
  c->err.len = 0;
  c->err.failed = false;
  if (c->err.data)
    c->err.data[0] = 0;
}

bool ts_rt_oom(ts_rt_ctx *c) { return ts_rt_fail(c, "out of memory"); }

void ts_rt_warn(ts_rt_ctx *c, const char *fmt, ...) {
  size_t len = c->out.len;
  bool failed = c->out.failed;
  ts_buf_puts(&c->out, "UserWarning: ");
  va_list ap;
  va_start(ap, fmt);
  ts_buf_vprintf(&c->out, fmt, ap);
  va_end(ap);
  ts_buf_putc(&c->out, '\n');
  if (c->out.failed && !failed && c->out.fixed) {
    c->out.len = len;
    if (c->out.cap)
      c->out.data[len] = 0;
    c->out.failed = false;
  }
}

void ts_rt_parallel_for(ts_rt_ctx *c, int64_t n, int64_t grain, ts_rt_range_fn fn, void *arg) {
  if (n <= 0)
    return;
  if (grain < 1)
    grain = 1;
  int nthreads = c ? c->nthreads : 1;
  if (nthreads <= 1 || n / 2 < grain || ts_ctx_in_parallel) {
    fn(arg, 0, n);
    return;
  }
  /* The thread count may have been changed since the pool was made. */
  if (!c->pool_borrowed && c->pool && c->pool->want != nthreads - 1) {
    ts_ctx_pool_free(c->pool);
    c->pool = NULL;
  }
  if (!c->pool && !c->pool_borrowed)
    c->pool = ts_ctx_pool_new(nthreads - 1);
  ts_rt_pool *pool = c->pool;
  if (!pool || atomic_exchange_explicit(&pool->taken, true, memory_order_acquire)) {
    fn(arg, 0, n);
    return;
  }
  int64_t nchunks = n / grain;
  int64_t maxchunks = (int64_t)pool->nthreads + 1;
  if (nchunks > maxchunks)
    nchunks = maxchunks;
  ts_ctx_job job = {.fn = fn, .arg = arg, .n = n, .nchunks = nchunks, .heap = ts_rt_heap_current()};
  atomic_init(&job.next, 0);
  pthread_mutex_lock(&pool->mu);
  pool->job = &job;
  atomic_store(&pool->busy, pool->nthreads);
  atomic_fetch_add(&pool->gen, 1);
  pthread_cond_broadcast(&pool->work);
  pthread_mutex_unlock(&pool->mu);
  ts_ctx_in_parallel = true;
  ts_ctx_run_chunks(&job);
  ts_ctx_in_parallel = false;
  /* Every worker must leave the job before it goes out of scope. */
  ts_ctx_spin(ts_ctx_all_done, pool, 0);
  pthread_mutex_lock(&pool->mu);
  while (atomic_load(&pool->busy) > 0)
    pthread_cond_wait(&pool->done, &pool->mu);
  pool->job = NULL;
  pthread_mutex_unlock(&pool->mu);
  atomic_store_explicit(&pool->taken, false, memory_order_release);
}
