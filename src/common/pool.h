/* A pool of worker threads for data-parallel work (morsel-driven query execution, and
 * any other room that splits a job into pieces the workers claim themselves).
 *
 * The pool runs one function on the threads at once, the caller's included (worker 0),
 * and returns when all that joined have returned. The function must hand out its own
 * pieces, typically with an atomic counter, so a worker that finishes early takes the
 * next piece (the balancing of morsel-driven engines), and must not count on every
 * worker: a worker that wakes after the caller has finished its share does not join (a
 * small job does not wait for the scheduler). Jobs do not nest: one runs at a time.
 *
 *   struct vg_pool *p = vg_pool_new(vg_threads_default());
 *   vg_pool_run(p, work, &job);   // work(&job, 0..threads-1), concurrently
 *   vg_pool_free(p); */
#ifndef VIGIL_COMMON_POOL_H
#define VIGIL_COMMON_POOL_H

#include <stddef.h>

struct vg_pool;

typedef void (*vg_pool_fn)(void *ctx, unsigned worker);

/* A pool of `threads` threads in all (threads - 1 started; 0 or 1: the caller alone).
 * NULL if no thread could be started (the caller then runs jobs alone). */
struct vg_pool *vg_pool_new(unsigned threads);
void vg_pool_free(struct vg_pool *p);
/* The threads a job runs on (1 for NULL). */
unsigned vg_pool_threads(const struct vg_pool *p);
/* Runs fn(ctx, w) for w = 0 on the caller and on each worker w in [1, threads) that
 * wakes while the caller is still in its own call. NULL pool: fn(ctx, 0). */
void vg_pool_run(struct vg_pool *p, vg_pool_fn fn, void *ctx);

/* Runs fn(ctx, w) on up to `threads` threads started for this call alone and joined
 * before it returns (w = 0: the caller), no more threads than `tasks` (at least one) nor
 * VG_THREADS_MAX; a thread that cannot be started is done without. For a room that
 * holds no pool (the relations cache's writer and checker); fn hands out its own pieces
 * as with vg_pool_run, but here every started thread runs it. */
void vg_threads_run(unsigned threads, size_t tasks, vg_pool_fn fn, void *ctx);

/* The thread count to use when none is given: VIGIL_THREADS if set and valid, else the
 * processors online. */
unsigned vg_threads_default(void);
/* Parses a thread count (1..VG_THREADS_MAX); -1 if `s` is not one. */
int vg_threads_parse(const char *s, unsigned *out);
#define VG_THREADS_MAX 256

#endif
