/* The database built stream by stream: when every relation the build makes from busy
 * events is an event or interval relation with no entity attribute, each stream is read
 * and decoded on a thread of its own into pieces of those relations, one piece per
 * stream, and the pieces are merged afterwards by (recorded time, stream index): the
 * order vgt_source_next gives the events, so the relations are those of the one-threaded
 * pass, byte for byte. The merge is a gather per column, the columns shared out among
 * the threads; an event relation of a build for the relations cache (defer_merge) is
 * not gathered here but left in its pieces with its merged order, for the cache's
 * writer to gather straight into its file (unmerged.h).
 *
 * A stream whose packet summary says it was read cleanly before is cut into ranges of
 * its packets (trace/stream_split.c), each read on whichever thread is free: a unit of
 * work. Units are numbered in (stream, range) order and everything below is by unit:
 * since a stream's times never go back, the order by (time, unit) is the order by
 * (time, stream) with each stream's events in file order, so the units' pieces merge as
 * the streams' would, and intervals begun in one range and ended in another pair as
 * ever (after the merge). The merged orders are two-way merges while the tuples come
 * from at most two streams, each stream's units one sequence.
 *
 * An interval's begin makes its tuple in the piece (values decoded on the stream's
 * thread); its pairing with an end (which may come on another stream: the oldest open
 * tuple of equal key, of any stream) needs the merged order: each stream notes its
 * begins and its ends (the end's values copied) per relation, and after the merge each
 * interval relation is paired on a thread of its own, its begins and ends walked in
 * merged order, as the one-threaded pass pairs them.
 *
 * What needs the merged order (names, entity relations, vigil's own events, any other
 * relation) is copied aside per stream, merged the same way and fed here afterwards. A
 * stream whose times go backwards (damage) or that holds a vg.report.synth marker (the
 * marker reaches across the merge, build.c) makes the whole build go back to the merged
 * pass: build_parallel.c or the one-threaded one. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "relations/build.h"
#include "relations/build_phases.h"
#include "relations/spill.h"
#include "relations/unmerged.h"

/* An event copied aside for the merged feed; its values index the stream's `values`. */
struct aside {
	int64_t key; /* recorded time */
	struct vgt_event ev;
};

/* An interval relation's begin or end, noted by its stream for the pairing: 8 bytes, as a
 * 2-thread build holds two per interval (with its time: 16, where a pointer, a class and
 * a values index took 32). A unit whose marks do not fit (64K images, 32K classes, 4 GiB of
 * ends' values) goes back to the merged pass. */
struct mark {
	uint32_t values; /* an end's packed values in the unit's `endv` (NO_VALUES: none) */
	uint16_t image;  /* in the unit's `images` */
	uint16_t cls;    /* class id << 1 | 1 for an end */
};

#define NO_VALUES UINT32_MAX

/* One stream's marks of one interval relation, in stream order; ts: their times (the
 * merge key). */
struct marks {
	int64_t *ts;
	struct mark *m;
	size_t n, cap;
};

/* What one unit (a stream, or a range of its packets) made: a piece of each piece relation (its
 * `from` column, the time recorded since no marker moved it, is the merge key), the events copied
 * aside, and its counts. */
struct sdone {
	struct vgq_relation **piece; /* by piece slot */
	struct marks *marks;         /* by piece slot (interval relations') */
	struct aside *aside;
	size_t naside, capaside;
	struct vgt_value *values; /* of the events copied aside */
	size_t nvalues, capvalues;
	uint8_t *endv; /* the ends' values, packed (pack_end) */
	size_t nendv, capendv;
	const struct vgt_image **images; /* the marks' images */
	size_t nimages, capimages;
	/* the marks' and values' arrays: large ones mapped and grown by mremap (spill.c),
	 * never copied as a realloc of the heap would */
	struct vgq_colmem *mem;
	uint64_t events;
	int64_t first_key, first_ts, last;
	unsigned worker; /* who read it: its pieces' texts are that worker's pool's */
};

struct sbuild;

struct sworker {
	struct sbuild *p;
	unsigned k;
	struct builder b; /* by_class: the piece classes only, each to this worker's slot */
	struct rslot *slots;
	struct tinfo *tinfo;
	struct vgq_pool *scratch; /* texts of the events copied aside */
	pthread_t thread;
};

/* A unit of reading: stream `stream` whole (split NULL), or ranges [next, end) of its
 * split, read in order by one thread into one piece; a thread with nothing left to read
 * takes the later half of the ranges a unit has not begun (a unit of its own: `first`,
 * its first range, orders the units of a stream). */
struct unit {
	size_t stream;
	struct vgt_split *split;
	size_t first, next, end; /* ranges (under units_mu) */
	bool taken;
	uint64_t bytes;
	struct sdone *d;
};

struct sbuild {
	struct builder *main;
	struct vgt_source *src;
	size_t nstreams, *first_unit; /* by stream: its first unit (nstreams + 1) */
	struct unit **units; /* after the reading, in (stream, first) order: `done` by unit */
	size_t nunits, capunits;
	pthread_mutex_t units_mu;  /* units, and their ranges, while they are read */
	struct vgt_split **splits; /* by stream, or NULL */
	size_t *splits_read;       /* by stream: its ranges read (1: read whole) */
	bool failed;               /* back to the merged pass (atomic) */
	struct sdone *done;        /* by unit */
	size_t npieces;
	struct rslot **pslot; /* the main builder's piece slots */
	bool *piece_class, *aside_class;
	size_t *mark_slot; /* by class: an interval's begin or end: its piece slot, else SIZE_MAX */
	bool *text_ends;   /* by piece slot: an end puts a text or bytes (the database's pool) */
	pthread_mutex_t pool_mu;
	pthread_mutex_t
	    drop_mu; /* column memory of the merge, one thread at a time: drop_sources, reserves */
	size_t next_pair;
	size_t nclasses;
	struct sworker *w;
	unsigned nworkers;
	/* the merge: jobs (slot, column) taken by the threads */
	uint32_t **merge_order; /* by piece slot: the unit of each tuple, in merged order */
	/* by piece slot whose tuples are of one or two streams (a host): a bit a tuple in
	 * merged order, set when it is the second stream's (4 bytes a tuple fewer) */
	uint64_t **merge_bits;
	size_t **merge_len; /* by piece slot: each unit's tuples */
	size_t *merge_n;    /* by piece slot: all tuples */
	size_t *host;       /* by piece slot: the unit whose piece takes them, or SIZE_MAX */
	bool *defer;        /* by piece slot: left unmerged for the cache's writer (unmerged.h) */
	size_t next_job;
	size_t next_order;
	uint32_t **mark_order; /* by piece slot (interval relations'): the unit of each mark */
	size_t *mark_n;
	bool *repoint; /* by worker: some of its texts were held by the database's pool already */
	/* the merge's first jobs: texts of those workers' pieces made the database's */
	struct repoint_job *repoints;
	size_t nrepoints;
};

/* Tuples [t0, t1) of text column c of unit s's piece of slot j, repointed. */
struct repoint_job {
	size_t j, s, t0, t1;
	long c;
};

/* ---- which relations are built in pieces ---- */

static bool piece_slot(const struct rslot *s)
{
	if (s->rel->kind != VGQ_REL_EVENT && s->rel->kind != VGQ_REL_INTERVAL)
		return false;
	for (size_t a = 0; a < s->rel->nattrs; a++)
		if (s->rel->attrs[a].type == VGQ_ENTITY)
			return false;
	return true;
}

/* An event of an event relation, or the begin or end of an interval that pairs by its
 * values alone (no sampled interval's vg_since, no tuple made by an unmatched end: those
 * tuples would be made in the pairing, out of the merged order). */
static bool piece_type(const struct builder *b, const struct tinfo *ti)
{
	if (!ti || !ti->slot || !piece_slot(ti->slot))
		return false;
	if (ti->slot->rel->kind == VGQ_REL_EVENT)
		return ti->what == T_EVENT;
	return ti->what == T_BEGIN ||
	       (ti->what == T_END && ti->since < 0 && !b->ends_without_begin && !b->end_since);
}

/* An end of ti's type puts a text or bytes value (one it does not match on). */
static bool end_puts_text(const struct tinfo *ti)
{
	for (unsigned f = 0; f < ti->type->nfields; f++) {
		int a = ti->col[f];
		if (a >= 0 && !ti->match[f] &&
		    (ti->slot->rel->attrs[a].type == VGQ_STRING ||
		     ti->slot->rel->attrs[a].type == VGQ_BYTES))
			return true;
	}
	return false;
}

/* Every busy class is a piece class (an interval's end: a marked class), or a built-in
 * entity event (few: their relations are made in the merged feed); false when nothing
 * would be built in pieces. */
static bool classify(struct sbuild *p, const struct builder *b)
{
	p->nclasses = vgt_class_count(b->trace);
	if (p->nclasses > b->nby_class)
		return false;
	p->piece_class = vgq_xcalloc(p->nclasses + 1, sizeof *p->piece_class);
	p->aside_class = vgq_xcalloc(p->nclasses + 1, sizeof *p->aside_class);
	p->mark_slot = vgq_xcalloc(p->nclasses + 1, sizeof *p->mark_slot);
	p->pslot = vgq_xcalloc(b->nslots + 1, sizeof *p->pslot);
	p->text_ends = vgq_xcalloc(b->nslots + 1, sizeof *p->text_ends);
	bool any = false;
	for (size_t c = 0; c < p->nclasses; c++) {
		const struct tinfo *ti = b->by_class[c];
		const struct vgt_event_type *t = vgt_class_at(b->trace, c);
		p->mark_slot[c] = SIZE_MAX;
		if (piece_type(b, ti)) {
			any = true;
			size_t j = 0;
			while (j < p->npieces && p->pslot[j] != ti->slot)
				j++;
			if (j == p->npieces)
				p->pslot[p->npieces++] = ti->slot;
			p->piece_class[c] =
			    ti->what != T_END; /* an end makes no tuple of its own */
			if (ti->what != T_EVENT)
				p->mark_slot[c] = j;
			if (ti->what == T_END && end_puts_text(ti))
				p->text_ends[j] = true;
		} else if (ti && ti->slot && ti->what != T_SKIP) {
			return false; /* a relation that needs the merged order: build_parallel.c */
		} else if (ti || !strncmp(t->name, "vg.", 3)) {
			p->aside_class[c] = true;
		}
	}
	return any;
}

static size_t piece_index(const struct sbuild *p, const struct rslot *s)
{
	size_t j = 0;
	while (p->pslot[j] != s)
		j++;
	return j;
}

/* A worker's own builder: its pool, and each piece class mapped to a slot of its own
 * whose relation is switched to the piece of the stream being read. */
static void worker_init(struct sworker *w, struct sbuild *p, unsigned k)
{
	const struct builder *b = p->main;
	*w = (struct sworker){.p = p, .k = k};
	w->b = *b;
	w->b.pool = vgq_pool_new();
	w->b.keys = vgq_keymap_new();
	w->b.names = NULL;
	w->b.last_image = NULL;
	w->b.warnings = NULL;
	w->b.nwarnings = 0;
	w->b.by_class = vgq_xcalloc(b->nby_class + 1, sizeof *w->b.by_class);
	w->slots = vgq_xcalloc(p->npieces + 1, sizeof *w->slots);
	w->tinfo = vgq_xcalloc(p->nclasses + 1, sizeof *w->tinfo);
	for (size_t c = 0; c < p->nclasses; c++)
		if (p->piece_class[c]) {
			w->tinfo[c] = *b->by_class[c];
			w->tinfo[c].slot = &w->slots[piece_index(p, b->by_class[c]->slot)];
			/* an interval's begin: its tuple only, opened at the pairing */
			w->tinfo[c].what = T_EVENT;
			if (b->by_class[c]->what != T_EVENT)
				w->tinfo[c].bounded = false, w->tinfo[c].nchecks = 0;
			w->b.by_class[c] = &w->tinfo[c];
		}
	w->scratch = vgq_pool_new();
}

static void worker_free(struct sworker *w)
{
	free(w->b.by_class);
	free(w->slots);
	free(w->tinfo);
	vgq_keymap_free(w->b.keys);
	for (size_t i = 0; i < w->b.nwarnings; i++)
		free(w->b.warnings[i]);
	free(w->b.warnings);
	if (w->b.pool)
		vgq_pool_free(w->b.pool);
	vgq_pool_free(w->scratch);
}

/* ---- reading one stream ---- */

/* A copy of the event's values, its texts and bytes in the worker's scratch pool: where
 * they are in the stream's `values`, or UINTPTR_MAX (not decoded). */
static uintptr_t copy_values(struct sworker *w, struct sdone *d, const struct vgt_event *ev)
{
	unsigned nf = ev->values ? ev->type->nfields : 0;
	if (d->nvalues + nf > d->capvalues) {
		size_t cap = 2 * (d->nvalues + nf) + 64;
		vgq_colmem_resize(&d->mem, (void **)&d->values, d->capvalues * sizeof *d->values,
		                  cap * sizeof *d->values);
		d->capvalues = cap;
	}
	for (unsigned f = 0; f < nf; f++) {
		struct vgt_value v = ev->values[f];
		if (v.type == VGT_STRING)
			v.str.ptr = vgq_pool_intern(w->scratch, v.str.ptr, v.str.len);
		else if (v.type == VGT_BYTES)
			v.bytes.ptr = vgq_pool_bytes(w->scratch, v.bytes.ptr, v.bytes.len);
		d->values[d->nvalues + f] = v;
	}
	uintptr_t at = ev->values ? (uintptr_t)d->nvalues : UINTPTR_MAX;
	d->nvalues += nf;
	return at;
}

/* A copy of the event for the merged feed. */
static void copy_aside(struct sworker *w, struct sdone *d, const struct vgt_event *ev)
{
	if (d->naside == d->capaside) {
		d->capaside = d->capaside ? 2 * d->capaside : 64;
		d->aside = vgq_xrealloc(d->aside, d->capaside, sizeof *d->aside);
	}
	uintptr_t at = copy_values(w, d, ev);
	struct aside *a = &d->aside[d->naside++];
	a->key = ev->ts;
	a->ev = *ev;
	a->ev.values = (const struct vgt_value *)at;
}

/* An end's values packed: each value its type's byte, then 8 bytes (a number), 12 (a
 * reference) or 16 (a text's or bytes' place and length: in the worker's scratch pool),
 * where a struct vgt_value takes 24. Where they start in the unit's `endv`, NO_VALUES
 * when not decoded; false when the unit's ends outgrow 4 GiB. */
static bool pack_end(struct sworker *w, struct sdone *d, const struct vgt_event *ev, uint32_t *at)
{
	*at = NO_VALUES;
	if (!ev->values)
		return true;
	unsigned nf = ev->type->nfields;
	size_t need = d->nendv + (size_t)nf * 17;
	if (need >= NO_VALUES)
		return false;
	if (need > d->capendv) {
		size_t cap = 2 * need + 256;
		vgq_colmem_resize(&d->mem, (void **)&d->endv, d->capendv, cap);
		d->capendv = cap;
	}
	*at = (uint32_t)d->nendv;
	uint8_t *o = d->endv + d->nendv;
	for (unsigned f = 0; f < nf; f++) {
		const struct vgt_value *v = &ev->values[f];
		*o++ = (uint8_t)v->type;
		if (v->type == VGT_STRING || v->type == VGT_BYTES) {
			const void *ptr =
			    v->type == VGT_STRING
			        ? (const void *)vgq_pool_intern(w->scratch, v->str.ptr, v->str.len)
			        : (const void *)vgq_pool_bytes(w->scratch, v->bytes.ptr,
			                                       v->bytes.len);
			uint64_t len = v->type == VGT_STRING ? v->str.len : v->bytes.len;
			memcpy(o, &ptr, 8);
			memcpy(o + 8, &len, 8);
			o += 16;
		} else if (v->type == VGT_REF) {
			memcpy(o, &v->ref.id, 8);
			memcpy(o + 8, &v->ref.gen, 4);
			o += 12;
		} else {
			memcpy(o, &v->u, 8);
			o += 8;
		}
	}
	d->nendv = (size_t)(o - d->endv);
	return true;
}

/* pack_end's values back into out (nf of them). */
static void unpack_end(const uint8_t *in, unsigned nf, struct vgt_value *out)
{
	for (unsigned f = 0; f < nf; f++) {
		struct vgt_value v = {.type = (enum vgt_vtype) * in++};
		if (v.type == VGT_STRING || v.type == VGT_BYTES) {
			const void *ptr;
			uint64_t len;
			memcpy(&ptr, in, 8);
			memcpy(&len, in + 8, 8);
			if (v.type == VGT_STRING)
				v.str.ptr = ptr, v.str.len = (size_t)len;
			else
				v.bytes.ptr = ptr, v.bytes.len = (size_t)len;
			in += 16;
		} else if (v.type == VGT_REF) {
			memcpy(&v.ref.id, in, 8);
			memcpy(&v.ref.gen, in + 8, 4);
			in += 12;
		} else {
			memcpy(&v.u, in, 8);
			in += 8;
		}
		out[f] = v;
	}
}

/* The index of the event's image among the unit's (added when new); false past 64K. */
static bool image_of(struct sdone *d, const struct vgt_image *img, uint16_t *ix)
{
	/* a stream's events are mostly one image's: the last one first */
	if (d->nimages && d->images[d->nimages - 1] == img) {
		*ix = (uint16_t)(d->nimages - 1);
		return true;
	}
	for (size_t i = 0; i < d->nimages; i++)
		if (d->images[i] == img) {
			*ix = (uint16_t)i;
			return true;
		}
	if (d->nimages > UINT16_MAX)
		return false;
	if (d->nimages == d->capimages) {
		d->capimages = d->capimages ? 2 * d->capimages : 4;
		d->images = vgq_xrealloc(d->images, d->capimages, sizeof *d->images);
	}
	*ix = (uint16_t)d->nimages;
	d->images[d->nimages++] = img;
	return true;
}

/* An interval's begin (its tuple made in the piece) or end (its values packed) noted;
 * false when the mark does not fit its 8 bytes (the build goes back to the merged pass). */
static bool add_mark(struct sworker *w, struct sdone *d, size_t j, const struct vgt_event *ev,
                     bool is_end)
{
	struct marks *ms = &d->marks[j];
	uint32_t cls = ev->type->class_id, values = NO_VALUES;
	uint16_t image;
	if (cls > UINT16_MAX >> 1 || !image_of(d, ev->image, &image) ||
	    (is_end && !pack_end(w, d, ev, &values)))
		return false;
	if (ms->n == ms->cap) {
		size_t cap = ms->cap ? 2 * ms->cap : 256;
		vgq_colmem_resize(&d->mem, (void **)&ms->ts, ms->cap * sizeof *ms->ts,
		                  cap * sizeof *ms->ts);
		vgq_colmem_resize(&d->mem, (void **)&ms->m, ms->cap * sizeof *ms->m,
		                  cap * sizeof *ms->m);
		ms->cap = cap;
	}
	ms->ts[ms->n] = ev->ts;
	ms->m[ms->n++] = (struct mark){values, image, (uint16_t)(cls << 1 | is_end)};
	return true;
}

/* The unit's pieces made, the worker's slots switched to them. */
static void begin_unit(struct sworker *w, struct sdone *d)
{
	struct sbuild *p = w->p;
	d->piece = vgq_xcalloc(p->npieces + 1, sizeof *d->piece);
	d->marks = vgq_xcalloc(p->npieces + 1, sizeof *d->marks);
	for (size_t j = 0; j < p->npieces; j++) {
		const struct vgq_relation *r = p->pslot[j]->rel;
		d->piece[j] = vgq_relation_new(r->name, r->kind);
		for (size_t a = 0; a < r->nattrs; a++)
			vgq_relation_add_attr(d->piece[j], r->attrs[a].name, r->attrs[a].type,
			                      r->attrs[a].ref_kind);
		w->slots[j].rel = d->piece[j];
	}
}

/* Reads the cursor's events into the unit's pieces and its events aside; false when
 * the build must go back to the merged pass. */
static bool read_cursor(struct sworker *w, struct sdone *d, struct vgt_cursor *c)
{
	struct sbuild *p = w->p;
	const struct vgt_event *ev;
	uint64_t n = 0;
	while ((ev = vgt_cursor_next(c))) {
		if (!(n++ & 4095) && __atomic_load_n(&p->failed, __ATOMIC_RELAXED))
			return false;
		if (vgq_is_synth_marker(ev->type) || (d->events && ev->ts < d->last))
			return false;
		if (!d->events++)
			d->first_key = d->first_ts = ev->ts;
		d->last = ev->ts;
		uint32_t cid = ev->type->class_id;
		if (cid < p->nclasses && p->piece_class[cid]) {
			size_t j = p->mark_slot[cid];
			size_t made = j != SIZE_MAX ? w->slots[j].rel->ntuples : 0;
			vgq_build_feed(&w->b, ev);
			if (j != SIZE_MAX &&
			    w->slots[j].rel->ntuples > made && /* a begin's tuple */
			    !add_mark(w, d, j, ev, false))
				return false;
		} else if (cid < p->nclasses && p->mark_slot[cid] != SIZE_MAX) {
			if (!add_mark(w, d, p->mark_slot[cid], ev, true))
				return false;
		} else if (cid >= p->nclasses || p->aside_class[cid]) {
			copy_aside(w, d, ev);
		}
	}
	return true;
}

/* Reads unit g: its stream whole, or its ranges one after another (as its end may be
 * taken from it meanwhile). */
static bool read_unit(struct sworker *w, struct unit *g)
{
	struct sbuild *p = w->p;
	begin_unit(w, g->d);
	g->d->worker = w->k;
	if (!g->split) {
		struct vgt_cursor *c = vgt_source_stream(p->src, g->stream);
		bool ok = read_cursor(w, g->d, c);
		vgt_cursor_close(c);
		return ok;
	}
	for (;;) {
		pthread_mutex_lock(&p->units_mu);
		size_t r = g->next < g->end ? g->next++ : SIZE_MAX;
		pthread_mutex_unlock(&p->units_mu);
		if (r == SIZE_MAX)
			return true;
		/* a range's cursor: closed by vgt_split_join */
		if (!read_cursor(w, g->d, vgt_split_cursor(g->split, r)))
			return false;
	}
}

static struct unit *add_unit(struct sbuild *p, size_t stream, struct vgt_split *sp, size_t first,
                             size_t end, uint64_t bytes)
{
	if (p->nunits == p->capunits) {
		p->capunits = p->capunits ? 2 * p->capunits : 8;
		p->units = vgq_xrealloc(p->units, p->capunits, sizeof *p->units);
	}
	struct unit *g = vgq_xcalloc(1, sizeof *g);
	*g = (struct unit){stream, sp, first, first, end, false, bytes, NULL};
	g->d = vgq_xcalloc(1, sizeof *g->d);
	p->units[p->nunits++] = g;
	return g;
}

/* The next unit to read (under units_mu): the largest not taken, else the later half of
 * the ranges not begun of the unit with the most of them (two at least), else NULL. */
static struct unit *next_unit(struct sbuild *p)
{
	struct unit *best = NULL;
	for (size_t u = 0; u < p->nunits; u++)
		if (!p->units[u]->taken && (!best || p->units[u]->bytes > best->bytes))
			best = p->units[u];
	if (best) {
		best->taken = true;
		return best;
	}
	for (size_t u = 0; u < p->nunits; u++) {
		struct unit *g = p->units[u];
		if (g->end - g->next >= 2 && (!best || g->end - g->next > best->end - best->next))
			best = g;
	}
	if (!best)
		return NULL;
	size_t mid = best->next + (best->end - best->next + 1) / 2;
	struct unit *g = add_unit(p, best->stream, best->split, mid, best->end, 0);
	best->end = mid;
	g->taken = true;
	return g;
}

static void *worker_main(void *arg)
{
	struct sworker *w = arg;
	struct sbuild *p = w->p;
	for (;;) {
		pthread_mutex_lock(&p->units_mu);
		struct unit *g = next_unit(p);
		pthread_mutex_unlock(&p->units_mu);
		if (!g)
			return NULL;
		if (!read_unit(w, g)) {
			__atomic_store_n(&p->failed, true, __ATOMIC_RELAXED);
			return NULL;
		}
	}
}

/* ---- the merge ---- */

/* Stream a's next item before stream b's: (key, stream index), as the merged reader. */
static bool before(const int64_t *key, size_t a, size_t b)
{
	return key[a] < key[b] || (key[a] == key[b] && a < b);
}

/* One stream's units' keys as one sequence (its units are numbered one after another). */
struct seq {
	int64_t *const *keys;
	const size_t *lens;
	size_t u0, u1; /* its units */
	size_t n;      /* its keys */
};

/* Where the i-th key of the sequence is: its unit and the place in it. */
static void seq_find(const struct seq *q, size_t i, size_t *u, size_t *at)
{
	size_t k = q->u0;
	while (k + 1 < q->u1 && i >= q->lens[k])
		i -= q->lens[k++];
	*u = k;
	*at = i;
}

static int64_t seq_at(const struct seq *q, size_t i)
{
	size_t u, at;
	seq_find(q, i, &u, &at);
	return q->keys[u][at];
}

/* How many of the first k items of the two-way merge of x and y come from x, x's items
 * first on equal keys: the merge path's split (a binary search). */
static size_t merge_split(const struct seq *x, const struct seq *y, size_t k)
{
	size_t lo = k > y->n ? k - y->n : 0, hi = k < x->n ? k : x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (seq_at(x, mid) <= seq_at(y, k - mid - 1)) /* x[mid] before y's last of the k */
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A walk along a sequence: the unit and place of its next key (past empty units). */
struct walk {
	const struct seq *q;
	size_t u, at;
};

static void walk_settle(struct walk *w)
{
	while (w->u + 1 < w->q->u1 && w->at >= w->q->lens[w->u])
		w->u++, w->at = 0;
}

/* Items [from, to) of sequence q, its units written to out. */
static void copy_units(const struct seq *q, size_t from, size_t to, uint32_t *out)
{
	struct walk w = {q, 0, 0};
	seq_find(q, from, &w.u, &w.at);
	for (size_t i = from; i < to; i++) {
		walk_settle(&w);
		*out++ = (uint32_t)w.u;
		w.at++;
	}
}

/* The streams holding items (lens[u] a unit), the first two as sequences in q: how
 * many (3: more than two). */
static size_t busy_streams(const struct sbuild *p, int64_t *const *keys, const size_t *lens,
                           struct seq q[2])
{
	size_t nbusy = 0;
	for (size_t st = 0; st < p->nstreams && nbusy <= 2; st++) {
		struct seq one = {keys, lens, p->first_unit[st], p->first_unit[st + 1], 0};
		for (size_t u = one.u0; u < one.u1; u++)
			one.n += lens[u];
		if (one.n && nbusy++ < 2)
			q[nbusy - 1] = one;
	}
	return nbusy;
}

/* One part of the two-way merge of the first two busy streams (x's first on equal
 * keys): items [t, end) of it, x's [i, iend) and y's [j, jend), walked by a and b. */
struct two_way {
	struct seq q[2], none;
	const struct seq *x, *y;
	size_t t, end, i, iend, j, jend;
	struct walk a, b;
};

/* Part `part` of `nparts` of the merge (found by merge_split: the parts may be made on
 * threads at once), its bounds cut at multiples of `align`; false: more than two streams
 * hold items. */
static bool two_way_part(const struct sbuild *p, int64_t *const *keys, const size_t *lens,
                         size_t part, size_t nparts, size_t align, struct two_way *m)
{
	m->none = (struct seq){keys, lens, 0, 1, 0};
	size_t nbusy = busy_streams(p, keys, lens, m->q);
	if (nbusy > 2)
		return false;
	m->x = nbusy ? &m->q[0] : &m->none;
	m->y = nbusy > 1 ? &m->q[1] : &m->none;
	size_t n = m->x->n + m->y->n;
	m->t = n * part / nparts / align * align;
	m->end = part + 1 == nparts ? n : n * (part + 1) / nparts / align * align;
	m->i = merge_split(m->x, m->y, m->t), m->j = m->t - m->i;
	m->iend = merge_split(m->x, m->y, m->end), m->jend = m->end - m->iend;
	m->a = (struct walk){m->x, 0, 0}, m->b = (struct walk){m->y, 0, 0};
	if (m->i < m->iend && m->j < m->jend) {
		seq_find(m->x, m->i, &m->a.u, &m->a.at);
		seq_find(m->y, m->j, &m->b.u, &m->b.at);
	}
	return true;
}

/* The next item of the part (both streams have items left): true if it is y's. */
static bool two_way_next(struct two_way *m, int64_t *const *keys)
{
	walk_settle(&m->a);
	walk_settle(&m->b);
	bool from_y = keys[m->b.u][m->b.at] < keys[m->a.u][m->a.at];
	if (from_y)
		m->b.at++, m->j++;
	else
		m->a.at++, m->i++;
	return from_y;
}

/* The two-way merge of the items of one or two streams as bits (out: set where an item
 * is the second stream's), part `part` of `nparts`: its share cut at multiples of 64, so
 * that each part writes whole words of the zeroed `out`. */
static void merge_bits(const struct sbuild *p, int64_t *const *keys, const size_t *lens,
                       uint64_t *out, size_t part, size_t nparts)
{
	struct two_way m;
	if (!two_way_part(p, keys, lens, part, nparts, 64, &m))
		return; /* a host's slot: never */
	size_t t = m.t;
	for (; m.i < m.iend && m.j < m.jend; t++)
		if (two_way_next(&m, keys))
			out[t >> 6] |= (uint64_t)1 << (t & 63);
	for (; m.j < m.jend; m.j++, t++) /* the rest the second stream's (else the first's: 0) */
		out[t >> 6] |= (uint64_t)1 << (t & 63);
}

/* The merged order of the units' sequences of keys (lens[u] each): out[t] is the unit of
 * the t-th item. With the items in units of one or two streams, part `part` of `nparts`
 * of it (two_way_part); else, for part 0, all of it by a small heap of units, as
 * trace/merge.c. */
static void merge_order(const struct sbuild *p, int64_t *const *keys, const size_t *lens,
                        uint32_t *out, size_t part, size_t nparts)
{
	size_t n = p->nunits;
	struct two_way m;
	if (two_way_part(p, keys, lens, part, nparts, 1, &m)) {
		size_t t = m.t;
		while (m.i < m.iend && m.j < m.jend) {
			struct walk *w = two_way_next(&m, keys) ? &m.b : &m.a;
			out[t++] = (uint32_t)w->u; /* the unit it was taken from (at is past it) */
		}
		if (m.i < m.iend)
			copy_units(m.x, m.i, m.iend, out + t);
		else if (m.j < m.jend)
			copy_units(m.y, m.j, m.jend, out + t);
		return;
	}
	if (part)
		return;
	size_t *heap = vgq_xcalloc(n + 1, sizeof *heap), nheap = 0;
	size_t *at = vgq_xcalloc(n + 1, sizeof *at);
	int64_t *head = vgq_xcalloc(n + 1, sizeof *head);
	for (size_t s = 0; s < n; s++)
		if (lens[s]) {
			head[s] = keys[s][0];
			size_t i = nheap++;
			heap[i] = s;
			while (i && before(head, heap[i], heap[(i - 1) / 2])) {
				size_t up = (i - 1) / 2, tmp = heap[i];
				heap[i] = heap[up];
				heap[up] = tmp;
				i = up;
			}
		}
	for (size_t t = 0; nheap; t++) {
		size_t s = heap[0];
		out[t] = (uint32_t)s;
		if (++at[s] < lens[s])
			head[s] = keys[s][at[s]];
		else
			heap[0] = heap[--nheap];
		for (size_t i = 0;;) {
			size_t l = 2 * i + 1, r = l + 1, m = i;
			if (l < nheap && before(head, heap[l], heap[m]))
				m = l;
			if (r < nheap && before(head, heap[r], heap[m]))
				m = r;
			if (m == i)
				break;
			size_t tmp = heap[i];
			heap[i] = heap[m];
			heap[m] = tmp;
			i = m;
		}
	}
	free(heap);
	free(at);
	free(head);
}

/* Column c of a relation: -1 the `from` column, else attribute c. */
static void *column(struct vgq_relation *r, long c)
{
	return c < 0 ? (void *)r->from : *(void **)&r->cols[c].i;
}

static size_t column_size(const struct vgq_relation *r, long c)
{
	return c < 0 ? sizeof *r->from : vgq_value_size(r->attrs[c].type);
}

/* A text of a worker's pool as the database's pool holds it (the same text may have
 * been interned by two workers): remembered by address, the few texts a column repeats
 * looked up once. */
struct text_memo {
	const char *from[256], *to[256];
};

static const char *database_text(struct text_memo *m, const struct vgq_pool *pool, const char *s)
{
	if (!s)
		return NULL;
	size_t h = (size_t)(vgq_mix((uintptr_t)s) & 255);
	if (m->from[h] != s) {
		m->from[h] = s;
		m->to[h] = vgq_pool_find(pool, s, strlen(s));
	}
	return m->to[h];
}

#define REPOINT_TUPLES ((size_t)1 << 16) /* a job's share: the threads balance */

/* The repointing jobs: each text column of each piece a worker made whose texts the
 * database's pool did not all take (its own were kept), in parts. Before the gather,
 * so that it moves texts as words, and on the threads (one text a value: the dearest
 * column of a merge when done in it). */
static void plan_repoints(struct sbuild *p)
{
	size_t cap = 0;
	for (size_t j = 0; j < p->npieces; j++) {
		const struct vgq_relation *r = p->pslot[j]->rel;
		for (size_t a = 0; a < r->nattrs; a++) {
			if (r->attrs[a].type != VGQ_STRING)
				continue;
			for (size_t s = 0; s < p->nunits; s++) {
				size_t n = p->done[s].piece[j]->ntuples;
				if (!p->repoint[p->done[s].worker])
					continue;
				for (size_t t0 = 0; t0 < n; t0 += REPOINT_TUPLES) {
					if (p->nrepoints == cap) {
						cap = cap ? 2 * cap : 16;
						p->repoints = vgq_xrealloc(p->repoints, cap,
						                           sizeof *p->repoints);
					}
					size_t t1 =
					    n - t0 > REPOINT_TUPLES ? t0 + REPOINT_TUPLES : n;
					p->repoints[p->nrepoints++] =
					    (struct repoint_job){j, s, t0, t1, (long)a};
				}
			}
		}
	}
}

static void repoint(const struct sbuild *p, const struct repoint_job *job)
{
	struct text_memo *memo = vgq_xcalloc(1, sizeof *memo);
	const char **v = column(p->done[job->s].piece[job->j], job->c);
	for (size_t t = job->t0; t < job->t1; t++)
		v[t] = database_text(memo, p->main->pool, v[t]);
	free(memo);
}

/* Where slot j's tuples are gathered: its host piece, or the relation itself. */
static struct vgq_relation *merged(const struct sbuild *p, size_t j)
{
	return p->host[j] == SIZE_MAX ? p->pslot[j]->rel : p->done[p->host[j]].piece[j];
}

/* Gathers column c of slot j from every unit's piece in merged order (the units of more
 * than two streams) into the relation's own column. */
static void gather_units(struct sbuild *p, size_t j, long c)
{
	struct vgq_relation *r = merged(p, j);
	struct vgq_relation **piece = vgq_xcalloc(p->nunits + 1, sizeof *piece);
	size_t *pos = vgq_xcalloc(p->nunits + 1, sizeof *pos); /* every piece from its start */
	for (size_t s = 0; s < p->nunits; s++)
		piece[s] = p->done[s].piece[j];
	vgq_gather_units(piece, p->nunits, c, column_size(r, c), p->merge_order[j], 0,
	                 p->merge_n[j], pos, column(r, c));
	free(piece);
	free(pos);
}

/* The units [u0[k], u1[k]) of each of the first two streams holding tuples of slot j (the
 * merge's bits' two sides, k = 1 the set bits'); how many streams, at most 2. */
static size_t two_streams(const struct sbuild *p, size_t j, size_t u0[2], size_t u1[2])
{
	size_t ns = 0;
	for (size_t st = 0; st < p->nstreams && ns < 2; st++) {
		size_t a = p->first_unit[st], b = p->first_unit[st + 1], n = 0;
		for (size_t u = a; u < b; u++)
			n += p->merge_len[j][u];
		if (n)
			u0[ns] = a, u1[ns++] = b;
	}
	return ns;
}

/* One stream's units in a two-stream gather, walked from the end: the unit read, the
 * start of its column and the end of what is left of it (the host's column is the
 * destination: its values only move up, a value written at or after where it is read). */
struct side {
	size_t u0, u;
	const char *base, *at;
};

static void side_unit(const struct sbuild *p, size_t j, long c, size_t size, struct side *sd,
                      size_t u)
{
	sd->u = u;
	sd->base = column(p->done[u].piece[j], c);
	sd->at = sd->base + p->merge_len[j][u] * size;
}

/* The side at a unit with values left; false when the stream has none left. */
static bool side_settle(const struct sbuild *p, size_t j, long c, size_t size, struct side *sd)
{
	while (sd->at == sd->base) {
		if (!sd->base || sd->u == sd->u0)
			return false;
		side_unit(p, j, c, size, sd, sd->u - 1);
	}
	return true;
}

/* The last values of one side, all of the rest: dst[0, t) (memmove: the host's move up). */
static void gather_rest(const struct sbuild *p, size_t j, long c, size_t size, char *dst,
                        struct side *sd, size_t t)
{
	while (t && side_settle(p, j, c, size, sd)) {
		size_t k = (size_t)(sd->at - sd->base) / size;
		k = k < t ? k : t;
		sd->at -= k * size;
		t -= k;
		if (sd->at != dst + t * size)
			memmove(dst + t * size, sd->at, k * size);
	}
}

/* Gathers column c of slot j, whose tuples are of one or two streams, into the host
 * piece's column grown to hold them all (fewer fresh pages to fault and clear than a new
 * one), from its end backwards by the merge's bits: in stretches where neither stream's
 * unit runs out, each value chosen between the two streams' next without a branch. */
static void gather_two(struct sbuild *p, size_t j, long c)
{
	struct vgq_relation *r = merged(p, j);
	size_t size = column_size(r, c), t = p->merge_n[j];
	char *dst = column(r, c);
	const uint64_t *bits = p->merge_bits[j];
	struct side sd[2] = {{0}, {0}}; /* a stream without tuples: no base, spent */
	size_t u0[2], u1[2], ns = two_streams(p, j, u0, u1);
	for (size_t k = 0; k < ns; k++) {
		sd[k].u0 = u0[k];
		side_unit(p, j, c, size, &sd[k], u1[k] - 1);
	}
	while (t) {
		bool x = side_settle(p, j, c, size, &sd[0]), y = side_settle(p, j, c, size, &sd[1]);
		if (!x || !y) { /* the rest is one stream's, in its order */
			gather_rest(p, j, c, size, dst, &sd[x ? 0 : 1], t);
			return;
		}
		size_t kx = (size_t)(sd[0].at - sd[0].base) / size,
		       ky = (size_t)(sd[1].at - sd[1].base) / size;
		size_t stretch = kx < ky ? kx : ky;
		stretch = stretch < t ? stretch : t;
		if (size == 8) { /* most columns (texts too, repointed before): words */
			const uint64_t *xa = (const uint64_t *)(const void *)sd[0].at,
			               *ya = (const uint64_t *)(const void *)sd[1].at;
			uint64_t *d = (uint64_t *)(void *)dst;
			for (size_t i = 0; i < stretch; i++) {
				t--;
				uint64_t b = bits[t >> 6] >> (t & 63) & 1;
				uint64_t vx = xa[-1], vy = ya[-1];
				d[t] = b ? vy : vx;
				ya -= b;
				xa -= b ^ 1;
			}
			sd[0].at = (const char *)xa;
			sd[1].at = (const char *)ya;
		} else {
			for (size_t i = 0; i < stretch; i++) {
				t--;
				struct side *from = &sd[bits[t >> 6] >> (t & 63) & 1];
				from->at -= size;
				memmove(dst + t * size, from->at, size);
			}
		}
	}
}

static void gather(struct sbuild *p, size_t j, long c)
{
	if (p->merge_bits[j])
		gather_two(p, j, c);
	else
		gather_units(p, j, c);
}

/* Column c of slot j's pieces, but the host's, freed once gathered: the merge then holds
 * the pieces and the columns it has made, not the pieces twice over (a billion-event
 * trace's Lock: 2.4 GB a copy). One thread releases at a time (a piece's column memory is
 * not shared between threads). */
static void drop_sources(struct sbuild *p, size_t j, long c)
{
	pthread_mutex_lock(&p->drop_mu);
	for (size_t s = 0; s < p->nunits; s++)
		if (s != p->host[j])
			vgq_relation_drop_column(p->done[s].piece[j], c);
	pthread_mutex_unlock(&p->drop_mu);
}

static void *merge_main(void *arg)
{
	struct sbuild *p = arg;
	for (;;) {
		size_t job = __atomic_fetch_add(&p->next_job, 1, __ATOMIC_RELAXED);
		size_t j = 0;
		long c = -1;
		for (size_t seen = 0; j < p->npieces; j++) { /* job -> (slot, column) */
			size_t cols = p->pslot[j]->rel->nattrs + 1;
			if (job < seen + cols) {
				c = (long)(job - seen) - 1;
				break;
			}
			seen += cols;
		}
		if (j == p->npieces)
			return NULL;
		if (p->merge_n[j] && !p->defer[j]) {
			pthread_mutex_lock(&p->drop_mu);
			vgq_relation_reserve_column(merged(p, j), c, p->merge_n[j]);
			pthread_mutex_unlock(&p->drop_mu);
			gather(p, j, c);
			drop_sources(p, j, c);
		}
	}
}

struct on_threads_call {
	void *(*fn)(void *);
	void *const *args;
};

static void on_thread(void *ctx, unsigned w)
{
	const struct on_threads_call *c = ctx;
	c->fn(c->args[w]);
}

/* Runs fn on the threads (this one among them), fn(args[w]) on thread w. */
static void on_threads(struct sbuild *p, void *(*fn)(void *), void *const *args)
{
	struct on_threads_call c = {fn, args};
	vg_threads_run(p->nworkers, p->nworkers, on_thread, &c);
}

/* The merged orders, in parts that are jobs on the threads: of each interval relation's
 * marks (for the pairing; the larger, first), then of each piece slot's tuples. */
static void *order_main(void *arg)
{
	struct sbuild *p = arg;
	int64_t **keys = vgq_xcalloc(p->nunits + 1, sizeof *keys);
	size_t *lens = vgq_xcalloc(p->nunits + 1, sizeof *lens);
	size_t nparts = 8 * (size_t)p->nworkers; /* small parts: a slower thread takes fewer */
	for (;;) {
		size_t job = __atomic_fetch_add(&p->next_order, 1, __ATOMIC_RELAXED);
		if (job < p->nrepoints) {
			repoint(p, &p->repoints[job]);
			continue;
		}
		job -= p->nrepoints;
		if (job >= 2 * p->npieces * nparts)
			break;
		size_t part = job % nparts, j = job / nparts % p->npieces;
		if (job >= p->npieces * nparts) {              /* the tuples */
			for (size_t s = 0; s < p->nunits; s++) /* no marker: the time recorded */
				keys[s] = p->done[s].piece[j]->from;
			if (p->merge_bits[j])
				merge_bits(p, keys, p->merge_len[j], p->merge_bits[j], part,
				           nparts);
			else if (p->merge_n[j])
				merge_order(p, keys, p->merge_len[j], p->merge_order[j], part,
				            nparts);
		} else if (p->mark_order[j]) {
			for (size_t s = 0; s < p->nunits; s++) {
				keys[s] = p->done[s].marks[j].ts;
				lens[s] = p->done[s].marks[j].n;
			}
			merge_order(p, keys, lens, p->mark_order[j], part, nparts);
		}
	}
	free(keys);
	free(lens);
	return NULL;
}

/* Slot j's relation left unmerged: its pieces and merged order handed to it. */
static void leave_unmerged(struct sbuild *p, size_t j)
{
	struct vgq_unmerged_from f = {.n = p->merge_n[j], .nunits = p->nunits};
	f.piece = vgq_xcalloc(p->nunits + 1, sizeof *f.piece);
	for (size_t s = 0; s < p->nunits; s++) {
		f.piece[s] = p->done[s].piece[j];
		p->done[s].piece[j] = NULL;
	}
	if (p->merge_bits[j]) { /* the first two streams holding tuples: the bits' sides */
		size_t u0[2] = {0, 0}, u1[2] = {0, 0};
		two_streams(p, j, u0, u1);
		f.a0 = u0[0], f.a1 = u1[0], f.b0 = u0[1], f.b1 = u1[1];
		f.bits = p->merge_bits[j];
		p->merge_bits[j] = NULL;
	} else {
		f.order = p->merge_order[j];
		p->merge_order[j] = NULL;
	}
	free(p->merge_len[j]);
	vgq_unmerged_attach(p->pslot[j]->rel, &f);
}

static void merge_pieces(struct sbuild *p)
{
	p->merge_order = vgq_xcalloc(p->npieces + 1, sizeof *p->merge_order);
	p->merge_bits = vgq_xcalloc(p->npieces + 1, sizeof *p->merge_bits);
	p->merge_len = vgq_xcalloc(p->npieces + 1, sizeof *p->merge_len);
	p->merge_n = vgq_xcalloc(p->npieces + 1, sizeof *p->merge_n);
	p->host = vgq_xcalloc(p->npieces + 1, sizeof *p->host);
	p->defer = vgq_xcalloc(p->npieces + 1, sizeof *p->defer);
	for (size_t j = 0; j < p->npieces; j++) {
		size_t n = 0, busy = 0, largest = 0, last_busy = SIZE_MAX;
		size_t *lens = p->merge_len[j] = vgq_xcalloc(p->nunits + 1, sizeof *lens);
		for (size_t s = 0; s < p->nunits; s++) {
			lens[s] = p->done[s].piece[j]->ntuples;
			n += lens[s];
			if (lens[s] &&
			    p->units[s]->stream != last_busy) /* streams holding tuples */
				busy++, last_busy = p->units[s]->stream;
			if (lens[s] > lens[largest])
				largest = s;
		}
		p->merge_n[j] = n;
		/* any unit may take them (each of its values lands at or after its place) */
		p->host[j] = busy && busy <= 2 ? largest : SIZE_MAX;
		if (!n)
			continue;
		/* no pairing to come: the cache's writer gathers it (what it does not take,
		 * vgq_database_settle) */
		p->defer[j] = p->main->defer_merge && p->pslot[j]->rel->kind == VGQ_REL_EVENT;
		if (p->host[j] == SIZE_MAX)
			p->merge_order[j] = vgq_xrealloc(NULL, n, sizeof *p->merge_order[j]);
		else
			p->merge_bits[j] = vgq_xcalloc((n + 63) / 64, sizeof *p->merge_bits[j]);
	}
	void **args = vgq_xcalloc(p->nworkers, sizeof *args);
	for (unsigned k = 0; k < p->nworkers; k++)
		args[k] = p;
	p->mark_order = vgq_xcalloc(p->npieces + 1, sizeof *p->mark_order);
	p->mark_n = vgq_xcalloc(p->npieces + 1, sizeof *p->mark_n);
	for (size_t j = 0; j < p->npieces; j++) {
		if (p->pslot[j]->rel->kind != VGQ_REL_INTERVAL)
			continue;
		for (size_t s = 0; s < p->nunits; s++)
			p->mark_n[j] += p->done[s].marks[j].n;
		p->mark_order[j] = vgq_xrealloc(NULL, p->mark_n[j] + 1, sizeof *p->mark_order[j]);
	}
	plan_repoints(p);
	on_threads(p, order_main, args);
	on_threads(p, merge_main, args);
	free(args);
	for (size_t j = 0; j < p->npieces; j++) {
		if (p->defer[j]) {
			leave_unmerged(p, j);
			continue;
		}
		if (p->merge_n[j])
			vgq_relation_reserve_rest(merged(p, j), p->merge_n[j]);
		if (p->host[j] != SIZE_MAX && p->merge_n[j])
			vgq_relation_take_columns(p->pslot[j]->rel, p->done[p->host[j]].piece[j]);
		free(p->merge_order[j]);
		free(p->merge_bits[j]);
		free(p->merge_len[j]);
		/* the pieces are merged: their memory free for the pairing */
		for (size_t s = 0; s < p->nunits; s++) {
			vgq_relation_free(p->done[s].piece[j]);
			p->done[s].piece[j] = NULL;
		}
	}
	free(p->merge_order);
	free(p->merge_bits);
	free(p->merge_len);
	free(p->merge_n);
	free(p->host);
	free(p->defer);
}

/* ---- the pairing of intervals ---- */

struct pworker {
	struct sbuild *p;
	struct builder b; /* the database's, but for its cache of the last image */
};

/* Interval relation j's begins and ends, every stream's, walked in merged order: each
 * begin opens the next tuple (the merge made them in that order), each end closes one,
 * as the one-threaded pass pairs them. */
static void pair_slot(struct sbuild *p, struct builder *pb, size_t j)
{
	struct vgq_relation *r = p->pslot[j]->rel;
	for (size_t t = 0; t < r->ntuples; t++) { /* as a begin's tuple is made: open */
		r->to[t] = r->from[t];
		r->open[t] = true;
	}
	size_t *at = vgq_xcalloc(p->nunits + 1, sizeof *at);
	size_t n = p->mark_n[j], begun = 0;
	const uint32_t *order = p->mark_order[j]; /* merge_pieces made it */
	unsigned maxf = 0; /* the most values of an end: unpacked into vals */
	for (size_t c = 0; c < p->nclasses; c++)
		if (p->mark_slot[c] == j && p->main->by_class[c]->type->nfields > maxf)
			maxf = p->main->by_class[c]->type->nfields;
	struct vgt_value *vals = vgq_xcalloc(maxf + 1, sizeof *vals);
	if (p->text_ends[j]) /* its ends put texts in the database's pool */
		pthread_mutex_lock(&p->pool_mu);
	for (size_t k = 0; k < n; k++) {
		const struct sdone *d = &p->done[order[k]];
		size_t i = at[order[k]]++;
		const struct mark *m = &d->marks[j].m[i];
		const struct tinfo *ti = p->main->by_class[m->cls >> 1];
		const struct vgt_image *image = d->images[m->image];
		if (!(m->cls & 1)) {
			vgq_build_reopen(pb, ti, begun++, image);
			continue;
		}
		if (m->values != NO_VALUES)
			unpack_end(d->endv + m->values, ti->type->nfields, vals);
		struct vgt_event ev = {.type = ti->type,
		                       .image = image,
		                       .ts = d->marks[j].ts[i],
		                       .values = m->values == NO_VALUES ? NULL : vals};
		vgq_build_feed(pb, &ev);
	}
	if (p->text_ends[j])
		pthread_mutex_unlock(&p->pool_mu);
	free(vals);
	free(at);
}

static void *pair_main(void *arg)
{
	struct pworker *w = arg;
	struct sbuild *p = w->p;
	for (;;) {
		size_t j = __atomic_fetch_add(&p->next_pair, 1, __ATOMIC_RELAXED);
		if (j >= p->npieces)
			return NULL;
		if (p->pslot[j]->rel->kind == VGQ_REL_INTERVAL)
			pair_slot(p, &w->b, j);
	}
}

/* The interval relations paired, each on one of the threads. */
static void pair_intervals(struct sbuild *p)
{
	struct pworker *w = vgq_xcalloc(p->nworkers, sizeof *w);
	void **args = vgq_xcalloc(p->nworkers, sizeof *args);
	for (unsigned k = 0; k < p->nworkers; k++) {
		w[k].p = p;
		w[k].b = *p->main;
		w[k].b.last_image = NULL;
		args[k] = &w[k];
	}
	on_threads(p, pair_main, args);
	free(args);
	free(w);
}

/* The events copied aside, every stream's, in merged order: names, then the relations
 * (entity relations and the like), as the one-threaded pass feeds them. */
static void feed_aside(struct sbuild *p)
{
	size_t *at = vgq_xcalloc(p->nunits + 1, sizeof *at);
	for (;;) {
		size_t best = SIZE_MAX;
		for (size_t s = 0; s < p->nunits; s++)
			if (at[s] < p->done[s].naside &&
			    (best == SIZE_MAX ||
			     p->done[s].aside[at[s]].key < p->done[best].aside[at[best]].key))
				best = s;
		if (best == SIZE_MAX)
			break;
		struct sdone *d = &p->done[best];
		struct vgt_event ev = d->aside[at[best]++].ev;
		uintptr_t v = (uintptr_t)ev.values;
		ev.values = v == UINTPTR_MAX ? NULL : d->values + v;
		vgt_names_observe(p->main->names, &ev);
		vgq_build_feed(p->main, &ev);
	}
	free(at);
}

/* ---- the whole ---- */

static void sbuild_free(struct sbuild *p)
{
	for (size_t s = 0; p->done && s < p->nunits; s++) {
		struct sdone *d = &p->done[s];
		for (size_t j = 0; d->piece && j < p->npieces; j++) {
			vgq_relation_free(d->piece[j]);
		}
		for (size_t j = 0; d->marks && j < p->npieces; j++) {
			vgq_colmem_release(d->mem, d->marks[j].ts);
			vgq_colmem_release(d->mem, d->marks[j].m);
		}
		vgq_colmem_release(d->mem, d->values);
		vgq_colmem_release(d->mem, d->endv);
		vgq_colmem_free(d->mem);
		free(d->images);
		free(d->piece);
		free(d->marks);
		free(d->aside);
	}
	for (size_t i = 0; p->splits && i < p->nstreams; i++)
		if (p->splits[i]) /* not joined: the build stopped before reading */
			vgt_split_join(p->splits[i]);
	free(p->splits);
	free(p->splits_read);
	free(p->first_unit);
	for (size_t u = 0; u < p->nunits; u++) {
		if (p->units[u]->d) /* not numbered: its piece is not in `done` */
			free(p->units[u]->d);
		free(p->units[u]);
	}
	free(p->units);
	pthread_mutex_destroy(&p->units_mu);
	free(p->done);
	free(p->pslot);
	free(p->piece_class);
	free(p->aside_class);
	for (size_t j = 0; p->mark_order && j < p->npieces; j++)
		free(p->mark_order[j]);
	free(p->mark_order);
	free(p->mark_n);
	free(p->mark_slot);
	free(p->text_ends);
	pthread_mutex_destroy(&p->pool_mu);
	pthread_mutex_destroy(&p->drop_mu);
	free(p->w);
	free(p->repoint);
	free(p->repoints);
	free(p);
}

/* Streams of twice this many bytes or more are cut into ranges of about this size (at
 * most MAX_RANGES): a thread that has read its stream takes the later half of the ranges
 * another has not begun, so a thread that reads faster (a faster CPU, a smaller stream)
 * reads more, to the end. Ranges cost nothing until taken: a stream read by one thread
 * is one piece, however many ranges it has. VIGIL_SPLIT: `off` (streams read whole), or
 * the bytes of a range (tests). */
#define RANGE_BYTES ((uint64_t)4 << 20)
#define MAX_RANGES 64

static uint64_t range_bytes(void)
{
	const char *env = getenv("VIGIL_SPLIT");
	if (!env || !*env)
		return RANGE_BYTES;
	if (!strcmp(env, "off"))
		return UINT64_MAX;
	char *end;
	unsigned long long v = strtoull(env, &end, 10);
	return *end || v < 4096 ? RANGE_BYTES : (uint64_t)v;
}

/* The bytes of ranges [from, to) of a split. */
static uint64_t ranges_bytes(struct vgt_split *sp, size_t from, size_t to)
{
	uint64_t n = 0;
	for (size_t r = from; r < to; r++)
		n += vgt_split_bytes(sp, r);
	return n;
}

/* The units of reading, one per stream: its ranges when it is cut, else the stream
 * whole; then, while there are fewer units than threads, the unit of the most ranges
 * halved (so every thread has a unit from the start). */
static void make_units(struct sbuild *p, unsigned threads)
{
	uint64_t least = range_bytes();
	p->splits = vgq_xcalloc(p->nstreams + 1, sizeof *p->splits);
	for (size_t i = 0; i < p->nstreams; i++) {
		uint64_t size = vgt_stream_at(p->main->trace, i)->size;
		uint64_t parts = size / least < MAX_RANGES ? size / least : MAX_RANGES;
		struct vgt_split *sp = parts >= 2 ? vgt_source_split(p->src, i, parts) : NULL;
		p->splits[i] = sp;
		add_unit(p, i, sp, 0, sp ? vgt_split_count(sp) : 1, size);
	}
	while (p->nunits < threads) {
		struct unit *best = NULL;
		for (size_t u = 0; u < p->nunits; u++) {
			struct unit *g = p->units[u];
			if (g->split && g->end - g->first >= 2 &&
			    (!best || g->end - g->first > best->end - best->first))
				best = g;
		}
		if (!best)
			break;
		size_t mid = best->first + (best->end - best->first) / 2;
		add_unit(p, best->stream, best->split, mid, best->end,
		         ranges_bytes(best->split, mid, best->end));
		best->end = mid;
		best->bytes = ranges_bytes(best->split, best->first, mid);
	}
}

/* After the reading: the units in (stream, first range) order, `done` by unit; the
 * first unit of each stream. */
static int by_place(const void *x, const void *y)
{
	const struct unit *a = *(struct unit *const *)x, *b = *(struct unit *const *)y;
	return a->stream != b->stream ? (a->stream > b->stream) - (a->stream < b->stream)
	                              : (a->first > b->first) - (a->first < b->first);
}

static void number_units(struct sbuild *p)
{
	qsort(p->units, p->nunits, sizeof *p->units, by_place);
	p->done = vgq_xcalloc(p->nunits + 1, sizeof *p->done);
	p->first_unit = vgq_xcalloc(p->nstreams + 1, sizeof *p->first_unit);
	for (size_t u = p->nunits; u-- > 0;) {
		p->done[u] = *p->units[u]->d;
		free(p->units[u]->d);
		p->units[u]->d = NULL;
		p->first_unit[p->units[u]->stream] = u;
	}
	p->first_unit[p->nstreams] = p->nunits; /* every stream has a unit: make_units */
}

/* Every split stream's ranges joined (their counts the stream's); false when a range
 * met damage, or its times went back from the range before: read whole, in the merged
 * pass. */
static bool join_units(struct sbuild *p)
{
	bool ok = true;
	p->splits_read = vgq_xcalloc(p->nstreams + 1, sizeof *p->splits_read);
	for (size_t i = 0; i < p->nstreams; i++) {
		p->splits_read[i] = p->splits[i] ? vgt_split_count(p->splits[i]) : 1;
		if (p->splits[i] && !vgt_split_join(p->splits[i]))
			ok = false;
		p->splits[i] = NULL;
	}
	for (size_t u = 1; u < p->nunits; u++) {
		const struct sdone *d = &p->done[u], *before = &p->done[u - 1];
		if (p->units[u]->stream == p->units[u - 1]->stream && d->events && before->events &&
		    d->first_key < before->last)
			ok = false;
	}
	return ok;
}

bool vgq_build_streams(struct builder *b, struct vgq_reader *rd, struct vgq_waits *waits,
                       struct vgq_database *db, unsigned threads)
{
	size_t nstreams = vgt_source_stream_count(rd->src);
	vgq_phase_units(0, 0); /* a build that went back to the merged pass: none */
	if (threads < 2 || waits || !b->trace || !nstreams || !b->names)
		return false;
	struct sbuild *p = vgq_xcalloc(1, sizeof *p);
	p->main = b;
	p->src = rd->src;
	p->nstreams = nstreams;
	pthread_mutex_init(&p->pool_mu, NULL);
	pthread_mutex_init(&p->drop_mu, NULL);
	pthread_mutex_init(&p->units_mu, NULL);
	if (!classify(p, b)) {
		sbuild_free(p);
		return false;
	}
	make_units(p, threads);
	bool cut = false;
	for (size_t i = 0; i < nstreams; i++)
		cut |= p->splits[i] != NULL;
	if (nstreams < 2 && !cut) { /* one stream, not cut: the merged pass is as fast */
		sbuild_free(p);
		return false;
	}
	/* with a stream cut, every thread (ranges are taken from a unit by a free thread) */
	p->nworkers = cut || threads < nstreams ? threads : (unsigned)nstreams;
	p->w = vgq_xcalloc(p->nworkers, sizeof *p->w);
	p->repoint = vgq_xcalloc(p->nworkers, sizeof *p->repoint);
	void **args = vgq_xcalloc(p->nworkers, sizeof *args);
	for (unsigned k = 0; k < p->nworkers; k++) {
		worker_init(&p->w[k], p, k);
		args[k] = &p->w[k];
	}
	uint64_t lap = vgq_phase_clock();
	on_threads(p, worker_main, args);
	free(args);
	number_units(p);
	bool ok = join_units(p) && !p->failed;
	vgq_phase_lap(VGQ_PHASE_READ, &lap);
	if (ok) {
		/* every text of the pieces in the database's pool, then the pieces merged */
		for (unsigned k = 0; k < p->nworkers; k++) {
			p->repoint[k] = vgq_pool_absorb(b->pool, p->w[k].b.pool) > 0;
			p->w[k].b.pool = NULL;
			for (size_t i = 0; i < p->w[k].b.nwarnings; i++)
				vgq_build_warn(b, "%s", p->w[k].b.warnings[i]);
		}
		merge_pieces(p);
		vgq_phase_lap(VGQ_PHASE_MERGE, &lap);
		pair_intervals(p);
		vgq_phase_lap(VGQ_PHASE_PAIR, &lap);
		feed_aside(p);
		vgq_phase_lap(VGQ_PHASE_ASIDE, &lap);
		size_t first = SIZE_MAX;
		for (size_t s = 0; s < p->nunits; s++) {
			const struct sdone *d = &p->done[s];
			if (!d->events)
				continue;
			if (first == SIZE_MAX || d->first_key < p->done[first].first_key)
				first = s;
			if (!db->events || d->last > db->last)
				db->last = d->last;
			db->events += d->events;
		}
		if (first != SIZE_MAX)
			db->first = p->done[first].first_ts;
		size_t ranges = 0;
		for (size_t i = 0; i < nstreams; i++)
			ranges += p->splits_read[i];
		vgq_phase_units(p->nunits, ranges);
	}
	for (unsigned k = 0; k < p->nworkers; k++)
		worker_free(&p->w[k]);
	sbuild_free(p);
	vgq_phase_lap(VGQ_PHASE_FINISH, &lap);
	return ok;
}
