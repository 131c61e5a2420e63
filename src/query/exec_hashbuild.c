/* The hash tables of hash joins and semi-joins built by the workers, partitioned as
 * morsel-driven engines build them: the table's buckets are cut into ranges
 * (partitions), the entries grouped by the partition of their bucket with their order
 * kept (a count and a scatter, each over pieces of the entries), and each partition is
 * then filled by one worker in entry order. A bucket belongs to one partition, so its
 * chain is the serial build's whatever the thread count; workers write disjoint buckets
 * and entries. */
#include <stdlib.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"

#define PARTS_LOG2 6 /* 64 partitions: several per worker, for balance */

struct part_job {
	const uint64_t *hash;
	const bool *keep;
	size_t n, grain, nparts, *off; /* off: piece-major, nparts per piece */
	unsigned shift;
	uint32_t *entry;
};

/* Pieces [lo, hi) of the entries: each piece's entries counted per partition (its row
 * of off), or, once off holds where each piece's entries of each partition go, put there. */
static void pass(struct part_job *j, size_t lo, size_t hi, bool scatter)
{
	size_t mask = ((size_t)j->nparts << j->shift) - 1;
	for (size_t c = lo; c < hi; c++) {
		size_t *at = j->off + c * j->nparts;
		size_t end = (c + 1) * j->grain < j->n ? (c + 1) * j->grain : j->n;
		for (size_t i = c * j->grain; i < end; i++) {
			if (!j->keep[i])
				continue;
			size_t p = (size_t)((j->hash[i] & mask) >> j->shift);
			if (scatter)
				j->entry[at[p]++] = (uint32_t)i;
			else
				at[p]++;
		}
	}
}

static void count_piece(void *p, size_t lo, size_t hi)
{
	pass(p, lo, hi, false);
}

static void scatter_piece(void *p, size_t lo, size_t hi)
{
	pass(p, lo, hi, true);
}

void vgq_hash_partition(struct vgq_session *s, const struct xhash *t, const uint64_t *hash,
                        const bool *keep, size_t n, struct vgq_hash_parts *out)
{
	size_t buckets = t->mask + 1;
	unsigned log2b = 0;
	while (((size_t)1 << log2b) < buckets)
		log2b++;
	size_t nparts = vgq_session_threads(s) < 2 ? 1 : (size_t)1 << PARTS_LOG2;
	if (nparts > buckets)
		nparts = buckets;
	unsigned log2p = 0;
	while (((size_t)1 << log2p) < nparts)
		log2p++;
	out->nparts = nparts;
	out->start = vgq_xcalloc(nparts + 1, sizeof *out->start);
	out->entry = vgq_xcalloc(n ? n : 1, sizeof *out->entry);
	if (nparts == 1) { /* one thread: the entries in order */
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (keep[i])
				out->entry[k++] = (uint32_t)i;
		out->start[1] = k;
		return;
	}
	struct part_job j = {hash, keep,          n,         vgq_grain(s, n, 1024, 65536), nparts,
	                     NULL, log2b - log2p, out->entry};
	size_t npieces = (n + j.grain - 1) / j.grain;
	j.off = vgq_xcalloc(npieces * nparts + 1, sizeof *j.off);
	vgq_parallel_for(s, npieces, 1, count_piece, &j);
	/* counts to offsets: partition by partition, piece by piece within each */
	size_t pos = 0;
	for (size_t p = 0; p < nparts; p++) {
		out->start[p] = pos;
		for (size_t c = 0; c < npieces; c++) {
			size_t cnt = j.off[c * nparts + p];
			j.off[c * nparts + p] = pos;
			pos += cnt;
		}
	}
	out->start[nparts] = pos;
	vgq_parallel_for(s, npieces, 1, scatter_piece, &j);
	free(j.off);
}

void vgq_hash_parts_free(struct vgq_hash_parts *p)
{
	free(p->entry);
	free(p->start);
}
