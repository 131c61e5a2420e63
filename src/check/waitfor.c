/* The wait-for graph: threads, locks, holds (thread, lock, count) and open waits. Arrays
 * searched linearly: a trace's threads and locks held at one time are few. */
#define _GNU_SOURCE
#include "check/waitfor.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wf_thread {
	struct vgc_wf_node node;
	uint32_t scope;
	long wait; /* the lock waited for (index), or -1 */
	double since;
	int64_t since_ts;
};

struct wf_lock {
	struct vgc_wf_node node;
	uint32_t scope, kind;
};

struct wf_cycle {
	double t;
	int64_t ts;
	size_t n;
	size_t *threads, *locks; /* thread i waits for locks[i], held by threads[i + 1] */
	struct vgc_wf_step *steps;
};

struct vgc_wf {
	struct wf_thread *threads;
	size_t nthreads, cthreads;
	struct wf_lock *locks;
	size_t nlocks, clocks;
	struct vgc_wf_hold *holds;
	size_t nholds, cholds;
	struct wf_cycle *cycles;
	size_t ncycles, ccycles;
	struct vgc_wf_cycle *out;
	/* The path of the current search (cpath entries each). */
	size_t *path_t, *path_l, *seen;
	size_t cpath;
	/* Kept edges (vgc_wf_keep_edges), and the indexes of the open ones. */
	bool keep_edges;
	struct vgc_wf_edge *edges;
	size_t nedges, cedges;
	size_t *open_edges;
	size_t nopen, copen;
	int64_t now; /* the latest event's time */
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

void vgc_wf_keep_edges(struct vgc_wf *w)
{
	w->keep_edges = true;
}

static void node_free(struct vgc_wf_node *n)
{
	free((char *)n->kind);
	free((char *)n->name);
	free((char *)n->text);
}

void vgc_wf_free(struct vgc_wf *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nthreads; i++)
		node_free(&w->threads[i].node);
	for (size_t i = 0; i < w->nlocks; i++)
		node_free(&w->locks[i].node);
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
	free(w->edges);
	free(w->open_edges);
	free(w);
}

static bool node_init(struct vgc_wf_node *n, uint64_t id, uint64_t gen, uint32_t image,
                      const char *kind, const char *name, const char *text)
{
	*n = (struct vgc_wf_node){id,          gen, image, strdup(kind), name ? strdup(name) : NULL,
	                          strdup(text)};
	if (n->kind && n->text && (n->name || !name))
		return true;
	node_free(n);
	return false;
}

static long find_thread(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	for (size_t i = 0; i < w->nthreads; i++) {
		struct wf_thread *t = &w->threads[i];
		if (t->node.id == e->thread && t->node.gen == e->thread_gen &&
		    t->scope == e->thread_scope)
			return (long)i;
	}
	if (!grow((void **)&w->threads, &w->cthreads, w->nthreads, sizeof *w->threads))
		return -1;
	struct wf_thread *t = &w->threads[w->nthreads];
	*t = (struct wf_thread){.scope = e->thread_scope, .wait = -1};
	struct vgc_lock_texts x;
	vgc_lock_event_texts(e, &x);
	if (!node_init(&t->node, e->thread, e->thread_gen, e->image, "thread", x.thread_name,
	               x.thread_text))
		return -1;
	return (long)w->nthreads++;
}

static long find_lock(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	for (size_t i = 0; i < w->nlocks; i++) {
		struct wf_lock *l = &w->locks[i];
		if (l->node.id == e->lock && l->node.gen == e->lock_gen &&
		    l->scope == e->lock_scope && l->kind == e->lock_kind)
			return (long)i;
	}
	if (!grow((void **)&w->locks, &w->clocks, w->nlocks, sizeof *w->locks))
		return -1;
	struct wf_lock *l = &w->locks[w->nlocks];
	*l = (struct wf_lock){.scope = e->lock_scope, .kind = e->lock_kind};
	struct vgc_lock_texts x;
	vgc_lock_event_texts(e, &x);
	if (!node_init(&l->node, e->lock, e->lock_gen, e->image, x.lock_kind, x.lock_name,
	               x.lock_text))
		return -1;
	return (long)w->nlocks++;
}

static struct vgc_wf_hold *find_hold(struct vgc_wf *w, size_t thread, size_t lock)
{
	for (size_t i = 0; i < w->nholds; i++)
		if (w->holds[i].thread == thread && w->holds[i].lock == lock)
			return &w->holds[i];
	return NULL;
}

/* ---- kept edges ---------------------------------------------------------------------- */

static bool edge_open(struct vgc_wf *w, size_t waiter, size_t holder, size_t lock, int64_t ts)
{
	if (!w->keep_edges)
		return true;
	if (!grow((void **)&w->edges, &w->cedges, w->nedges, sizeof *w->edges) ||
	    !grow((void **)&w->open_edges, &w->copen, w->nopen, sizeof *w->open_edges))
		return false;
	w->edges[w->nedges] = (struct vgc_wf_edge){waiter, holder, lock, ts, ts, true};
	w->open_edges[w->nopen++] = w->nedges++;
	return true;
}

/* Closes the open edges of this waiter (holder SIZE_MAX: any) or of this holder (waiter
 * SIZE_MAX: any) on `lock`. */
static void edges_close(struct vgc_wf *w, size_t waiter, size_t holder, size_t lock, int64_t ts)
{
	for (size_t k = 0; k < w->nopen;) {
		struct vgc_wf_edge *e = &w->edges[w->open_edges[k]];
		if (e->lock != lock || (waiter != SIZE_MAX && e->waiter != waiter) ||
		    (holder != SIZE_MAX && e->holder != holder)) {
			k++;
			continue;
		}
		e->to = ts;
		e->open = false;
		w->open_edges[k] = w->open_edges[--w->nopen];
	}
}

size_t vgc_wf_edges(const struct vgc_wf *w, const struct vgc_wf_edge **out)
{
	for (size_t k = 0; k < w->nopen; k++)
		w->edges[w->open_edges[k]].to = w->now;
	*out = w->edges;
	return w->nedges;
}

/* ---- cycles -------------------------------------------------------------------------- */

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
		const struct vgc_wf_hold *h = &w->holds[i];
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

static bool record_cycle(struct vgc_wf *w, size_t n, double t, int64_t ts)
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
	struct wf_cycle y = {t,
	                     ts,
	                     n,
	                     malloc(n * sizeof(size_t)),
	                     malloc(n * sizeof(size_t)),
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
		y.steps[i].since_ts = w->threads[w->path_t[i]].since_ts;
	}
	w->cycles[w->ncycles++] = y;
	return true;
}

/* Is there a cycle through thread `from`? */
static bool detect(struct vgc_wf *w, size_t from, double t, int64_t ts)
{
	if (w->threads[from].wait < 0)
		return true;
	if (w->cpath < w->nthreads) { /* the search's arrays, grown with the threads */
		size_t n = w->cthreads;
		size_t *pt = realloc(w->path_t, n * sizeof(size_t));
		if (pt)
			w->path_t = pt;
		size_t *pl = realloc(w->path_l, n * sizeof(size_t));
		if (pl)
			w->path_l = pl;
		size_t *sn = realloc(w->seen, n * sizeof(size_t));
		if (sn)
			w->seen = sn;
		if (!pt || !pl || !sn)
			return false;
		w->cpath = n;
	}
	memset(w->seen, 0, w->nthreads * sizeof(size_t));
	size_t len = 0;
	if (search(w, from, 0, &len))
		return record_cycle(w, len, t, ts);
	return true;
}

/* ---- events -------------------------------------------------------------------------- */

static bool wait_begin(struct vgc_wf *w, size_t ti, size_t li, const struct vgc_lock_event *e)
{
	struct wf_thread *th = &w->threads[ti];
	if (th->wait >= 0) /* waits for one lock at a time: the newest wait replaces */
		edges_close(w, ti, SIZE_MAX, (size_t)th->wait, e->ts);
	th->wait = (long)li;
	th->since = e->t;
	th->since_ts = e->ts;
	for (size_t i = 0; i < w->nholds; i++)
		if (w->holds[i].lock == li && w->holds[i].thread != ti &&
		    !edge_open(w, ti, w->holds[i].thread, li, e->ts))
			return false;
	return detect(w, ti, e->t, e->ts);
}

static bool acquire(struct vgc_wf *w, size_t ti, size_t li, const struct vgc_lock_event *e)
{
	struct wf_thread *th = &w->threads[ti];
	if (th->wait == (long)li) { /* a wait its sensors closed with the acquire */
		th->wait = -1;
		edges_close(w, ti, SIZE_MAX, li, e->ts);
	}
	struct vgc_wf_hold *h = find_hold(w, ti, li);
	if (h) {
		h->count++;
		return true;
	}
	if (!grow((void **)&w->holds, &w->cholds, w->nholds, sizeof *w->holds))
		return false;
	w->holds[w->nholds++] = (struct vgc_wf_hold){ti, li, 1, e->ts};
	/* New edges: every thread waiting for this lock now points here. */
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].wait == (long)li && i != ti &&
		    (!edge_open(w, i, ti, li, e->ts) || !detect(w, i, e->t, e->ts)))
			return false;
	return true;
}

bool vgc_wf_event(struct vgc_wf *w, const struct vgc_lock_event *e)
{
	long ti = find_thread(w, e), li = find_lock(w, e);
	if (ti < 0 || li < 0)
		return false;
	if (e->ts > w->now)
		w->now = e->ts;
	switch (e->op) {
	case VGC_LK_WAIT_BEGIN:
		return wait_begin(w, (size_t)ti, (size_t)li, e);
	case VGC_LK_WAIT_END:
		w->threads[ti].wait = -1;
		edges_close(w, (size_t)ti, SIZE_MAX, (size_t)li, e->ts);
		return true;
	case VGC_LK_RELEASE: {
		struct vgc_wf_hold *h = find_hold(w, (size_t)ti, (size_t)li);
		if (h && !--h->count) {
			*h = w->holds[--w->nholds];
			edges_close(w, SIZE_MAX, (size_t)ti, (size_t)li, e->ts);
		}
		return true;
	}
	case VGC_LK_ACQUIRE:
		return acquire(w, (size_t)ti, (size_t)li, e);
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
			y->steps[i].thread = th->node.text;
			y->steps[i].lock = w->locks[y->locks[i]].node.text;
			y->steps[i].thread_index = y->threads[i];
			y->steps[i].lock_index = y->locks[i];
			if (th->wait != (long)y->locks[i] || th->since_ts != y->steps[i].since_ts ||
			    !find_hold(w, y->threads[(i + 1) % y->n], y->locks[i]))
				standing = false;
		}
		w->out[c] = (struct vgc_wf_cycle){y->t, y->ts, standing, y->n, y->steps};
	}
	*out = w->out;
	return w->ncycles;
}

/* ---- the graph now ------------------------------------------------------------------- */

size_t vgc_wf_nthreads(const struct vgc_wf *w)
{
	return w->nthreads;
}

size_t vgc_wf_nlocks(const struct vgc_wf *w)
{
	return w->nlocks;
}

const struct vgc_wf_node *vgc_wf_thread(const struct vgc_wf *w, size_t i)
{
	return &w->threads[i].node;
}

const struct vgc_wf_node *vgc_wf_lock(const struct vgc_wf *w, size_t i)
{
	return &w->locks[i].node;
}

long vgc_wf_waits_for(const struct vgc_wf *w, size_t thread, int64_t *since)
{
	*since = w->threads[thread].since_ts;
	return w->threads[thread].wait;
}

size_t vgc_wf_holds(const struct vgc_wf *w, const struct vgc_wf_hold **out)
{
	*out = w->holds;
	return w->nholds;
}
