/* tests/stress/stress_threads.c: one compiled model run from several
 * threads at once (include/tsaot.h: NAME_run and NAME_run_static are
 * reentrant).
 *
 *   stress_threads TSAOT FIXTURES WORKDIR [ITERATIONS [KERNEL_THREADS]]
 *
 * Each case compiles a fixture with the build's tsaot, runs it once on this
 * thread for the reference outputs, then from 4 threads at once, each
 * alternating NAME_run and NAME_run_static (its own arena and output
 * tensors), and checks every output bit for bit against the reference, and
 * that last_bailout and last_error are the calling thread's. The cases: the
 * LSTM cell (fusion groups and a GEMM, specialised), the MLP without
 * examples (groups run by the interpreter's one-node runner), and the MLP
 * specialised to its example but run on one row of it (every run bails out
 * to the fallback graph in the interpreter), and loops (lists, dicts and
 * control flow in compiled code). Before them, the kernels'
 * worker pool alone, shared by 4 callers. Exit status 0 when every run of
 * every case matched. */
#include "so_model.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NTHREADS = 4, MAXOUT = 16 };

typedef struct stress_case {
  const char *name, *fixture;
  bool example; /* specialised to the fixture's inputs */
  bool one_row; /* input 0 cut to its first row: off the specialisation */
} stress_case;

typedef struct stress {
  so_model *m;
  const DLTensor *in;
  int nin, nout;
  DLManagedTensor *ref[MAXOUT];
  size_t ref_bytes[MAXOUT];
  int bailout;
  size_t extra_arena;
  int iters;
  atomic_int failures;
} stress;

static size_t dl_bytes(const DLTensor *t) {
  size_t n = (size_t)(t->dtype.bits / 8);
  for (int d = 0; d < t->ndim; d++)
    n *= (size_t)t->shape[d];
  return n;
}

/* Reports a failed run once per thread (the first), counts all. */
static void stress_fail(stress *s, int *reported, const char *what, int it, const char *why) {
  atomic_fetch_add(&s->failures, 1);
  if (!(*reported)++)
    fprintf(stderr, "%s: iteration %d: %s%s%s\n", s->m->name, it, what, why ? ": " : "", why ? why : "");
}

/* What every run of a thread must see: the reference's outputs and this
 * thread's own bailout and error. */
static bool stress_same(stress *s, const DLTensor *got, int i) {
  const DLTensor *want = &s->ref[i]->dl_tensor;
  if (got->ndim != want->ndim || memcmp(&got->dtype, &want->dtype, sizeof got->dtype) != 0)
    return false;
  for (int d = 0; d < got->ndim; d++)
    if (got->shape[d] != want->shape[d])
      return false;
  return memcmp(got->data, want->data, s->ref_bytes[i]) == 0;
}

static void *stress_thread(void *arg) {
  stress *s = arg;
  so_model *m = s->m;
  int reported = 0;
  /* shape-generic code (no examples) has no measured heap: room for one */
  size_t asize = m->f.arena_size() + s->extra_arena;
  uint8_t *arena = aligned_alloc(TSAOT_ARENA_ALIGN, (asize + 63) & ~(size_t)63);
  DLTensor outs[MAXOUT];
  void *bufs[MAXOUT] = {0};
  for (int i = 0; i < s->nout; i++) {
    outs[i] = s->ref[i]->dl_tensor;
    outs[i].strides = NULL;
    outs[i].byte_offset = 0;
    bufs[i] = malloc(s->ref_bytes[i] + 1);
    outs[i].data = bufs[i];
  }
  for (int it = 0; it < s->iters && arena; it++) {
    bool ok = true;
    if (it % 2 == 0) {
      DLManagedTensor *got[MAXOUT];
      int n = 0;
      int rc = m->f.run(s->in, s->nin, got, MAXOUT, &n);
      if (rc != TSAOT_OK) {
        stress_fail(s, &reported, "run failed", it, m->f.last_error());
        continue;
      }
      ok = n == s->nout;
      for (int i = 0; i < n; i++) {
        ok = ok && stress_same(s, &got[i]->dl_tensor, i);
        got[i]->deleter(got[i]);
      }
    } else {
      for (int i = 0; i < s->nout; i++)
        memset(bufs[i], 0xa5, s->ref_bytes[i] + 1);
      int rc = m->f.run_static(s->in, s->nin, outs, s->nout, arena, asize);
      if (rc != TSAOT_OK) {
        stress_fail(s, &reported, "run_static failed", it, m->f.last_error());
        continue;
      }
      for (int i = 0; i < s->nout; i++)
        ok = ok && stress_same(s, &outs[i], i);
    }
    if (!ok)
      stress_fail(s, &reported, it % 2 ? "run_static: outputs differ" : "run: outputs differ", it, NULL);
    /* a bailout's reason stays the calling thread's, whatever others do */
    if (m->f.last_bailout() != s->bailout || (s->bailout != 0) != (m->f.last_error()[0] != 0))
      stress_fail(s, &reported, "last_bailout/last_error are not this thread's", it, m->f.last_error());
  }
  if (!arena)
    stress_fail(s, &reported, "no memory for the arena", 0, NULL);
  free(arena);
  for (int i = 0; i < s->nout; i++)
    free(bufs[i]);
  return NULL;
}

/* One case; false when any run failed or differed. */
static bool stress_run_case(const stress_case *c, const char *tsaot, const char *fixtures, const char *work, int iters,
                            int kthreads) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", fixtures, c->fixture);
  so_model m;
  if (!so_model_open(&m, tsaot, dir, work, c->name, c->example, NULL)) {
    so_model_close(&m);
    return false;
  }
  stress s = {.m = &m, .in = m.in, .nin = m.nin, .iters = iters, .extra_arena = c->example ? 0 : 1 << 20};
  atomic_init(&s.failures, 0);
  DLTensor in[16];
  int64_t row_shape[TS_RT_MAX_DIMS];
  memcpy(in, m.in, sizeof in);
  if (c->one_row) {
    memcpy(row_shape, in[0].shape, (size_t)in[0].ndim * sizeof *row_shape);
    row_shape[0] = 1;
    in[0].shape = row_shape;
    s.in = in;
  }
  m.f.set_threads(kthreads);
  bool ok = false;
  int rc = m.f.run(s.in, s.nin, s.ref, MAXOUT, &s.nout);
  if (rc != TSAOT_OK) {
    fprintf(stderr, "%s: the reference run failed: %s\n", c->name, m.f.last_error());
    goto out;
  }
  s.bailout = m.f.last_bailout();
  if (s.bailout != c->one_row) {
    fprintf(stderr, "%s: the reference run has bailout %d\n", c->name, s.bailout);
    goto out;
  }
  for (int i = 0; i < s.nout; i++)
    s.ref_bytes[i] = dl_bytes(&s.ref[i]->dl_tensor);
  pthread_t th[NTHREADS];
  int started = 0;
  for (; started < NTHREADS; started++)
    if (pthread_create(&th[started], NULL, stress_thread, &s) != 0)
      break;
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  ok = started == NTHREADS && atomic_load(&s.failures) == 0;
  printf("%s: %d threads x %d runs (run and run_static), kernel threads %d: %d failures\n", c->name, started, iters,
         kthreads, atomic_load(&s.failures));
out:
  for (int i = 0; i < s.nout; i++)
    s.ref[i]->deleter(s.ref[i]);
  so_model_close(&m);
  return ok;
}

/* The worker pool under callers on several threads (what the runs of one
 * model do with kernel threads > 1): each caller borrows the owner's pool,
 * and every index of every caller's range must run exactly once, whether
 * its job got the pool or ran on its own thread. */
enum { POOL_N = 4096 };

typedef struct pool_job {
  ts_rt_ctx ctx; /* borrows the owner's pool */
  uint8_t hits[POOL_N];
} pool_job;

static void pool_range(void *arg, int64_t b, int64_t e) {
  pool_job *j = arg;
  for (int64_t i = b; i < e; i++)
    j->hits[i]++;
}

typedef struct pool_caller {
  ts_rt_ctx *owner;
  int iters, bad;
} pool_caller;

static void *pool_thread(void *arg) {
  pool_caller *pc = arg;
  pool_job *j = calloc(1, sizeof *j);
  if (!j) {
    pc->bad = 1;
    return NULL;
  }
  j->ctx.nthreads = pc->owner->nthreads;
  j->ctx.pool = pc->owner->pool;
  j->ctx.pool_borrowed = true;
  for (int it = 0; it < pc->iters; it++) {
    memset(j->hits, 0, sizeof j->hits);
    ts_rt_parallel_for(&j->ctx, POOL_N, 64, pool_range, j);
    for (int i = 0; i < POOL_N; i++)
      pc->bad += j->hits[i] != 1;
  }
  ts_rt_ctx_free(&j->ctx); /* frees nothing of the owner's */
  free(j);
  return NULL;
}

static bool stress_pool(int iters) {
  ts_rt_ctx owner;
  ts_rt_ctx_init(&owner, 3);
  pool_job first = {0};
  ts_rt_parallel_for(&owner, POOL_N, 64, pool_range, &first); /* makes the pool */
  bool ok = owner.pool != NULL;
  pool_caller pc[NTHREADS];
  pthread_t th[NTHREADS];
  int started = 0;
  for (; started < NTHREADS; started++) {
    pc[started] = (pool_caller){.owner = &owner, .iters = iters};
    if (pthread_create(&th[started], NULL, pool_thread, &pc[started]) != 0)
      break;
  }
  int bad = 0;
  for (int i = 0; i < started; i++) {
    pthread_join(th[i], NULL);
    bad += pc[i].bad;
  }
  ts_rt_ctx_free(&owner);
  ok = ok && started == NTHREADS && bad == 0;
  printf("pool: %d callers x %d parallel_for of %d: %d indices not run exactly once%s\n", started, iters, POOL_N, bad,
         ok ? "" : " (FAILED)");
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: stress_threads TSAOT FIXTURES WORKDIR [ITERATIONS [KERNEL_THREADS]]\n");
    return 2;
  }
  int iters = argc > 4 ? atoi(argv[4]) : 300;
  int kthreads = argc > 5 ? atoi(argv[5]) : 2;
  static const stress_case cases[] = {
      {"lstm", "lstm_cell", true, false},
      {"mlp_generic", "small_mlp", false, false},
      {"mlp_bailout", "small_mlp", true, true},
      {"loops", "loops", true, false},
  };
  bool ok = stress_pool(iters);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ok = stress_run_case(&cases[i], argv[1], argv[2], argv[3], iters, kthreads) && ok;
  printf("stress_threads: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
