/* The hash join past the query's memory budget: a Grace hash join (Kitsuregawa et al.
 * 1983; DuckDB's and PostgreSQL's partitioned hash joins). When the build side's table
 * does not fit the room the budget has left, both sides are partitioned by the high bits
 * of their keys' hash into spill files (exec_spill_parts.c): the build side's rows, then
 * the probe side's, each with its place in the probe order. Partition by partition the
 * build rows are loaded and hashed as the in-memory join hashes them (entry order, so
 * chains and matches come in the same order) and the partition's probe rows probe them;
 * the joined rows go to a third set of partitions with their probe place. Those are read
 * back merged by probe place: a probe binding's matches all lie in one partition, so the
 * join's output is the in-memory join's, binding for binding and in the same order.
 *
 * The number of partitions is the least power of two (up to 4096) whose largest
 * partition, rows and table, fits half the room with its buffers (vgq_parts_choose): counted first
 * over 4096 partitions, so skew is seen before anything is written. When no cut's largest
 * partition fits the room (many rows of one key: equal keys cannot be split), the
 * statement is refused, one line naming the hash join's partition. Null keys match nothing and are
 * not written. The spilled join runs on one thread (its pipeline is drained serially). */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_hash_spill.h"
#include "query/exec_node.h"
#include "query/exec_spill_parts.h"

struct vgq_hash_spill {
	struct vgq_parts out;        /* joined rows: probe place, then the binding */
	struct vgq_parts_reader *rd; /* per partition, merging */
	uint64_t *seq;               /* per partition: its current record's probe place */
	const unsigned char **cur;   /* per partition: its current record (NULL: done) */
	uint32_t *heap;              /* partitions with a record, least place first */
	size_t nheap, nparts, charged;
};

static size_t part_bytes(uint64_t rows, size_t w)
{
	return rows * w * sizeof(uint32_t) + vgq_xhash_bytes(rows);
}

static size_t part_of(uint64_t h, unsigned lg)
{
	return (size_t)(h >> (64 - lg));
}

/* Partition q: its build rows loaded and hashed, its probe rows joined to them, the
 * joined rows to `out` with their probe place. False when the statement stops. */
static bool join_partition(struct xnode *n, struct vgq_parts *rp, struct vgq_parts *lp, size_t q,
                           struct vgq_parts *out)
{
	struct vgq_session *s = n->cx->s;
	const struct bstmt *b = n->cx->b;
	const struct pnode *p = n->p;
	size_t w = n->cx->width, nk = p->nkeys, nr = rp->count[q];
	if (!lp->count[q] || !nr)
		return true;
	size_t rowbytes = nr * w * sizeof(uint32_t);
	if (!vgq_mem_take(s, "the hash join's partition", rowbytes))
		return false;
	uint32_t *rows = vgq_xcalloc(nr * w, sizeof *rows);
	struct xhash t = {0};
	bool ok = vgq_parts_read_all(rp, q, rows) &&
	          vgq_xhash_init(&t, nr, s, "the hash join's partition");
	struct vx_value kl[nk + 1], kr[nk + 1];
	uint64_t h, hy;
	if (ok) {
		for (size_t e = 0; e < nr; e++) {
			vgq_keys_of(b, p->rkeys, nk, rows + e * w, kr, &h);
			vgq_xhash_add(&t, (uint32_t)e, h);
		}
		vgq_note_state(s, nr);
	}
	struct vgq_parts_reader rd;
	vgq_parts_reader_init(&rd, lp, q);
	uint64_t lvars = n->l->p->vars;
	unsigned char *rec = vgq_xcalloc(out->rec, 1);
	uint32_t *row = (uint32_t *)(void *)(rec + sizeof(uint64_t));
	const unsigned char *x;
	while (ok && (x = vgq_parts_next(&rd))) {
		uint32_t xrow[w];
		memcpy(xrow, x + sizeof(uint64_t), w * sizeof *xrow);
		vgq_keys_of(b, p->lkeys, nk, xrow, kl, &h);
		for (uint32_t c = t.head[h & t.mask]; c && ok; c = t.next[c - 1]) {
			uint32_t e = c - 1;
			if (t.hash[e] != h)
				continue;
			const uint32_t *y = rows + (size_t)e * w;
			vgq_keys_of(b, p->rkeys, nk, y, kr, &hy);
			if (!vgq_keys_equal(kl, kr, nk))
				continue;
			vgq_merge_row(w, lvars, xrow, y, row);
			if (!vgq_node_passes(n, row))
				continue;
			if (!vgq_node_emit_ok(n))
				ok = false;
			memcpy(rec, x, sizeof(uint64_t));
			ok = ok && vgq_parts_put(out, q, rec);
		}
		ok = ok && !vgq_overflowed(n->cx);
	}
	ok = ok && !lp->failed;
	vgq_parts_reader_free(&rd);
	free(rec);
	if (t.head)
		vgq_xhash_free(&t);
	free(rows);
	vgq_mem_give(s, rowbytes);
	return ok;
}

static void sift_down(struct vgq_hash_spill *sp, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < sp->nheap && sp->seq[sp->heap[l]] < sp->seq[sp->heap[m]])
			m = l;
		if (r < sp->nheap && sp->seq[sp->heap[r]] < sp->seq[sp->heap[m]])
			m = r;
		if (m == i)
			return;
		uint32_t tmp = sp->heap[i];
		sp->heap[i] = sp->heap[m];
		sp->heap[m] = tmp;
		i = m;
	}
}

/* Partition q's next joined row, or q leaves the merge. */
static void advance(struct vgq_hash_spill *sp, uint32_t q)
{
	sp->cur[q] = vgq_parts_next(&sp->rd[q]);
	if (sp->cur[q])
		memcpy(&sp->seq[q], sp->cur[q], sizeof sp->seq[q]);
}

/* The merge of the joined partitions by probe place, ready to read. */
static bool start_merge(struct vgq_hash_spill *sp, struct vgq_session *s)
{
	size_t np = sp->nparts;
	sp->charged = np * vgq_parts_chunk_bytes(&sp->out);
	if (!vgq_mem_take(s, "the hash join's partitions", sp->charged)) {
		sp->charged = 0;
		return false;
	}
	sp->rd = vgq_xcalloc(np, sizeof *sp->rd);
	sp->seq = vgq_xcalloc(np, sizeof *sp->seq);
	sp->cur = vgq_xcalloc(np, sizeof *sp->cur);
	sp->heap = vgq_xcalloc(np, sizeof *sp->heap);
	for (uint32_t q = 0; q < np; q++) {
		vgq_parts_reader_init(&sp->rd[q], &sp->out, q);
		advance(sp, q);
		if (sp->cur[q])
			sp->heap[sp->nheap++] = q;
	}
	for (size_t i = sp->nheap / 2; i-- > 0;)
		sift_down(sp, i);
	return !sp->out.failed;
}

struct vgq_hash_spill *vgq_hash_spill_run(struct xnode *n, struct xrows *right)
{
	struct vgq_session *s = n->cx->s;
	const struct bstmt *b = n->cx->b;
	const struct pnode *p = n->p;
	size_t w = n->cx->width, nk = p->nkeys, rec = sizeof(uint64_t) + w * sizeof(uint32_t);
	struct vx_value kv[nk + 1];
	uint64_t h;
	struct vgq_hash_spill *sp = vgq_xcalloc(1, sizeof *sp);
	sp->out.fd = -1;
	/* the build side counted over the finest partitions: the fewest that fit */
	uint64_t *fine = vgq_xcalloc((size_t)1 << VGQ_PARTS_FINE_LOG2, sizeof *fine);
	for (size_t i = 0; i < right->n; i++)
		if (vgq_keys_of(b, p->rkeys, nk, right->rows + i * w, kv, &h))
			fine[part_of(h, VGQ_PARTS_FINE_LOG2)]++;
	vgq_rows_spill(right); /* the room it held is the partitions' (mapped, it reads on) */
	size_t room = vgq_mem_room(s) + right->charged; /* once the build rows are written */
	size_t worst;
	unsigned lg = vgq_parts_choose(fine, part_bytes, w, w * sizeof(uint32_t), room, &worst);
	free(fine);
	sp->nparts = (size_t)1 << lg;
	n->spilled_parts = (uint32_t)sp->nparts;
	struct vgq_parts rp = {.fd = -1}, lp = {.fd = -1};
	bool ok = true;
	if (worst > room) /* no cut fits: equal keys past the budget */
		ok = vgq_mem_refuse(s, "the hash join's partition", worst);
	ok = ok &&
	     vgq_parts_open(&rp, s, "the hash join's partitions", sp->nparts, w * sizeof(uint32_t));
	for (size_t i = 0; ok && i < right->n; i++)
		if (vgq_keys_of(b, p->rkeys, nk, right->rows + i * w, kv, &h))
			ok = vgq_parts_put(&rp, part_of(h, lg), right->rows + i * w);
	vgq_rows_free(right);
	ok = ok && vgq_parts_seal(&rp) &&
	     vgq_parts_open(&lp, s, "the hash join's partitions", sp->nparts, rec);
	/* the probe side, in its order, each binding with its place */
	uint32_t *batch = vgq_batch_alloc(n->cx);
	unsigned char *r = vgq_xcalloc(rec, 1);
	uint64_t place = 0;
	for (size_t k; ok && (k = vgq_node_next(n->l, batch));)
		for (size_t i = 0; ok && i < k; i++, place++) {
			if (!vgq_keys_of(b, p->lkeys, nk, batch + i * w, kv, &h))
				continue;
			memcpy(r, &place, sizeof place);
			memcpy(r + sizeof place, batch + i * w, w * sizeof *batch);
			ok = vgq_parts_put(&lp, part_of(h, lg), r);
		}
	free(batch);
	free(r);
	ok = ok && !vgq_overflowed(n->cx) && vgq_parts_seal(&lp) &&
	     vgq_parts_open(&sp->out, s, "the hash join's partitions", sp->nparts, rec);
	for (size_t q = 0; ok && q < sp->nparts; q++)
		ok = join_partition(n, &rp, &lp, q, &sp->out);
	vgq_parts_close(&rp);
	vgq_parts_close(&lp);
	ok = ok && vgq_parts_seal(&sp->out) && start_merge(sp, s);
	if (!ok)
		sp->nheap = 0; /* the statement stops: nothing to read */
	return sp;
}

size_t vgq_hash_spill_next(struct vgq_hash_spill *sp, size_t width, uint32_t *out)
{
	size_t k = 0;
	while (k < VGQ_BATCH && sp->nheap) {
		uint32_t q = sp->heap[0];
		memcpy(out + k * width, sp->cur[q] + sizeof(uint64_t), width * sizeof *out);
		k++;
		advance(sp, q);
		if (!sp->cur[q])
			sp->heap[0] = sp->heap[--sp->nheap];
		sift_down(sp, 0);
	}
	return k;
}

void vgq_hash_spill_free(struct vgq_hash_spill *sp)
{
	if (!sp)
		return;
	for (size_t q = 0; sp->rd && q < sp->nparts; q++)
		vgq_parts_reader_free(&sp->rd[q]);
	struct vgq_session *s = sp->out.s;
	vgq_parts_close(&sp->out);
	if (sp->charged && s)
		vgq_mem_give(s, sp->charged);
	free(sp->rd);
	free(sp->seq);
	free(sp->cur);
	free(sp->heap);
	free(sp);
}
