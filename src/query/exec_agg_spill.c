/* An aggregate past the query's memory budget: its contributions (a time, an argument and
 * the group's key values, per binding of its own plan) partitioned by the hash of their
 * group's key values into spill files (exec_spill_parts.c), then each partition read back
 * and its groups aggregated as the in-memory aggregate does them (agg.c), the relation
 * growing partition by partition. A group lies in one partition whole, its contributions
 * in the order of the bindings, so each group's constant intervals are the in-memory
 * aggregate's (sums added up in the same order); the relation holds the groups partition
 * by partition instead of in key order, which no answer depends on (the outer statement
 * joins it and a result is sorted).
 *
 * As for the hash join, the partitions are counted over 4096 first and the fewest whose
 * largest fits half the room with its buffers are used (vgq_parts_choose); when no cut's largest
 * partition fits the room (one group of more contributions than the budget holds: an aggregate
 * without a by-list, say), the statement is refused, one line naming the aggregate's group. */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "query/exec_spill_parts.h"

/* What a partition of n contributions holds in memory: its records as read, its
 * contributions and key values, and what aggregating them takes (agg.c). */
static size_t part_bytes(uint64_t n, size_t nby)
{
	return n * (sizeof(struct vgq_contrib) + (1 + 2 * nby) * sizeof(struct vx_value) + 16) +
	       vgq_agg_work_bytes(n);
}

static uint64_t group_hash(const struct vx_value *keys, size_t nby)
{
	uint64_t h = 0x5bd1e995;
	for (size_t k = 0; k < nby; k++) /* equal under vgq_value_order: equal hashes */
		h = (h ^ (keys[k].null ? 0x9e3779b9 : vgq_value_hash(&keys[k]))) * 0x100000001b3ull;
	return vgq_mix(h);
}

/* A record: b, e, the argument, the key values. */
struct rec_layout {
	size_t nby, size;
};

static void pack(const struct rec_layout *l, unsigned char *r, const struct vgq_contrib *c,
                 const struct vx_value *keys)
{
	memcpy(r, &c->b, sizeof c->b);
	memcpy(r + 8, &c->e, sizeof c->e);
	memcpy(r + 16, &c->arg, sizeof c->arg);
	memcpy(r + 16 + sizeof c->arg, keys, l->nby * sizeof *keys);
}

static void unpack(const struct rec_layout *l, const unsigned char *r, struct vgq_contrib *c,
                   struct vx_value *keys)
{
	memcpy(&c->b, r, sizeof c->b);
	memcpy(&c->e, r + 8, sizeof c->e);
	memcpy(&c->arg, r + 16, sizeof c->arg);
	memcpy(keys, r + 16 + sizeof c->arg, l->nby * sizeof *keys);
	c->key = keys;
}

/* Partition q's groups aggregated into the relation; false when the statement stops. */
static bool aggregate_partition(struct vgq_session *s, struct bagg *a, struct vgq_parts *pt,
                                const struct rec_layout *l, size_t q)
{
	size_t n = pt->count[q], nby = l->nby;
	if (!n)
		return true;
	size_t bytes = n * (sizeof(struct vgq_contrib) + nby * sizeof(struct vx_value) + l->size);
	if (!vgq_mem_take(s, "the aggregate's group", bytes))
		return false;
	unsigned char *raw = vgq_xcalloc(n, l->size);
	struct vgq_contrib *c = vgq_xcalloc(n, sizeof *c);
	struct vx_value *keys = vgq_xcalloc(n * nby + 1, sizeof *keys);
	bool ok = vgq_parts_read_all(pt, q, raw);
	if (ok) {
		for (size_t i = 0; i < n; i++)
			unpack(l, raw + i * l->size, &c[i], &keys[i * nby]);
		free(raw);
		raw = NULL;
		vgq_agg_add(s, a, c, n);
	}
	free(raw);
	free(c);
	free(keys);
	vgq_mem_give(s, bytes);
	return ok;
}

size_t vgq_agg_spill(struct vgq_session *s, struct bagg *a, struct xrows *in)
{
	size_t nby = a->nby, w = in->width;
	struct rec_layout l = {nby, 16 + (1 + nby) * sizeof(struct vx_value)};
	struct vgq_contrib c;
	struct vx_value keys[nby + 1];
	/* the contributions counted over the finest partitions: the fewest that fit */
	uint64_t *fine = vgq_xcalloc((size_t)1 << VGQ_PARTS_FINE_LOG2, sizeof *fine);
	uint64_t total = 0;
	for (size_t i = 0; i < in->n; i++)
		if (vgq_contrib_of(a, in->rows + i * w, &c, keys)) {
			fine[group_hash(keys, nby) >> (64 - VGQ_PARTS_FINE_LOG2)]++;
			total++;
		}
	if (!total) { /* nothing qualifies */
		free(fine);
		vgq_rows_free(in);
		vgq_agg_finish(s, a, NULL, 0);
		return 0;
	}
	vgq_rows_spill(in); /* the room it held is the partitions' (mapped, it reads on) */
	size_t room = vgq_mem_room(s) + in->charged; /* once the bindings are written */
	size_t worst;
	unsigned lg = vgq_parts_choose(fine, part_bytes, nby, l.size, room, &worst);
	free(fine);
	if (worst > room) { /* no cut fits: one group past the budget */
		vgq_rows_free(in);
		return vgq_mem_refuse(s, "the aggregate's group", worst);
	}
	struct vgq_parts pt;
	bool ok = vgq_parts_open(&pt, s, "the aggregate's partitions", (size_t)1 << lg, l.size);
	vgq_mem_note_spill(s, (size_t)1 << lg, 0);
	unsigned char *r = vgq_xcalloc(1, l.size);
	for (size_t i = 0; ok && i < in->n; i++)
		if (vgq_contrib_of(a, in->rows + i * w, &c, keys)) {
			pack(&l, r, &c, keys);
			ok = vgq_parts_put(&pt, group_hash(keys, nby) >> (64 - lg), r);
		}
	free(r);
	vgq_rows_free(in);
	ok = ok && vgq_parts_seal(&pt);
	for (size_t q = 0; ok && q < pt.nparts; q++)
		ok = aggregate_partition(s, a, &pt, &l, q) && !vgq_fault_met(&s->fault);
	vgq_parts_close(&pt);
	if (ok)
		vgq_agg_end(a);
	return (size_t)1 << lg;
}
