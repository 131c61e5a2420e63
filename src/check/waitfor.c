/* The wait-for graph: threads, locks, holds (thread, lock, count) and open waits. Arrays
 * searched linearly: a trace's threads and locks held at one time are few. */
#define _GNU_SOURCE
#include "check/waitfor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wf_thread {
	uint64_t id, gen;
	uint32_t scope;
	char *text;
	long wait; /* the lock waited for (index), or -1 */
	double since;
};

struct wf_lock {
	uint64_t id, gen;
	uint32_t scope, kind;
	char *text;
};

struct wf_hold {
	size_t thread, lock;
	unsigned count;
};

struct wf_cycle {
	double t;
	size_t n;
	size_t *threads, *locks; /* thread i waits for locks[i], held by threads[i + 1] */
	struct vgc_wf_step *steps;
};

struct vgc_wf {
	struct wf_thread *threads;
	size_t nthreads, cthreads;
	struct wf_lock *locks;
	size_t nlocks, clocks;
	struct wf_hold *holds;
	size_t nholds, cholds;
	struct wf_cycle *cycles;
	size_t ncycles, ccycles;
	struct vgc_wf_cycle *out;
	/* The path of the current search. */
	size_t *path_t, *path_l, *seen;
};

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 8;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

struct vgc_wf *vgc_wf_new(void)
{
	return calloc(1, sizeof(struct vgc_wf));
}

void vgc_wf_free(struct vgc_wf *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nthreads; i++)
		free(w->threads[i].text);
	for (size_t i = 0; i < w->nlocks; i++)
		free(w->locks[i].text);
	for (size_t i = 0; i < w->ncycles; i++) {
		free(w->cycles[i].threads);
		free(w->cycles[i].locks);
		free(w->cycles[i].steps);
	}
	free(w->threads);
	free(w->locks);
	free(w->holds);
	free(w->cycles);
	free(w->out);
	free(w->path_t);
	free(w->path_l);
	free(w->seen);
	free(w);
}

static long find_thread(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		struct wf_thread *t = &w->threads[i];
		if (t->id == e->thread && t->gen == e->thread_gen && t->scope == e->thread_scope)
			return (long)i;
	}
	if (!grow((void **)&w->threads, &w->cthreads, w->nthreads, sizeof *w->threads))
		return -1;
	char *text = strdup(e->thread_text);
	if (!text)
		return -1;
	w->threads[w->nthreads] =
	    (struct wf_thread){e->thread, e->thread_gen, e->thread_scope, text, -1, 0};
	return (long)w->nthreads++;
}

static long find_lock(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	for (size_t i = 0; i < w->nlocks; i++) {
		struct wf_lock *l = &w->locks[i];
		if (l->id == e->lock && l->gen == e->lock_gen && l->scope == e->lock_scope &&
		    l->kind == e->lock_kind)
			return (long)i;
	}
	if (!grow((void **)&w->locks, &w->clocks, w->nlocks, sizeof *w->locks))
		return -1;
	char *text = strdup(e->lock_text);
	if (!text)
		return -1;
	w->locks[w->nlocks] =
	    (struct wf_lock){e->lock, e->lock_gen, e->lock_scope, e->lock_kind, text};
	return (long)w->nlocks++;
}

static struct wf_hold *find_hold(struct vgc_wf *w, size_t thread, size_t lock)
{
	for (size_t i = 0; i < w->nholds; i++)
		if (w->holds[i].thread == thread && w->holds[i].lock == lock)
			return &w->holds[i];
	return NULL;
}

/* Depth-first from thread `at` (path position `depth`) along wait -> holder edges, back to
 * path_t[0]. seen: threads on the path or explored, so each is visited once per search. */
static bool search(struct vgc_wf *w, size_t at, size_t depth, size_t *len)
{
	w->path_t[depth] = at;
	w->seen[at] = 1;
	long l = w->threads[at].wait;
	if (l < 0)
		return false;
	w->path_l[depth] = (size_t)l;
	for (size_t i = 0; i < w->nholds; i++) {
		const struct wf_hold *h = &w->holds[i];
		if (h->lock != (size_t)l || h->thread == at)
			continue;
		if (h->thread == w->path_t[0]) {
			*len = depth + 1;
			return true;
		}
		if (!w->seen[h->thread] && search(w, h->thread, depth + 1, len))
			return true;
	}
	return false;
}

static bool record_cycle(struct vgc_wf *w, size_t n, double t)
{
	/* Once per cycle: the same threads and locks in rotation are the same cycle. */
	for (size_t c = 0; c < w->ncycles; c++) {
		const struct wf_cycle *y = &w->cycles[c];
		if (y->n != n)
			continue;
		for (size_t r = 0; r < n; r++) {
			size_t k = 0;
			while (k < n && y->threads[(r + k) % n] == w->path_t[k] &&
			       y->locks[(r + k) % n] == w->path_l[k])
				k++;
			if (k == n)
				return true;
		}
	}
	if (!grow((void **)&w->cycles, &w->ccycles, w->ncycles, sizeof *w->cycles))
		return false;
	struct wf_cycle y = {t, n, malloc(n * sizeof(size_t)), malloc(n * sizeof(size_t)),
	                     calloc(n, sizeof(struct vgc_wf_step))};
	if (!y.threads || !y.locks || !y.steps) {
		free(y.threads);
		free(y.locks);
		free(y.steps);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		y.threads[i] = w->path_t[i];
		y.locks[i] = w->path_l[i];
		y.steps[i].since = w->threads[w->path_t[i]].since;
	}
	w->cycles[w->ncycles++] = y;
	return true;
}

/* Is there a cycle through thread `from`? */
static bool detect(struct vgc_wf *w, size_t from, double t)
{
	if (w->threads[from].wait < 0)
		return true;
	size_t *pt = realloc(w->path_t, w->nthreads * sizeof(size_t));
	if (pt)
		w->path_t = pt;
	size_t *pl = realloc(w->path_l, w->nthreads * sizeof(size_t));
	if (pl)
		w->path_l = pl;
	size_t *sn = realloc(w->seen, w->nthreads * sizeof(size_t));
	if (sn)
		w->seen = sn;
	if (!pt || !pl || !sn)
		return false;
	memset(w->seen, 0, w->nthreads * sizeof(size_t));
	size_t len = 0;
	if (search(w, from, 0, &len))
		return record_cycle(w, len, t);
	return true;
}

bool vgc_wf_event(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	long ti = find_thread(w, e), li = find_lock(w, e);
	if (ti < 0 || li < 0)
		return false;
	struct wf_thread *th = &w->threads[ti];
	struct wf_hold *h = find_hold(w, (size_t)ti, (size_t)li);
	switch (e->op) {
	case VGC_LK_WAIT_BEGIN:
		th->wait = li;
		th->since = e->t;
		return detect(w, (size_t)ti, e->t);
	case VGC_LK_WAIT_END:
		th->wait = -1;
		return true;
	case VGC_LK_RELEASE:
		if (h && !--h->count)
			*h = w->holds[--w->nholds];
		return true;
	case VGC_LK_ACQUIRE:
		if (th->wait == li) /* a wait its sensors closed with the acquire */
			th->wait = -1;
		if (h) {
			h->count++;
			return true;
		}
		if (!grow((void **)&w->holds, &w->cholds, w->nholds, sizeof *w->holds))
			return false;
		w->holds[w->nholds++] = (struct wf_hold){(size_t)ti, (size_t)li, 1};
		/* New edges: every thread waiting for this lock now points here. */
		for (size_t i = 0; i < w->nthreads; i++)
			if (w->threads[i].wait == li && !detect(w, i, e->t))
				return false;
		return true;
	}
	return true;
}

size_t vgc_wf_cycles(struct vgc_wf *w, const struct vgc_wf_cycle **out)
{
	free(w->out);
	w->out = calloc(w->ncycles ? w->ncycles : 1, sizeof *w->out);
	if (!w->out) {
		*out = NULL;
		return 0;
	}
	for (size_t c = 0; c < w->ncycles; c++) {
		struct wf_cycle *y = &w->cycles[c];
		bool standing = true;
		for (size_t i = 0; i < y->n; i++) {
			const struct wf_thread *th = &w->threads[y->threads[i]];
			y->steps[i].thread = th->text;
			y->steps[i].lock = w->locks[y->locks[i]].text;
			if (th->wait != (long)y->locks[i] || th->since != y->steps[i].since ||
			    !find_hold(w, y->threads[(i + 1) % y->n], y->locks[i]))
				standing = false;
		}
		w->out[c] = (struct vgc_wf_cycle){y->t, standing, y->n, y->steps};
	}
	*out = w->out;
	return w->ncycles;
}
