/* Network numbers (docs/net.md "Network numbers"): the walk makes networks thread by
 * thread, so its order depends on every event of the trace; the numbers follow the
 * events that began the networks instead, in time order. A prefix of a trace read in
 * time order (vigil watch) then numbers the networks it has as the whole trace does:
 * a network begun later cannot take a smaller number. */
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

struct began_key {
	const struct vgn_set *s;
	const uint32_t *began;
};
static struct began_key key; /* for qsort */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int by_beginning(const void *x, const void *y)
{
	const struct vgn_set *s = key.s;
	uint32_t ea = key.began[*(const uint32_t *)x], eb = key.began[*(const uint32_t *)y];
	const struct vgn_event *a = &s->events[ea], *b = &s->events[eb];
	if (a->cts != b->cts)
		return a->cts < b->cts ? -1 : 1;
	const struct vgn_thread *ta = &s->threads[a->thread], *tb = &s->threads[b->thread];
	const struct vgn_proc *pa = &s->procs[ta->proc], *pb = &s->procs[tb->proc];
	int c = strcmp(s->hosts[pa->host].name, s->hosts[pb->host].name);
	if (!c)
		c = cmp_u64((uint64_t)pa->pid, (uint64_t)pb->pid);
	if (!c)
		c = cmp_u64(pa->gen, pb->gen);
	if (!c)
		c = cmp_u64(ta->tid, tb->tid);
	if (!c)
		c = cmp_u64(ta->gen, tb->gen);
	if (!c)
		c = cmp_u64(a->offset, b->offset);
	return c ? c : cmp_u64(ea, eb);
}

void vgn_split_number(const struct vgn_set *s, struct vgn_split *sp, const uint32_t *began)
{
	size_t n = sp->nnets;
	if (n < 2)
		return;
	uint32_t *order = vgb_xcalloc(n, sizeof *order), *rank = vgb_xcalloc(n, sizeof *rank);
	uint32_t *inputs = vgb_xcalloc(n, sizeof *inputs);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	key = (struct began_key){s, began};
	qsort(order, n, sizeof *order, by_beginning);
	for (size_t k = 0; k < n; k++) {
		rank[order[k]] = (uint32_t)k;
		inputs[k] = sp->inputs[order[k]];
	}
	memcpy(sp->inputs, inputs, n * sizeof *inputs);
	for (size_t e = 0; e < s->nevents; e++)
		if (sp->net_of[e] != VGN_NONE)
			sp->net_of[e] = rank[sp->net_of[e]];
	free(order);
	free(rank);
	free(inputs);
}
