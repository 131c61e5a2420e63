/* Streams decoded ahead by worker threads (vgt_set_decode_threads): each stream's cursor
 * runs on one worker, which copies its events into chunks of a small ring per stream; the
 * merge takes events from the chunks in time order. A worker owns its streams' cursors
 * (their statistics and damage lists) until the merge is closed. Chunks change hands
 * under one mutex, so the per-event work is the decoding and one copy. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "prefetch.h"

#define CHUNK_EVENTS 2048
#define RING 4 /* chunks per stream: one being read, the others decoded ahead */

struct chunk {
	struct vgt_event ev[CHUNK_EVENTS];
	struct vgt_value *values;
	size_t n, capvalues;
};

struct squeue {
	struct chunk *filled[RING], *spare[RING];
	size_t head, nfilled, nspare;
	struct chunk *reading; /* the merge's current chunk */
	size_t next;           /* its next event */
	bool done;             /* the worker read the stream to its end */
	size_t worker;
};

struct vgt_prefetch {
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct vgt_cursor *cursors;
	struct squeue *q;
	size_t n, nworkers, started;
	pthread_t *threads;
	bool stop;
};

struct worker_arg {
	struct vgt_prefetch *p;
	size_t k;
};

static _Atomic unsigned decode_threads = 1;

void vgt_set_decode_threads(unsigned n)
{
	atomic_store(&decode_threads, n ? n : 1);
}

unsigned vgt_decode_threads(void)
{
	return atomic_load(&decode_threads);
}

/* Decodes up to a chunk of events of stream i; false once the stream ended. */
static bool fill(struct vgt_cursor *c, struct chunk *ch)
{
	size_t nvalues = 0;
	ch->n = 0;
	while (ch->n < CHUNK_EVENTS) {
		if (!vgt_cursor_advance(c))
			return false;
		unsigned nf = c->ev.values ? c->ev.type->nfields : 0; /* NULL: skipped */
		if (nvalues + nf > ch->capvalues) {
			/* values of earlier events move: their pointers are set at the end */
			ch->capvalues = 2 * (nvalues + nf) + 64;
			ch->values = vgt__xrealloc(ch->values, ch->capvalues, sizeof *ch->values);
		}
		if (nf)
			memcpy(ch->values + nvalues, c->ev.values, nf * sizeof *ch->values);
		ch->ev[ch->n] = c->ev;
		ch->ev[ch->n].values =
		    (const struct vgt_value *)(c->ev.values ? (uintptr_t)nvalues : UINTPTR_MAX);
		nvalues += nf;
		ch->n++;
	}
	return true;
}

static void fix_values(struct chunk *ch)
{
	for (size_t i = 0; i < ch->n; i++) {
		uintptr_t at = (uintptr_t)ch->ev[i].values;
		ch->ev[i].values = at == UINTPTR_MAX ? NULL : ch->values + at;
	}
}

static void *worker(void *arg)
{
	struct worker_arg *wa = arg;
	struct vgt_prefetch *p = wa->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		size_t pick = SIZE_MAX, left = 0;
		for (size_t i = 0; i < p->n; i++) {
			if (p->q[i].worker != wa->k || p->q[i].done)
				continue;
			left++;
			if (p->q[i].nspare && pick == SIZE_MAX)
				pick = i;
		}
		if (p->stop || !left)
			break;
		if (pick == SIZE_MAX) {
			pthread_cond_wait(&p->freed, &p->mu);
			continue;
		}
		struct squeue *q = &p->q[pick];
		struct chunk *ch = q->spare[--q->nspare];
		pthread_mutex_unlock(&p->mu);
		bool more = fill(&p->cursors[pick], ch);
		fix_values(ch);
		pthread_mutex_lock(&p->mu);
		q->filled[(q->head + q->nfilled++) % RING] = ch;
		q->done = !more;
		pthread_cond_broadcast(&p->filled);
	}
	pthread_mutex_unlock(&p->mu);
	free(wa);
	return NULL;
}

struct vgt_prefetch *vgt__prefetch_start(struct vgt_cursor *cursors, size_t n, unsigned threads)
{
	if (threads < 2 || !n)
		return NULL;
	struct vgt_prefetch *p = vgt__xcalloc(1, sizeof *p);
	p->cursors = cursors;
	p->n = n;
	p->nworkers = threads - 1 < n ? threads - 1 : n;
	p->q = vgt__xcalloc(n, sizeof *p->q);
	for (size_t i = 0; i < n; i++) {
		p->q[i].worker = i % p->nworkers;
		for (size_t k = 0; k < RING; k++)
			p->q[i].spare[p->q[i].nspare++] = vgt__xcalloc(1, sizeof(struct chunk));
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->filled, NULL);
	pthread_cond_init(&p->freed, NULL);
	p->threads = vgt__xcalloc(p->nworkers, sizeof *p->threads);
	for (size_t k = 0; k < p->nworkers; k++) {
		struct worker_arg *wa = vgt__xcalloc(1, sizeof *wa);
		*wa = (struct worker_arg){p, k};
		if (pthread_create(&p->threads[k], NULL, worker, wa) != 0) {
			free(wa);
			break;
		}
		p->started++;
	}
	if (p->started < p->nworkers) { /* streams of a worker that did not start: none */
		vgt__prefetch_stop(p);
		return NULL;
	}
	return p;
}

bool vgt__prefetch_next(struct vgt_prefetch *p, size_t i, struct vgt_event *ev)
{
	struct squeue *q = &p->q[i];
	if (q->reading && q->next < q->reading->n) {
		*ev = q->reading->ev[q->next++];
		return true;
	}
	pthread_mutex_lock(&p->mu);
	if (q->reading) { /* its last event was handed out before this call */
		q->spare[q->nspare++] = q->reading;
		q->reading = NULL;
		pthread_cond_broadcast(&p->freed);
	}
	while (!q->nfilled && !q->done)
		pthread_cond_wait(&p->filled, &p->mu);
	if (q->nfilled) {
		q->reading = q->filled[q->head];
		q->head = (q->head + 1) % RING;
		q->nfilled--;
		q->next = 0;
	}
	pthread_mutex_unlock(&p->mu);
	if (!q->reading || !q->reading->n)
		return q->reading ? vgt__prefetch_next(p, i, ev) : false;
	*ev = q->reading->ev[q->next++];
	return true;
}

void vgt__prefetch_stop(struct vgt_prefetch *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->mu);
	for (size_t k = 0; k < p->started; k++)
		pthread_join(p->threads[k], NULL);
	for (size_t i = 0; i < p->n; i++) {
		struct squeue *q = &p->q[i];
		struct chunk *all[2 * RING + 1];
		size_t na = 0;
		for (size_t k = 0; k < q->nfilled; k++)
			all[na++] = q->filled[(q->head + k) % RING];
		for (size_t k = 0; k < q->nspare; k++)
			all[na++] = q->spare[k];
		if (q->reading)
			all[na++] = q->reading;
		for (size_t k = 0; k < na; k++) {
			free(all[k]->values);
			free(all[k]);
		}
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->filled);
	pthread_cond_destroy(&p->freed);
	free(p->threads);
	free(p->q);
	free(p);
}
