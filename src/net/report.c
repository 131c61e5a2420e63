/* Figures of one network (docs/net.md "Report"): response time, who took part, messages
 * and request/reply pairs, bytes, and per thread the time running and waiting.
 *
 * A thread edge (the thread between two of its events) that ends in a receive of a
 * message from another thread is waiting: the thread was blocked in that receive (or
 * about to be) from its previous event until the message arrived; every other thread
 * edge is running. The recording has no event at the moment a receive is called, so this
 * counts work done just before a blocking receive as waiting.
 *
 * User-defined states (docs/net.md): the time each thread edge spent in each state of its
 * thread, summed per state over the network, beside running and waiting. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

static const int64_t *sort_first;
static int by_first(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sort_first[x] != sort_first[y])
		return sort_first[x] < sort_first[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static const struct vgn_graph *cmp_g;
static int by_send_time(const void *a, const void *b)
{
	const struct vgn_gedge *x = &cmp_g->edges[*(const uint32_t *)a];
	const struct vgn_gedge *y = &cmp_g->edges[*(const uint32_t *)b];
	int64_t tx = cmp_g->vertices[x->from].ts, ty = cmp_g->vertices[y->from].ts;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Each thread's process, as the index of the process's first thread in the graph
 * (hosts are pooled strings: same name, same pointer). */
static void procs_of(const struct vgn_graph *g, uint32_t *proc)
{
	struct vgn_tmap m;
	vgn_tmap_init(&m);
	for (uint32_t t = 0; t < g->nthreads; t++) {
		uint64_t h = (uint64_t)(uintptr_t)g->threads[t].host,
		         p = (uint64_t)g->threads[t].pid;
		proc[t] = vgn_tmap_get(&m, h, p, 0);
		if (proc[t] == VGN_NONE) {
			proc[t] = t;
			vgn_tmap_put(&m, h, p, 0, t);
		}
	}
	vgn_tmap_free(&m);
}

/* Adds `ns` to the state `label` (labels are pooled: same text, same pointer). */
static void state_add(struct vgn_stats *st, size_t *cap, const char *label, int64_t ns)
{
	size_t i = 0;
	while (i < st->nstates && st->states[i].label != label)
		i++;
	if (i == st->nstates) {
		VGN_GROW(st->states, *cap, st->nstates + 1);
		st->states[st->nstates++] = (struct vgn_state_time){label, 0};
	}
	st->states[i].ns += ns;
}

/* Each thread edge's overlap with each state of its thread (both in time order). */
static void states_sum(const struct vgn_graph *g, struct vgn_stats *st)
{
	size_t cap = 0;
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind != VGN_E_THREAD)
			continue;
		const struct vgn_gthread *th = &g->threads[g->vertices[x->to].thread];
		int64_t a = g->vertices[x->from].ts, b = g->vertices[x->to].ts;
		/* states follow each other: the first that ends after a, by bisection */
		size_t lo = 0, hi = th->nstates;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (th->states[mid].to <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < th->nstates && th->states[i].from < b; i++) {
			int64_t lo = th->states[i].from > a ? th->states[i].from : a;
			int64_t hi = th->states[i].to < b ? th->states[i].to : b;
			if (hi > lo)
				state_add(st, &cap, th->states[i].label, hi - lo);
		}
	}
}

int vgn_stats_compute(const struct vgn_graph *g, struct vgn_stats *st)
{
	memset(st, 0, sizeof *st);
	st->per_thread = vgb_xcalloc(g->nthreads + 1, sizeof *st->per_thread);
	if (!g->nvertices)
		return 0;
	st->start = g->vertices[g->input].ts;
	st->end = st->start;
	for (size_t v = 0; v < g->nvertices; v++) {
		const struct vgn_gvertex *x = &g->vertices[v];
		if (x->ts > st->end)
			st->end = x->ts;
		if ((x->kind == VGN_SEND || x->kind == VGN_RECV) && !x->matched)
			st->unmatched++;
	}
	st->response = st->end - st->start;
	st->threads = g->nthreads;
	uint32_t *proc = vgb_xcalloc(g->nthreads + 1, sizeof *proc);
	procs_of(g, proc);
	struct vgn_tmap hosts;
	vgn_tmap_init(&hosts);
	for (uint32_t t = 0; t < g->nthreads; t++) {
		st->processes += proc[t] == t;
		uint64_t h = (uint64_t)(uintptr_t)g->threads[t].host;
		if (vgn_tmap_get(&hosts, h, 0, 0) == VGN_NONE) {
			vgn_tmap_put(&hosts, h, 0, 0, t);
			st->machines++;
		}
	}
	vgn_tmap_free(&hosts);
	/* receives of a message from another thread */
	bool *waited = vgb_xcalloc(g->nvertices + 1, sizeof *waited);
	bool *counted = vgb_xcalloc(g->nvertices + 1, sizeof *counted);
	uint32_t *msgs = vgb_xcalloc(g->nedges + 1, sizeof *msgs);
	size_t nm = 0;
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind != VGN_E_MESSAGE)
			continue;
		/* a message is a send: read in several pieces, it is still one */
		if (!counted[x->from]) {
			counted[x->from] = true;
			st->messages++;
			st->cross_host_messages += x->cross_host;
		}
		st->bytes += x->bytes;
		msgs[nm++] = (uint32_t)e;
		if (g->vertices[x->from].thread != g->vertices[x->to].thread)
			waited[x->to] = true;
	}
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind != VGN_E_THREAD)
			continue;
		int64_t d = g->vertices[x->to].ts - g->vertices[x->from].ts;
		struct vgn_thread_time *tt = &st->per_thread[g->vertices[x->to].thread];
		if (waited[x->to])
			tt->waiting += d;
		else
			tt->running += d;
	}
	states_sum(g, st);
	/* request/reply pairs: per pair of processes, a message from the side that spoke
	 * first followed by one back */
	cmp_g = g;
	qsort(msgs, nm, sizeof *msgs, by_send_time);
	struct vgn_tmap chan; /* pair of processes -> initiator + 1, last sender + 1 */
	vgn_tmap_init(&chan);
	for (size_t i = 0; i < nm; i++) {
		const struct vgn_gedge *x = &g->edges[msgs[i]];
		uint32_t a = proc[g->vertices[x->from].thread], b = proc[g->vertices[x->to].thread];
		if (a == b)
			continue;
		uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
		uint32_t init = vgn_tmap_get(&chan, lo, hi, 0),
		         last = vgn_tmap_get(&chan, lo, hi, 1);
		if (init == VGN_NONE) {
			vgn_tmap_put(&chan, lo, hi, 0, a);
		} else if (a != init && last == init) {
			st->pairs++; /* the reply to the initiator's request */
		}
		vgn_tmap_put(&chan, lo, hi, 1, a);
	}
	vgn_tmap_free(&chan);
	/* programs in order of first involvement */
	size_t cap = 1, len = 0;
	st->servers = vgb_xcalloc(1, 1);
	uint32_t *order = vgb_xcalloc(g->nthreads + 1, sizeof *order);
	int64_t *first = vgb_xcalloc(g->nthreads + 1, sizeof *first);
	for (uint32_t t = 0; t < g->nthreads; t++)
		first[t] = INT64_MAX;
	for (size_t v = 0; v < g->nvertices; v++) {
		uint32_t p = proc[g->vertices[v].thread];
		if (g->vertices[v].ts < first[p])
			first[p] = g->vertices[v].ts;
	}
	size_t no = 0;
	for (uint32_t t = 0; t < g->nthreads; t++)
		if (proc[t] == t)
			order[no++] = t;
	sort_first = first;
	qsort(order, no, sizeof *order, by_first);
	for (size_t i = 0; i < no; i++) {
		const char *p = g->threads[order[i]].program;
		size_t n = strlen(p) + 3;
		while (len + n + 1 > cap) {
			cap *= 2;
			st->servers = vgb_xrealloc(st->servers, cap, 1);
		}
		len += (size_t)sprintf(st->servers + len, "%s%s", i ? " > " : "", p);
	}
	free(order);
	free(first);
	free(proc);
	free(waited);
	free(counted);
	free(msgs);
	return 0;
}

void vgn_stats_free(struct vgn_stats *st)
{
	free(st->per_thread);
	free(st->servers);
	free(st->states);
	st->states = NULL;
	st->nstates = 0;
	st->per_thread = NULL;
	st->servers = NULL;
}
