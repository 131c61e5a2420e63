/* Network numbers (docs/net.md "Network numbers"): the walk makes networks thread by
 * thread, so its order depends on every event of the trace; the numbers follow the
 * events that began the networks instead, in time order. A prefix of a trace read in
 * time order (vigil watch) then numbers the networks it has as the whole trace does:
 * a network begun later cannot take a smaller number. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

/* What orders a network: the event that began it, and where that event was recorded. */
struct began {
	int64_t cts;
	const char *host;
	uint64_t pid, gen, tid, tgen, offset, ev;
	uint32_t net;
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int by_beginning(const void *x, const void *y)
{
	const struct began *a = x, *b = y;
	if (a->cts != b->cts)
		return a->cts < b->cts ? -1 : 1;
	int c = strcmp(a->host, b->host);
	if (!c)
		c = cmp_u64(a->pid, b->pid);
	if (!c)
		c = cmp_u64(a->gen, b->gen);
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)
		c = cmp_u64(a->tgen, b->tgen);
	if (!c)
		c = cmp_u64(a->offset, b->offset);
	return c ? c : cmp_u64(a->ev, b->ev);
}

void vgn_split_number(const struct vgn_set *s, struct vgn_split *sp, const uint32_t *began)
{
	size_t n = sp->nnets;
	if (n < 2)
		return;
	struct began *order = vgb_xcalloc(n, sizeof *order);
	for (size_t i = 0; i < n; i++) {
		const struct vgn_event *e = &s->events[began[i]];
		const struct vgn_thread *th = &s->threads[e->thread];
		const struct vgn_proc *pr = &s->procs[th->proc];
		order[i] = (struct began){e->cts,
		                          s->hosts[pr->host].name,
		                          (uint64_t)pr->pid,
		                          pr->gen,
		                          th->tid,
		                          th->gen,
		                          e->offset,
		                          began[i],
		                          (uint32_t)i};
	}
	qsort(order, n, sizeof *order, by_beginning);
	uint32_t *rank = vgb_xcalloc(n, sizeof *rank), *inputs = vgb_xcalloc(n, sizeof *inputs);
	for (size_t k = 0; k < n; k++) {
		rank[order[k].net] = (uint32_t)k;
		inputs[k] = sp->inputs[order[k].net];
	}
	memcpy(sp->inputs, inputs, n * sizeof *inputs);
	for (size_t e = 0; e < s->nevents; e++)
		if (sp->net_of[e] != VGN_NONE)
			sp->net_of[e] = rank[sp->net_of[e]];
	free(order);
	free(rank);
	free(inputs);
}
