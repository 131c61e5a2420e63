/* An aggregate past the query's memory budget: its contributions (a time, an argument and
 * the group's key values, per binding of its own plan) partitioned by the hash of their
 * group's key values into spill files (exec_spill_parts.c), then each partition read back
 * and its groups aggregated as the in-memory aggregate does them (agg.c). A group lies in
 * one partition whole, its contributions in the order of the bindings, so each group's
 * constant intervals are the in-memory aggregate's (sums added up in the same order); the
 * relation holds the groups in the order of their hash (then key) instead of in key
 * order, which no answer depends on (the outer statement joins it and a result is
 * sorted), but which is the same whatever the partitions and threads: a partition is a
 * range of the hash, its groups sorted by hash, the partitions appended in order.
 *
 * As for the hash join, the partitions are counted over 4096 first and the fewest whose
 * largest fits half the room with its buffers are used (vgq_parts_choose; with workers,
 * half of each one's share of the room when a cut fits it, so that as many partitions
 * as workers are in memory at once); when no cut's largest partition fits the room (one
 * group of more contributions than the budget holds: an aggregate without a by-list,
 * say), the statement is refused, one line naming the aggregate's group.
 *
 * The partitions are aggregated by the session's workers (as many as leave room for the
 * largest partition beside their files' buffers; one: in turn on the calling thread),
 * each taking whole partitions one at a time and writing their intervals to its own file,
 * sharing the budget: a worker whose partition does not fit beside those the others hold
 * waits for them (its bytes taken before it is read), so no more partitions are in memory
 * at once than the budget allows. The intervals are then appended to the relation
 * partition by partition, in partition order: the relation is the one-thread one at
 * every thread count (tests/query/parallel_unit.c --spill compares it). */
#include <pthread.h>
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

/* Partition q's contributions read back (c and keys: count[q] and nby each, malloc'd);
 * false on a read error. */
static bool load_partition(struct vgq_parts *pt, const struct rec_layout *l, size_t q,
                           struct vgq_contrib **c, struct vx_value **keys)
{
	size_t n = pt->count[q], nby = l->nby;
	unsigned char *raw = vgq_xcalloc(n, l->size);
	*c = vgq_xcalloc(n, sizeof **c);
	*keys = vgq_xcalloc(n * nby + 1, sizeof **keys);
	bool ok = vgq_parts_read_all(pt, q, raw);
	for (size_t i = 0; ok && i < n; i++)
		unpack(l, raw + i * l->size, &(*c)[i], &(*keys)[i * nby]);
	free(raw);
	return ok;
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
	struct vgq_contrib *c;
	struct vx_value *keys;
	bool ok = load_partition(pt, l, q, &c, &keys);
	if (ok)
		vgq_agg_add(s, a, c, n, true);
	free(c);
	free(keys);
	vgq_mem_give(s, bytes);
	return ok;
}

/* ---- the partitions on the workers ---- */

/* The partitions aggregated by the workers (agg_work), sharing the budget (gate_enter). */
struct agg_job {
	struct vgq_session *s;
	struct bagg *a;
	struct vgq_parts *pt;       /* the contributions by partition */
	struct vgq_parts *outs;     /* per worker: the intervals of the partitions it did */
	uint32_t *owner;            /* per partition: the worker whose outs hold its intervals */
	const struct rec_layout *l; /* a contribution's record */
	size_t orec;                /* an interval's: b, e, the value, the key values */
	size_t nparts, next, nw;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned active; /* partitions in memory */
	size_t inuse;    /* their bytes */
	bool stop;       /* the statement stops (atomic) */
};

/* Where a worker's intervals go: partition q of its file. */
struct interval_out {
	struct vgq_parts *out;
	size_t q, nby;
	unsigned char *rec;
};

static void put_interval(void *ctx, int64_t b, int64_t e, const struct vx_value *key,
                         const struct vx_value *v)
{
	struct interval_out *o = ctx;
	memcpy(o->rec, &b, sizeof b);
	memcpy(o->rec + 8, &e, sizeof e);
	memcpy(o->rec + 16, v, sizeof *v);
	memcpy(o->rec + 16 + sizeof *v, key, o->nby * sizeof *key);
	vgq_parts_put(o->out, o->q, o->rec); /* a failed write: o->out->failed, seen after */
}

static bool stopped(struct agg_job *j)
{
	return __atomic_load_n(&j->stop, __ATOMIC_RELAXED) || vgq_mem_refused(j->s) ||
	       vgq_fault_met(&j->s->fault);
}

/* Waits until `need` bytes (a partition's, part_bytes) fit beside the partitions the other
 * workers hold, and takes them. When they do not fit with no other partition in memory,
 * they are taken as the one-thread aggregate takes them: past the budget, refused. False:
 * the statement stops. */
static bool gate_enter(struct agg_job *j, size_t need)
{
	bool ok;
	pthread_mutex_lock(&j->mu);
	for (;;) {
		if (stopped(j)) {
			ok = false;
			break;
		}
		if (vgq_mem_try(j->s, need)) {
			ok = true;
			break;
		}
		if (!j->active) { /* alone, and still past the room */
			ok = vgq_mem_take(j->s, "the aggregate's group", need);
			break;
		}
		pthread_cond_wait(&j->cv, &j->mu);
	}
	if (ok) {
		j->active++;
		j->inuse += need;
	}
	pthread_mutex_unlock(&j->mu);
	return ok;
}

static void gate_leave(struct agg_job *j, size_t need)
{
	pthread_mutex_lock(&j->mu);
	vgq_mem_give(j->s, need);
	j->active--;
	j->inuse -= need;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* Wakes the waiting workers: the statement stops. */
static void stop_all(struct agg_job *j)
{
	pthread_mutex_lock(&j->mu);
	__atomic_store_n(&j->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
}

/* A worker: partitions claimed one at a time, their groups aggregated on this thread
 * (vgq_workers_run), their intervals to its own file. */
static void agg_work(void *ctx, unsigned w)
{
	struct agg_job *j = ctx;
	if (w >= j->nw)
		return;
	size_t nby = j->l->nby;
	struct interval_out o = {&j->outs[w], 0, nby, vgq_xcalloc(1, j->orec)};
	struct vgq_agg_sink sink = {put_interval, &o};
	for (;;) {
		size_t q = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (q >= j->nparts || stopped(j))
			break;
		j->owner[q] = w;
		size_t n = j->pt->count[q], need = part_bytes(n, nby);
		if (!n)
			continue;
		if (!gate_enter(j, need)) {
			stop_all(j);
			break;
		}
		struct vgq_contrib *c;
		struct vx_value *keys;
		bool ok = load_partition(j->pt, j->l, q, &c, &keys);
		o.q = q;
		if (ok)
			vgq_agg_groups(j->s, j->a, c, n, true, &sink);
		free(c);
		free(keys);
		gate_leave(j, need);
		if (!ok || o.out->failed) {
			stop_all(j);
			break;
		}
	}
	free(o.rec);
}

/* The workers' intervals appended to the relation, partition by partition in partition
 * order; false when the statement stops. */
static bool append_partitions(struct agg_job *j)
{
	struct vgq_session *s = j->s;
	size_t nby = j->l->nby, rdbytes = 0;
	bool ok = true;
	for (size_t k = 0; k < j->nw; k++) {
		ok = vgq_parts_seal(&j->outs[k]) && ok;
		if (vgq_parts_chunk_bytes(&j->outs[k]) > rdbytes)
			rdbytes = vgq_parts_chunk_bytes(&j->outs[k]);
	}
	if (!ok || !vgq_mem_take(s, "the aggregate's partitions", rdbytes))
		return false;
	struct vx_value v, keys[nby + 1];
	int64_t b, e;
	for (size_t q = 0; ok && q < j->nparts; q++) {
		struct vgq_parts *out = &j->outs[j->owner[q]];
		struct vgq_parts_reader rd;
		const unsigned char *x;
		vgq_parts_reader_init(&rd, out, q);
		while ((x = vgq_parts_next(&rd))) {
			memcpy(&b, x, sizeof b);
			memcpy(&e, x + 8, sizeof e);
			memcpy(&v, x + 16, sizeof v);
			memcpy(keys, x + 16 + sizeof v, nby * sizeof *keys);
			vgq_agg_put(j->a, b, e, keys, &v);
		}
		vgq_parts_reader_free(&rd);
		ok = !out->failed;
	}
	vgq_mem_give(s, rdbytes);
	return ok;
}

/* The partitions aggregated on the workers; false when the statement stops. */
static bool aggregate_parallel(struct agg_job *j)
{
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	j->owner = vgq_xcalloc(j->nparts, sizeof *j->owner);
	vgq_workers_run(j->s, agg_work, j);
	bool ok = !stopped(j) && append_partitions(j);
	free(j->owner);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	return ok;
}

size_t vgq_agg_spill(struct vgq_session *s, struct bagg *a, struct xrows *in, unsigned *workers)
{
	size_t nby = a->nby, w = in->width;
	struct rec_layout l = {nby, 16 + (1 + nby) * sizeof(struct vx_value)};
	struct vgq_contrib c;
	struct vx_value keys[nby + 1];
	*workers = 1;
	/* the contributions counted over the finest partitions: the fewest that fit */
	uint64_t *fine = vgq_xcalloc((size_t)1 << VGQ_PARTS_FINE_LOG2, sizeof *fine);
	uint64_t total = 0;
	for (size_t i = 0; i < in->n; i++)
		if (vgq_contrib_of(a, in->rows + i * w, &c, keys)) {
			fine[vgq_agg_group_hash(keys, nby) >> (64 - VGQ_PARTS_FINE_LOG2)]++;
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
	size_t worst, threads = vgq_session_threads(s);
	unsigned lg = vgq_parts_choose(fine, part_bytes, nby, l.size, room, &worst);
	if (threads > 1 && worst <= room) {
		/* each worker's share, so that as many partitions as workers fit at once, when
		 * some cut fits it (else the workers take turns as the partitions fit) */
		size_t share = room / threads, fits;
		unsigned lgt = vgq_parts_choose(fine, part_bytes, nby, l.size, share, &fits);
		if (lgt > lg && fits <= share / 2)
			lg = lgt;
	}
	free(fine);
	if (worst > room) { /* no cut fits: one group past the budget */
		vgq_rows_free(in);
		return vgq_mem_refuse(s, "the aggregate's group", worst);
	}
	size_t nparts = (size_t)1 << lg;
	struct vgq_parts pt;
	bool ok = vgq_parts_open(&pt, s, "the aggregate's partitions", nparts, l.size);
	vgq_mem_note_spill(s, nparts, 0);
	unsigned char *r = vgq_xcalloc(1, l.size);
	for (size_t i = 0; ok && i < in->n; i++)
		if (vgq_contrib_of(a, in->rows + i * w, &c, keys)) {
			pack(&l, r, &c, keys);
			ok = vgq_parts_put(&pt, vgq_agg_group_hash(keys, nby) >> (64 - lg), r);
		}
	free(r);
	vgq_rows_free(in);
	ok = ok && vgq_parts_seal(&pt);
	/* as many workers as leave room for the largest partition beside their files'
	 * buffers (an eighth of the room each at most) with an eighth to spare; fewer than
	 * two: in turn, here, as one thread does (no file of intervals, the same refusals) */
	size_t most = 0, nw = 0, orec = 16 + (1 + nby) * sizeof(struct vx_value);
	for (size_t q = 0; ok && q < nparts; q++)
		if (part_bytes(pt.count[q], nby) > most)
			most = part_bytes(pt.count[q], nby);
	struct vgq_parts *outs = vgq_xcalloc(threads, sizeof *outs);
	for (size_t k = 0; k < threads; k++)
		outs[k].fd = -1;
	for (; ok && threads > 1 && nw < threads && nw < nparts; nw++) { /* a failed one: closed */
		if (vgq_parts_open_bytes(s, nparts, orec) + most > vgq_mem_room(s) / 8 * 7)
			break;
		ok = vgq_parts_open(&outs[nw], s, "the aggregate's partitions", nparts, orec);
	}
	if (ok && nw == 1) { /* one worker: no file of intervals */
		vgq_parts_close(&outs[0]);
		nw = 0;
	}
	if (ok && nw > 1) {
		struct agg_job j = {.s = s,
		                    .a = a,
		                    .pt = &pt,
		                    .outs = outs,
		                    .l = &l,
		                    .orec = orec,
		                    .nparts = nparts,
		                    .nw = nw};
		ok = aggregate_parallel(&j);
		*workers = (unsigned)nw;
	} else {
		for (size_t q = 0; ok && q < nparts; q++)
			ok = aggregate_partition(s, a, &pt, &l, q) && !vgq_fault_met(&s->fault);
	}
	for (size_t k = 0; k < nw; k++)
		vgq_parts_close(&outs[k]);
	free(outs);
	vgq_parts_close(&pt);
	if (ok)
		vgq_agg_end(a);
	return nparts;
}
