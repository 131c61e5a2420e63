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
 * partition, rows and table, fits half of each worker's share of the room with its
 * buffers (vgq_parts_choose): counted first over 4096 partitions, so skew is seen before
 * anything is written. Null keys match nothing and are not written.
 *
 * The partitions are joined by the session's workers (as many as leave room for the
 * largest partition beside their files' buffers), each one partition at a time into its
 * own file of joined rows, sharing the budget: a worker waits while the partition it
 * claimed does not fit beside those the others hold, so no more partitions are in memory
 * at once than the budget allows (the rows and table of each taken from it before they
 * are loaded). The merge by probe place makes the output the same at every thread count.
 *
 * A partition that does not fit even alone (its share of the hash space holds too many
 * rows: skewed keys, or more rows than one level of partitions can cut finely enough
 * within the buffers' room) is split again (Grace's recursive partitioning) by another
 * hash of its keys, while the other workers wait: its build rows counted over 4096 parts
 * of the new hash and cut as above, its probe rows alike, its parts joined in turn (split
 * again where they still do not fit, SPLIT_DEPTH_MAX levels at most) and their joined rows
 * merged by probe place into the partition's. Rows of one key value cannot be split: a
 * partition whose build rows all have one hash is refused, one line naming the key's
 * relation and its rows against the budget (engine.c adds the budget), as is one past the
 * depth limit; the budget is never passed (the one exception: a file's chain of chunks
 * growing while the workers join, a few KiB, is taken outside the gate and refused past
 * it). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "query/engine_internal.h"
#include "query/exec_hash_spill.h"
#include "query/exec_node.h"
#include "query/exec_spill_parts.h"
#include "tquel/arena.h"

#define SPLIT_DEPTH_MAX 4 /* repartitions of a partition, one inside another, at most */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Records of several partitions (readers) merged by their leading probe place. A probe
 * binding's joined rows all lie in one partition, in order, so places never tie across
 * readers. */
struct place_merge {
	struct vgq_parts_reader *rd;
	uint64_t *seq;             /* per reader: its current record's probe place */
	const unsigned char **cur; /* per reader: its current record (NULL: done) */
	uint32_t *heap;            /* readers with a record, least place first */
	size_t n, nheap;
};

struct vgq_hash_spill {
	struct vgq_parts *outs; /* per worker: the joined rows of the partitions it joined */
	size_t nouts, nparts, charged;
	struct place_merge merge;
};

/* The partitions joined by the workers (join_work), sharing the budget (gate_enter). */
struct join_job {
	struct xnode *n;
	struct vgq_session *s;
	struct vgq_parts *rp, *lp, *outs;
	uint32_t *owner; /* per partition: the worker whose outs hold its joined rows */
	size_t nparts, next, nw;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned active;  /* partitions in memory */
	size_t inuse;     /* their bytes */
	bool exclusive;   /* a worker splits a partition: the others wait */
	bool stop;        /* the statement stops (atomic) */
	uint32_t splits;  /* partitions made by repartitioning (atomic) */
	uint32_t depth;   /* the deepest repartition (atomic) */
	const char *what; /* a one-key refusal's words (arena) */
};

static size_t part_bytes(uint64_t rows, size_t w)
{
	return rows * w * sizeof(uint32_t) + vgq_xhash_bytes(rows);
}

static size_t part_of(uint64_t h, unsigned lg)
{
	return (size_t)(h >> (64 - lg));
}

/* The hash of a repartition at `depth` (1..): the keys' hash mixed with another seed, so
 * rows of different keys that shared the top bits part ways. */
static uint64_t rehash(uint64_t h, unsigned depth)
{
	return vgq_mix(h ^ (0x9e3779b97f4a7c15ull * depth));
}

/* ---- merging by probe place ---- */

static void sift_down(struct place_merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, k = i;
		if (l < m->nheap && m->seq[m->heap[l]] < m->seq[m->heap[k]])
			k = l;
		if (r < m->nheap && m->seq[m->heap[r]] < m->seq[m->heap[k]])
			k = r;
		if (k == i)
			return;
		uint32_t tmp = m->heap[i];
		m->heap[i] = m->heap[k];
		m->heap[k] = tmp;
		i = k;
	}
}

/* Reader i's next record, or i leaves the merge. */
static void advance(struct place_merge *m, uint32_t i)
{
	m->cur[i] = vgq_parts_next(&m->rd[i]);
	if (m->cur[i])
		memcpy(&m->seq[i], m->cur[i], sizeof m->seq[i]);
}

/* n readers: partition q of parts[i] for reader i = q (parts NULL: pt for every one). */
static void merge_start(struct place_merge *m, struct vgq_parts *const *parts,
                        const struct vgq_parts *pt, size_t n)
{
	m->n = n;
	m->nheap = 0;
	m->rd = vgq_xcalloc(n ? n : 1, sizeof *m->rd);
	m->seq = vgq_xcalloc(n ? n : 1, sizeof *m->seq);
	m->cur = vgq_xcalloc(n ? n : 1, sizeof *m->cur);
	m->heap = vgq_xcalloc(n ? n : 1, sizeof *m->heap);
	for (uint32_t q = 0; q < n; q++) {
		vgq_parts_reader_init(&m->rd[q], parts ? parts[q] : pt, q);
		advance(m, q);
		if (m->cur[q])
			m->heap[m->nheap++] = q;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
}

/* The least record's binding (`skip` bytes in) to out, len bytes; false at the end. */
static bool merge_pop(struct place_merge *m, void *out, size_t skip, size_t len)
{
	if (!m->nheap)
		return false;
	uint32_t q = m->heap[0];
	memcpy(out, m->cur[q] + skip, len);
	advance(m, q);
	if (!m->cur[q])
		m->heap[0] = m->heap[--m->nheap];
	sift_down(m, 0);
	return true;
}

static void merge_free(struct place_merge *m)
{
	for (size_t q = 0; m->rd && q < m->n; q++)
		vgq_parts_reader_free(&m->rd[q]);
	free(m->rd);
	free(m->seq);
	free(m->cur);
	free(m->heap);
	memset(m, 0, sizeof *m);
}

/* ---- the budget shared by the workers ---- */

static bool stopped(struct join_job *j)
{
	return __atomic_load_n(&j->stop, __ATOMIC_RELAXED) || vgq_mem_refused(j->s) ||
	       vgq_overflowed(j->n->cx);
}

/* The bytes a partition of nr build rows holds while it is joined: its rows, their
 * table, and the buffer its probe rows are read through. */
static size_t held_bytes(const struct join_job *j, const struct vgq_parts *lp, size_t nr)
{
	return part_bytes(nr, j->n->cx->width) + vgq_parts_chunk_bytes(lp);
}

/* A partition of nr build rows: its rows' and reader's bytes taken and its table made,
 * or false (the budget has not the room now; nothing taken). The test and the takes are
 * made under the job's lock (depth 0) or while this worker splits alone (exclusive), so
 * nothing else of the join takes meanwhile (but a file's chain of chunks growing: a
 * few KiB, past the budget a refusal). */
static bool take_partition(struct join_job *j, const struct vgq_parts *lp, size_t nr,
                           struct xhash *t)
{
	struct vgq_session *s = j->s;
	size_t tbytes = vgq_xhash_bytes(nr), need = held_bytes(j, lp, nr);
	if (!vgq_mem_try(s, need))
		return false;
	vgq_mem_give(s, tbytes);
	if (vgq_xhash_init(t, nr, s, "the hash join's partition"))
		return true;
	vgq_xhash_free(t); /* refused: the statement stops */
	vgq_mem_give(s, need - tbytes);
	return false;
}

enum gate { GATE_JOIN, GATE_SPLIT, GATE_STOP };

/* Waits until partition's nr build rows fit beside the partitions the other workers hold
 * (GATE_JOIN: taken, table made), or, when they could not fit even alone, until no other
 * is in memory (GATE_SPLIT: this worker splits it alone). Inside a split (depth > 0) the
 * worker is alone already. */
static enum gate gate_enter(struct join_job *j, const struct vgq_parts *lp, size_t nr,
                            unsigned depth, struct xhash *t)
{
	if (depth)
		return take_partition(j, lp, nr, t) ? GATE_JOIN
		       : stopped(j)                 ? GATE_STOP
		                                    : GATE_SPLIT;
	size_t need = held_bytes(j, lp, nr);
	enum gate g;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		if (stopped(j)) {
			g = GATE_STOP;
			break;
		}
		if (!j->exclusive) {
			if (need > vgq_mem_room(j->s) + j->inuse) { /* not even alone */
				if (!j->active) {
					j->exclusive = true;
					g = GATE_SPLIT;
					break;
				}
			} else if (take_partition(j, lp, nr, t)) {
				j->active++;
				j->inuse += need;
				g = GATE_JOIN;
				break;
			} else if (stopped(j)) {
				g = GATE_STOP;
				break;
			}
		}
		pthread_cond_wait(&j->cv, &j->mu);
	}
	pthread_mutex_unlock(&j->mu);
	return g;
}

static void gate_leave(struct join_job *j, size_t need, unsigned depth, enum gate g)
{
	if (depth || g == GATE_STOP)
		return;
	pthread_mutex_lock(&j->mu);
	if (g == GATE_SPLIT) {
		j->exclusive = false;
	} else {
		j->active--;
		j->inuse -= need;
	}
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Wakes the waiting workers: the statement stops. */
static void stop_all(struct join_job *j)
{
	pthread_mutex_lock(&j->mu);
	__atomic_store_n(&j->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Counts one joined binding against the join's limit (workers share the count). */
static bool emit_ok(struct xnode *n)
{
	uint64_t e = __atomic_add_fetch(&n->emitted, 1, __ATOMIC_RELAXED);
	if (n->cx->limit && e > n->cx->limit) {
		vgq_set_overflow(n->cx);
		return false;
	}
	return true;
}

/* ---- joining a partition ---- */

static bool split_partition(struct join_job *j, struct vgq_parts *rp, struct vgq_parts *lp,
                            size_t q, unsigned depth, struct vgq_parts *out, size_t outq);

/* Partition q's build rows (table t made for them) loaded and hashed, its probe rows
 * joined to them, the joined rows to out's partition outq with their probe place. */
static bool join_loaded(struct join_job *j, struct vgq_parts *rp, struct vgq_parts *lp, size_t q,
                        struct xhash *t, struct vgq_parts *out, size_t outq)
{
	struct xnode *n = j->n;
	const struct bstmt *b = n->cx->b;
	const struct pnode *p = n->p;
	size_t w = n->cx->width, nk = p->nkeys, nr = rp->count[q];
	uint32_t *rows = vgq_xcalloc(nr * w, sizeof *rows);
	bool ok = vgq_parts_read_all(rp, q, rows);
	struct vx_value kl[nk + 1], kr[nk + 1];
	uint64_t h, hy;
	for (size_t e = 0; ok && e < nr; e++) {
		vgq_keys_of(b, p->rkeys, nk, rows + e * w, kr, &h);
		vgq_xhash_add(t, (uint32_t)e, h);
	}
	vgq_note_state(j->s, nr);
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
		for (uint32_t c = t->head[h & t->mask]; c && ok; c = t->next[c - 1]) {
			uint32_t e = c - 1;
			if (t->hash[e] != h)
				continue;
			const uint32_t *y = rows + (size_t)e * w;
			vgq_keys_of(b, p->rkeys, nk, y, kr, &hy);
			if (!vgq_keys_equal(kl, kr, nk))
				continue;
			vgq_merge_row(w, lvars, xrow, y, row);
			if (!vgq_node_passes(n, row))
				continue;
			memcpy(rec, x, sizeof(uint64_t));
			ok = emit_ok(n) && vgq_parts_put(out, outq, rec);
		}
		ok = ok && !stopped(j);
	}
	ok = ok && !lp->failed;
	vgq_parts_reader_free(&rd);
	free(rec);
	free(rows);
	return ok;
}

/* Partition q of rp and lp joined into out's partition outq: in memory when it fits
 * (beside the other workers' partitions), else split (depth: repartitions around it). */
static bool join_partition(struct join_job *j, struct vgq_parts *rp, struct vgq_parts *lp, size_t q,
                           unsigned depth, struct vgq_parts *out, size_t outq)
{
	size_t nr = rp->count[q];
	if (!lp->count[q] || !nr)
		return true;
	struct xhash t = {0};
	size_t need = held_bytes(j, lp, nr);
	enum gate g = gate_enter(j, lp, nr, depth, &t);
	bool ok = g != GATE_STOP;
	if (g == GATE_SPLIT) {
		ok = split_partition(j, rp, lp, q, depth + 1, out, outq);
	} else if (g == GATE_JOIN) {
		ok = join_loaded(j, rp, lp, q, &t, out, outq);
		vgq_xhash_free(&t);
		vgq_mem_give(j->s, need - vgq_xhash_bytes(nr));
	}
	gate_leave(j, need, depth, g);
	return ok;
}

/* The refusal of a partition of one key value: nr rows of the build side's relation. */
static bool refuse_one_key(struct join_job *j, size_t nr)
{
	const struct bstmt *b = j->n->cx->b;
	const struct pnode *p = j->n->p;
	uint64_t vars = p->nkeys ? p->rkeys[0]->vars : 0;
	int v = vars ? __builtin_ctzll(vars) : -1;
	char words[512];
	snprintf(words, sizeof words,
	         "the hash join's partition (one key value: %zu rows of %s over %s; equal keys "
	         "cannot be split)",
	         nr, v >= 0 ? b->vars[v].name : "its build side",
	         v >= 0 && b->vars[v].rel ? b->vars[v].rel->name : "a relation");
	pthread_mutex_lock(&j->mu); /* the arena is the session's */
	j->what = tquel_strndup(j->s->arena, words, strlen(words));
	pthread_mutex_unlock(&j->mu);
	return vgq_mem_refuse(j->s, j->what, part_bytes(nr, j->n->cx->width));
}

static void note_max(uint32_t *at, uint32_t v)
{
	uint32_t cur = __atomic_load_n(at, __ATOMIC_RELAXED);
	while (v > cur &&
	       !__atomic_compare_exchange_n(at, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Partition q, past the room even alone, repartitioned by rehash(depth): its build rows
 * counted (one hash for all: one key, refused), then both sides cut as the first level
 * is, the parts joined in turn and their joined rows merged by probe place into out's
 * partition outq. */
static bool split_partition(struct join_job *j, struct vgq_parts *rp, struct vgq_parts *lp,
                            size_t q, unsigned depth, struct vgq_parts *out, size_t outq)
{
	struct vgq_session *s = j->s;
	const struct bstmt *b = j->n->cx->b;
	const struct pnode *p = j->n->p;
	size_t w = j->n->cx->width, nk = p->nkeys, nr = rp->count[q];
	size_t rec = sizeof(uint64_t) + w * sizeof(uint32_t);
	if (depth > SPLIT_DEPTH_MAX)
		return vgq_mem_refuse(s,
		                      "the hash join's partition (past the room after " STR(
		                          SPLIT_DEPTH_MAX) " splits)",
		                      part_bytes(nr, w));
	note_max(&j->depth, depth);
	struct vx_value kv[nk + 1];
	uint64_t h, first = 0;
	bool one = true;
	/* the build rows counted over the finest cut of the new hash (a reader's buffer, one
	 * chunk of either side, taken while the sides are read) */
	size_t rdbytes = vgq_parts_chunk_bytes(rp) > vgq_parts_chunk_bytes(lp)
	                     ? vgq_parts_chunk_bytes(rp)
	                     : vgq_parts_chunk_bytes(lp);
	if (!vgq_mem_take(s, "the hash join's partitions", rdbytes))
		return false;
	uint64_t *fine = vgq_xcalloc((size_t)1 << VGQ_PARTS_FINE_LOG2, sizeof *fine);
	struct vgq_parts_reader rd;
	const unsigned char *x;
	vgq_parts_reader_init(&rd, rp, q);
	for (size_t i = 0; (x = vgq_parts_next(&rd)); i++) {
		vgq_keys_of(b, p->rkeys, nk, (const uint32_t *)(const void *)x, kv, &h);
		one = one && (!i || h == first);
		first = i ? first : h;
		fine[part_of(rehash(h, depth), VGQ_PARTS_FINE_LOG2)]++;
	}
	vgq_parts_reader_free(&rd);
	bool ok = !rp->failed;
	if (ok && one) {
		vgq_mem_give(s, rdbytes);
		free(fine);
		return refuse_one_key(j, nr);
	}
	size_t worst;
	unsigned lg =
	    vgq_parts_choose(fine, part_bytes, w, w * sizeof(uint32_t), vgq_mem_room(s), &worst);
	free(fine);
	size_t nsub = (size_t)1 << lg;
	__atomic_add_fetch(&j->splits, (uint32_t)nsub, __ATOMIC_RELAXED);
	struct vgq_parts srp = {.fd = -1}, slp = {.fd = -1}, sout = {.fd = -1};
	ok =
	    ok && vgq_parts_open(&srp, s, "the hash join's partitions", nsub, w * sizeof(uint32_t));
	vgq_parts_reader_init(&rd, rp, q);
	while (ok && (x = vgq_parts_next(&rd))) {
		vgq_keys_of(b, p->rkeys, nk, (const uint32_t *)(const void *)x, kv, &h);
		ok = vgq_parts_put(&srp, part_of(rehash(h, depth), lg), x);
	}
	vgq_parts_reader_free(&rd);
	ok = ok && !rp->failed && vgq_parts_seal(&srp) &&
	     vgq_parts_open(&slp, s, "the hash join's partitions", nsub, rec);
	vgq_parts_reader_init(&rd, lp, q);
	while (ok && (x = vgq_parts_next(&rd))) {
		vgq_keys_of(b, p->lkeys, nk, (const uint32_t *)(const void *)(x + sizeof(uint64_t)),
		            kv, &h);
		ok = vgq_parts_put(&slp, part_of(rehash(h, depth), lg), x);
	}
	vgq_parts_reader_free(&rd);
	vgq_mem_give(s, rdbytes);
	ok = ok && !lp->failed && vgq_parts_seal(&slp) &&
	     vgq_parts_open(&sout, s, "the hash join's partitions", nsub, rec);
	for (size_t k = 0; ok && k < nsub; k++)
		ok = join_partition(j, &srp, &slp, k, depth, &sout, k);
	vgq_parts_close(&srp);
	vgq_parts_close(&slp);
	/* the parts' joined rows, merged by probe place, are the partition's */
	size_t mbytes = nsub * vgq_parts_chunk_bytes(&sout);
	ok = ok && vgq_parts_seal(&sout) && vgq_mem_take(s, "the hash join's partitions", mbytes);
	if (ok) {
		struct place_merge m;
		unsigned char *r = vgq_xcalloc(rec, 1);
		merge_start(&m, NULL, &sout, nsub);
		while (ok && merge_pop(&m, r, 0, rec))
			ok = vgq_parts_put(out, outq, r);
		ok = ok && !sout.failed;
		merge_free(&m);
		free(r);
		vgq_mem_give(s, mbytes);
	}
	vgq_parts_close(&sout);
	return ok;
}

/* A worker: partitions claimed one at a time, joined into its own file. */
static void join_work(void *ctx, unsigned w)
{
	struct join_job *j = ctx;
	if (w >= j->nw)
		return;
	for (;;) {
		size_t q = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (q >= j->nparts || stopped(j))
			return;
		j->owner[q] = w;
		if (!join_partition(j, j->rp, j->lp, q, 0, &j->outs[w], q)) {
			stop_all(j);
			return;
		}
	}
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
	/* the build side counted over the finest partitions: the fewest that fit */
	uint64_t *fine = vgq_xcalloc((size_t)1 << VGQ_PARTS_FINE_LOG2, sizeof *fine);
	for (size_t i = 0; i < right->n; i++)
		if (vgq_keys_of(b, p->rkeys, nk, right->rows + i * w, kv, &h))
			fine[part_of(h, VGQ_PARTS_FINE_LOG2)]++;
	vgq_rows_spill(right); /* the room it held is the partitions' (mapped, it reads on) */
	size_t room = vgq_mem_room(s) + right->charged; /* once the build rows are written */
	/* each worker's share, so that as many partitions as workers fit at once */
	size_t threads = vgq_session_threads(s);
	size_t worst; /* past the room: that partition is split again when it is joined */
	unsigned lg =
	    vgq_parts_choose(fine, part_bytes, w, w * sizeof(uint32_t), room / threads, &worst);
	free(fine);
	sp->nparts = (size_t)1 << lg;
	n->spilled_parts = (uint32_t)sp->nparts;
	struct vgq_parts rp = {.fd = -1}, lp = {.fd = -1};
	bool ok =
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
	ok = ok && !vgq_overflowed(n->cx) && vgq_parts_seal(&lp);
	/* the partitions joined by the workers, each into its own file of joined rows */
	/* as many workers as leave room for the largest partition beside their files'
	 * buffers (an eighth of the room each at most): a small budget joins on fewer (how
	 * many partitions are in memory at once is the gate's) */
	size_t most = 0;
	for (size_t q = 0; ok && q < sp->nparts; q++)
		if (rp.count[q] && lp.count[q] && part_bytes(rp.count[q], w) > most)
			most = part_bytes(rp.count[q], w);
	most += ok ? vgq_parts_chunk_bytes(&lp) : 0;
	size_t nw = threads < sp->nparts ? threads : sp->nparts;
	sp->outs = vgq_xcalloc(nw, sizeof *sp->outs);
	for (size_t k = 0; k < nw; k++)
		sp->outs[k].fd = -1;
	for (; ok && sp->nouts < nw; sp->nouts++) { /* (one that fails is counted, to close) */
		if (sp->nouts &&
		    vgq_parts_open_bytes(s, sp->nparts, rec) + most > vgq_mem_room(s) / 8 * 7)
			break;
		ok = vgq_parts_open(&sp->outs[sp->nouts], s, "the hash join's partitions",
		                    sp->nparts, rec);
	}
	struct join_job j = {.n = n,
	                     .s = s,
	                     .rp = &rp,
	                     .lp = &lp,
	                     .outs = sp->outs,
	                     .owner = vgq_xcalloc(sp->nparts, sizeof *j.owner),
	                     .nparts = sp->nparts,
	                     .nw = sp->nouts};
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.cv, NULL);
	if (ok)
		vg_pool_run(s->pool, join_work, &j);
	ok = ok && !stopped(&j);
	pthread_mutex_destroy(&j.mu);
	pthread_cond_destroy(&j.cv);
	n->threads = (unsigned)sp->nouts; /* the workers it was shared among (explain) */
	n->spilled_depth = j.depth;
	vgq_mem_note_spill(s, sp->nparts + j.splits, j.depth);
	vgq_parts_close(&rp);
	vgq_parts_close(&lp);
	for (size_t k = 0; ok && k < sp->nouts; k++)
		ok = vgq_parts_seal(&sp->outs[k]);
	/* the merge of the joined partitions by probe place, ready to read */
	sp->charged = 0;
	for (size_t q = 0; ok && q < sp->nparts; q++)
		sp->charged += vgq_parts_chunk_bytes(&sp->outs[j.owner[q]]);
	if (ok && !vgq_mem_take(s, "the hash join's partitions", sp->charged))
		ok = false;
	if (!ok) {
		sp->charged = 0; /* the statement stops: nothing to read */
	} else {
		struct vgq_parts **of = vgq_xcalloc(sp->nparts, sizeof *of);
		for (size_t q = 0; q < sp->nparts; q++)
			of[q] = &sp->outs[j.owner[q]];
		merge_start(&sp->merge, of, NULL, sp->nparts);
		free(of);
		for (size_t k = 0; k < sp->nouts; k++)
			ok = ok && !sp->outs[k].failed;
		if (!ok)
			sp->merge.nheap = 0;
	}
	free(j.owner);
	return sp;
}

size_t vgq_hash_spill_next(struct vgq_hash_spill *sp, size_t width, uint32_t *out)
{
	size_t k = 0;
	while (k < VGQ_BATCH &&
	       merge_pop(&sp->merge, out + k * width, sizeof(uint64_t), width * sizeof *out))
		k++;
	return k;
}

void vgq_hash_spill_free(struct vgq_hash_spill *sp)
{
	if (!sp)
		return;
	merge_free(&sp->merge);
	struct vgq_session *s = sp->nouts ? sp->outs[0].s : NULL;
	for (size_t k = 0; k < sp->nouts; k++)
		vgq_parts_close(&sp->outs[k]);
	if (sp->charged && s)
		vgq_mem_give(s, sp->charged);
	free(sp->outs);
	free(sp);
}
