/* The worker pool (pool.h): threads wait on a condition variable for a job generation
 * to change and join the job while it is open; the caller runs its share, closes the
 * job and waits only for the workers that joined. A worker that wakes late (a loaded
 * machine) finds the job closed and sleeps again: a small job does not wait for the
 * scheduler to run every thread. */
#include "common/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct vg_pool {
	pthread_mutex_t mu;
	pthread_cond_t start, done;
	unsigned threads; /* the caller included */
	unsigned started; /* workers started (threads - 1 unless creation failed) */
	unsigned long generation;
	int open;         /* the current job can still be joined */
	unsigned running; /* workers inside the current job */
	vg_pool_fn fn;
	void *ctx;
	int stop;
	pthread_t *tid;
};

struct worker_arg {
	struct vg_pool *p;
	unsigned w;
};

static void *worker_main(void *argp)
{
	struct worker_arg *a = argp;
	struct vg_pool *p = a->p;
	unsigned w = a->w;
	free(a);
	unsigned long seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->generation == seen)
			pthread_cond_wait(&p->start, &p->mu);
		if (p->stop)
			break;
		seen = p->generation;
		if (!p->open)
			continue;
		p->running++;
		vg_pool_fn fn = p->fn;
		void *ctx = p->ctx;
		pthread_mutex_unlock(&p->mu);
		fn(ctx, w);
		pthread_mutex_lock(&p->mu);
		if (--p->running == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

struct vg_pool *vg_pool_new(unsigned threads)
{
	if (threads <= 1)
		return NULL;
	struct vg_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->tid = calloc(threads, sizeof *p->tid);
	if (!p->tid) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->start, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned w = 1; w < threads; w++) {
		struct worker_arg *a = malloc(sizeof *a);
		if (!a)
			break;
		*a = (struct worker_arg){p, w};
		if (pthread_create(&p->tid[p->started], NULL, worker_main, a) != 0) {
			free(a);
			break;
		}
		p->started++;
	}
	p->threads = p->started + 1;
	if (!p->started) {
		vg_pool_free(p);
		return NULL;
	}
	return p;
}

void vg_pool_free(struct vg_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++)
		pthread_join(p->tid[i], NULL);
	pthread_cond_destroy(&p->start);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->tid);
	free(p);
}

unsigned vg_pool_threads(const struct vg_pool *p)
{
	return p ? p->threads : 1;
}

void vg_pool_run(struct vg_pool *p, vg_pool_fn fn, void *ctx)
{
	if (!p) {
		fn(ctx, 0);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->open = 1;
	p->generation++;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->mu);
	fn(ctx, 0);
	pthread_mutex_lock(&p->mu);
	p->open = 0;
	while (p->running)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

struct once_arg {
	vg_pool_fn fn;
	void *ctx;
	unsigned w;
};

static void *once_main(void *argp)
{
	struct once_arg *a = argp;
	a->fn(a->ctx, a->w);
	return NULL;
}

void vg_threads_run(unsigned threads, size_t tasks, vg_pool_fn fn, void *ctx)
{
	if (threads > tasks)
		threads = tasks ? (unsigned)tasks : 1;
	if (threads > VG_THREADS_MAX)
		threads = VG_THREADS_MAX;
	pthread_t tid[VG_THREADS_MAX];
	struct once_arg args[VG_THREADS_MAX];
	unsigned started = 0;
	for (unsigned t = 1; t < threads; t++) {
		args[started] = (struct once_arg){fn, ctx, started + 1};
		if (pthread_create(&tid[started], NULL, once_main, &args[started]) == 0)
			started++;
	}
	fn(ctx, 0);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

int vg_threads_parse(const char *s, unsigned *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > VG_THREADS_MAX)
		return -1;
	*out = (unsigned)v;
	return 0;
}

unsigned vg_threads_default(void)
{
	unsigned n;
	if (vg_threads_parse(getenv("VIGIL_THREADS"), &n) == 0)
		return n;
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	if (c < 1)
		return 1;
	return c > VG_THREADS_MAX ? VG_THREADS_MAX : (unsigned)c;
}
