/* The database built on several threads: this thread reads the trace in merged order
 * (with more than two threads, its streams decoded ahead by the event source's own
 * workers, trace/prefetch.c) into a ring of batches, copying each event to the builder
 * threads that need it; each builder builds the relations it owns from their events in
 * merged order, exactly as the one-threaded pass builds them.
 *
 * What the relations share is kept with one builder or made per builder: builder 0 is
 * the database's own builder (its pool, names, identity table, warnings) and owns the
 * entity relations, every relation with an entity attribute (their names are looked up
 * as of the event) and WaitFor's walk, so it also gets vigil's own events (vg.*) and the
 * lock operations; the others have a pool and an identity table of their own, whose
 * texts are moved into the database's pool at the end (equal texts are one pointer,
 * vgq_database_string). The relations are given out once the first batches are read
 * (copied to every builder), by how many events of theirs those hold. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "relations/build.h"

#define BATCH_EVENTS 2048
#define RING 16 /* batches: the first RING are read before the relations are given out */

/* A builder's share of a batch: copies of the events it wants, in merged order. */
struct part {
	struct vgt_event *ev;
	struct vgt_value *values;
	size_t n, cap, nvalues, capvalues;
};

struct batch {
	struct part *parts; /* one per builder */
	size_t nread;       /* events read into it (BATCH_EVENTS but at the end) */
	unsigned pending;   /* builders yet to read it */
};

struct pbuild;

struct bworker {
	struct pbuild *p;
	unsigned k;
	struct builder *b; /* builder 0: the database's; the others: own */
	struct builder own;
	pthread_t thread;
};

struct pbuild {
	pthread_mutex_t mu;
	pthread_cond_t ready, freed;
	struct batch *ring;
	uint64_t published; /* batches 0 .. published-1 can be read */
	bool done;
	unsigned nworkers;
	unsigned *owner; /* by event class: its builder */
	uint64_t *route; /* by event class: the builders that read its events (bit k: k) */
	size_t nclasses;
	struct vgq_waits *waits;
	struct bworker *w;
};

/* The event's copy in a part; its values are pointed at when the batch is full. */
static void copy_in(struct part *pt, const struct vgt_event *ev)
{
	unsigned nf = ev->values ? ev->type->nfields : 0; /* NULL: not decoded, not read */
	if (pt->n == pt->cap) {
		pt->cap = pt->cap ? 2 * pt->cap : 256;
		pt->ev = vgq_xrealloc(pt->ev, pt->cap, sizeof *pt->ev);
	}
	if (pt->nvalues + nf > pt->capvalues) {
		pt->capvalues = 2 * (pt->nvalues + nf) + 256;
		pt->values = vgq_xrealloc(pt->values, pt->capvalues, sizeof *pt->values);
	}
	if (nf)
		memcpy(pt->values + pt->nvalues, ev->values, nf * sizeof *pt->values);
	pt->ev[pt->n] = *ev;
	pt->ev[pt->n].values =
	    (const struct vgt_value *)(ev->values ? (uintptr_t)pt->nvalues : UINTPTR_MAX);
	pt->nvalues += nf;
	pt->n++;
}

/* Reads up to BATCH_EVENTS events, each copied to the builders its class is routed to
 * (every builder before the routes are known). */
static void fill(struct pbuild *p, struct batch *bt, struct vgq_reader *rd, struct vgq_database *db)
{
	const struct vgt_event *ev;
	for (unsigned k = 0; k < p->nworkers; k++)
		bt->parts[k].n = bt->parts[k].nvalues = 0;
	bt->nread = 0;
	uint64_t all = p->nworkers >= 64 ? UINT64_MAX : ((uint64_t)1 << p->nworkers) - 1;
	while (bt->nread < BATCH_EVENTS && (ev = vgq_reader_next(rd))) {
		vgq_build_count(db, ev);
		bt->nread++;
		uint64_t to = p->route ? p->route[ev->type->class_id] : all;
		for (unsigned k = 0; to; k++, to >>= 1)
			if (to & 1)
				copy_in(&bt->parts[k], ev);
	}
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct part *pt = &bt->parts[k];
		for (size_t i = 0; i < pt->n; i++) {
			uintptr_t at = (uintptr_t)pt->ev[i].values;
			pt->ev[i].values = at == UINTPTR_MAX ? NULL : pt->values + at;
		}
	}
}

static void feed_batch(struct bworker *w, const struct batch *bt)
{
	struct pbuild *p = w->p;
	struct builder *b = w->b;
	const struct part *pt = &bt->parts[w->k];
	for (size_t i = 0; i < pt->n; i++) {
		const struct vgt_event *ev = &pt->ev[i];
		if (w->k == 0) /* as the one-threaded pass: names first, then the relations */
			vgt_names_observe(b->names, ev);
		if (p->owner[ev->type->class_id] == w->k)
			vgq_build_feed(b, ev);
		if (w->k == 0)
			vgq_waits_feed(p->waits, ev);
	}
}

static void *builder_main(void *arg)
{
	struct bworker *w = arg;
	struct pbuild *p = w->p;
	for (uint64_t seq = 0;; seq++) {
		pthread_mutex_lock(&p->mu);
		while (p->published <= seq && !p->done)
			pthread_cond_wait(&p->ready, &p->mu);
		bool have = p->published > seq;
		pthread_mutex_unlock(&p->mu);
		if (!have)
			return NULL;
		struct batch *bt = &p->ring[seq % RING];
		feed_batch(w, bt);
		pthread_mutex_lock(&p->mu);
		if (!--bt->pending)
			pthread_cond_broadcast(&p->freed);
		pthread_mutex_unlock(&p->mu);
	}
}

/* ---- giving out the relations ---- */

static bool needs_builder0(const struct rslot *s)
{
	if (s->rel->kind == VGQ_REL_ENTITY)
		return true;
	for (size_t a = 0; a < s->rel->nattrs; a++)
		if (s->rel->attrs[a].type == VGQ_ENTITY)
			return true;
	return false;
}

/* What an event of this mapping costs its builder, roughly: pairing an interval or a
 * state costs more than appending an event. */
static uint64_t event_cost(const struct tinfo *ti)
{
	uint64_t fields = ti->type->nfields;
	return ti->what == T_EVENT ? 2 + fields : 4 + fields;
}

/* Each relation to the builder with the least work so far, the costliest first, from
 * the events of the batches read (builder 0 also observes names and waits: one unit
 * per event). */
static void give_out(struct pbuild *p, struct builder *b, size_t nbatches)
{
	uint64_t *per_class = vgq_xcalloc(p->nclasses + 1, sizeof *per_class);
	uint64_t total = 0;
	for (size_t i = 0; i < nbatches; i++) /* every builder's part holds them all */
		for (size_t e = 0; e < p->ring[i].parts[0].n; e++) {
			per_class[p->ring[i].parts[0].ev[e].type->class_id]++;
			total++;
		}
	uint64_t *slot_cost = vgq_xcalloc(b->nslots + 1, sizeof *slot_cost);
	unsigned *slot_owner = vgq_xcalloc(b->nslots + 1, sizeof *slot_owner);
	uint64_t *load = vgq_xcalloc(p->nworkers, sizeof *load);
	load[0] = total;
	for (size_t c = 0; c < p->nclasses; c++) {
		const struct tinfo *ti = b->by_class[c];
		if (!ti || !ti->slot)
			continue;
		for (size_t s = 0; s < b->nslots; s++)
			if (b->slots[s] == ti->slot)
				slot_cost[s] += per_class[c] * event_cost(ti);
	}
	for (size_t s = 0; s < b->nslots; s++)
		if (needs_builder0(b->slots[s])) {
			load[0] += slot_cost[s];
			slot_cost[s] = 0;
			slot_owner[s] = UINT32_MAX; /* given */
		}
	for (;;) {
		size_t best = SIZE_MAX;
		for (size_t s = 0; s < b->nslots; s++)
			if (slot_owner[s] != UINT32_MAX &&
			    (best == SIZE_MAX || slot_cost[s] > slot_cost[best]))
				best = s;
		if (best == SIZE_MAX)
			break;
		unsigned least = 0;
		for (unsigned k = 1; k < p->nworkers; k++)
			if (load[k] < load[least])
				least = k;
		load[least] += slot_cost[best];
		slot_owner[best] = UINT32_MAX;
		for (size_t c = 0; c < p->nclasses; c++) {
			const struct tinfo *ti = b->by_class[c];
			if (ti && ti->slot == b->slots[best])
				p->owner[c] = least;
		}
	}
	free(per_class);
	free(slot_cost);
	free(slot_owner);
	free(load);
}

/* Each class to its owner, and to builder 0 also when names or WaitFor may need it. */
static void make_routes(struct pbuild *p, const struct builder *b)
{
	p->route = vgq_xcalloc(p->nclasses + 1, sizeof *p->route);
	for (size_t c = 0; c < p->nclasses; c++) {
		const struct vgt_event_type *t = vgt_class_at(b->trace, c);
		if (b->by_class[c])
			p->route[c] |= (uint64_t)1 << p->owner[c];
		if (!strncmp(t->name, "vg.", 3) || vgq_waits_wants(p->waits, t))
			p->route[c] |= 1;
	}
}

/* Builders given no relation (more threads than busy relations) are not started: the
 * others are numbered again from 0, builder 0 staying builder 0. */
static void drop_idle(struct pbuild *p, const struct builder *b)
{
	unsigned *renumber = vgq_xcalloc(p->nworkers, sizeof *renumber);
	renumber[0] = 1;
	for (size_t c = 0; c < p->nclasses; c++)
		if (b->by_class[c])
			renumber[p->owner[c]] = 1;
	unsigned n = 0;
	for (unsigned k = 0; k < p->nworkers; k++)
		renumber[k] = renumber[k] ? n++ : 0;
	for (size_t c = 0; c < p->nclasses; c++)
		p->owner[c] = renumber[p->owner[c]];
	p->nworkers = n;
	free(renumber);
}

/* ---- the end: every builder's texts in the database's pool ---- */

static bool owned_by(const struct pbuild *p, const struct builder *b, const struct rslot *s,
                     unsigned k)
{
	for (size_t c = 0; c < p->nclasses; c++)
		if (b->by_class[c] && b->by_class[c]->slot == s && p->owner[c] == k)
			return true;
	return false;
}

/* Texts of builder k that the database's pool already held at another address: its
 * relations' text values are pointed at the pool's copies. */
static void repoint_texts(struct pbuild *p, struct builder *b, unsigned k)
{
	for (size_t s = 0; s < b->nslots; s++) {
		struct vgq_relation *r = b->slots[s]->rel;
		if (!owned_by(p, b, b->slots[s], k))
			continue;
		for (size_t a = 0; a < r->nattrs; a++)
			if (r->attrs[a].type == VGQ_STRING)
				for (size_t t = 0; t < r->ntuples; t++)
					if (r->cols[a].s[t])
						r->cols[a].s[t] =
						    vgq_pool_find(b->pool, r->cols[a].s[t],
						                  strlen(r->cols[a].s[t]));
	}
}

static void join_builders(struct pbuild *p, struct builder *b)
{
	for (unsigned k = 0; k < p->nworkers; k++)
		pthread_join(p->w[k].thread, NULL);
	for (unsigned k = 1; k < p->nworkers; k++) {
		struct builder *own = &p->w[k].own;
		if (vgq_pool_absorb(b->pool, own->pool))
			repoint_texts(p, b, k);
		vgq_keymap_free(own->keys);
		for (size_t i = 0; i < own->nwarnings; i++) {
			vgq_build_warn(b, "%s", own->warnings[i]);
			free(own->warnings[i]);
		}
		free(own->warnings);
	}
}

static unsigned start_builders(struct pbuild *p, struct builder *b)
{
	unsigned started = 0;
	for (unsigned k = 0; k < p->nworkers; k++) {
		struct bworker *w = &p->w[k];
		*w = (struct bworker){.p = p, .k = k, .b = b};
		if (k) {
			w->own = *b;
			w->own.pool = vgq_pool_new();
			w->own.keys = vgq_keymap_new();
			w->own.names = NULL; /* builder 0's alone */
			w->own.last_image = NULL;
			w->own.warnings = NULL;
			w->own.nwarnings = 0;
			w->b = &w->own;
		}
		if (pthread_create(&w->thread, NULL, builder_main, w) != 0) {
			if (k) {
				vgq_pool_free(w->own.pool);
				vgq_keymap_free(w->own.keys);
			}
			break;
		}
		started++;
	}
	return started;
}

bool vgq_build_parallel(struct builder *b, struct vgq_reader *rd, struct vgq_waits *waits,
                        struct vgq_database *db, unsigned threads)
{
	if (threads < 2 || !b->trace)
		return false;
	if (threads > 64) /* a route is a 64-bit mask */
		threads = 64;
	struct pbuild *p = vgq_xcalloc(1, sizeof *p);
	p->nworkers = threads;
	p->nclasses = vgt_class_count(b->trace);
	p->owner = vgq_xcalloc(p->nclasses + 1, sizeof *p->owner);
	p->waits = waits;
	p->ring = vgq_xcalloc(RING, sizeof *p->ring);
	for (size_t i = 0; i < RING; i++)
		p->ring[i].parts = vgq_xcalloc(threads, sizeof *p->ring[i].parts);
	p->w = vgq_xcalloc(threads, sizeof *p->w);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->freed, NULL);
	/* This thread decodes and merges (as much work as one builder's share): the source's
	 * own decoding workers only beyond that. */
	vgt_source_decode_threads(rd->src, threads - 1);

	/* The first batches, read before any builder starts, say which relations are busy. */
	size_t nread = 0;
	bool end = false;
	while (nread < RING && !end) {
		fill(p, &p->ring[nread], rd, db);
		end = p->ring[nread++].nread < BATCH_EVENTS;
	}
	give_out(p, b, nread);
	drop_idle(p, b);
	unsigned started = start_builders(p, b);
	if (started < p->nworkers) /* the relations of builders that did not start: builder 0's */
		for (size_t c = 0; c < p->nclasses; c++)
			if (p->owner[c] >= started)
				p->owner[c] = 0;
	p->nworkers = started;
	make_routes(p, b);
	if (!started) { /* no thread: the batches read are built here, then the rest */
		struct bworker self = {.p = p, .k = 0, .b = b};
		for (size_t i = 0; i < nread; i++)
			feed_batch(&self, &p->ring[i]);
		const struct vgt_event *ev;
		while ((ev = vgq_reader_next(rd))) {
			vgq_build_count(db, ev);
			vgt_names_observe(b->names, ev);
			vgq_build_feed(b, ev);
			vgq_waits_feed(waits, ev);
		}
	} else {
		pthread_mutex_lock(&p->mu);
		for (size_t i = 0; i < nread; i++)
			p->ring[i].pending = p->nworkers;
		p->published = nread;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->mu);
		for (uint64_t seq = nread; !end; seq++) {
			struct batch *bt = &p->ring[seq % RING];
			pthread_mutex_lock(&p->mu);
			while (bt->pending)
				pthread_cond_wait(&p->freed, &p->mu);
			pthread_mutex_unlock(&p->mu);
			fill(p, bt, rd, db);
			end = bt->nread < BATCH_EVENTS;
			pthread_mutex_lock(&p->mu);
			bt->pending = p->nworkers;
			p->published = seq + 1;
			pthread_cond_broadcast(&p->ready);
			pthread_mutex_unlock(&p->mu);
		}
		pthread_mutex_lock(&p->mu);
		p->done = true;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->mu);
		join_builders(p, b);
	}
	for (size_t i = 0; i < RING; i++) {
		for (unsigned k = 0; k < threads; k++) {
			free(p->ring[i].parts[k].ev);
			free(p->ring[i].parts[k].values);
		}
		free(p->ring[i].parts);
	}
	free(p->route);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->freed);
	free(p->ring);
	free(p->w);
	free(p->owner);
	free(p);
	return true;
}
