/* A database: built in one merged pass over the trace (the schema from the metadata
 * first, then each event kept by the options fed to feed.c), and looked up by
 * name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relations/build.h"
#include "relations/build_phases.h"
#include "relations/cache_internal.h"

static int by_name(const void *a, const void *b)
{
	const struct rslot *x = *(struct rslot *const *)a;
	const struct rslot *y = *(struct rslot *const *)b;
	int c = strcasecmp(x->rel->name, y->rel->name);
	return c ? c : strcmp(x->rel->name, y->rel->name);
}

void vgq_build_init(struct builder *b, const struct vgt_trace *t)
{
	*b = (struct builder){.pool = vgq_pool_new(), .trace = t};
	b->keys = vgq_keymap_new();
	b->names = vgt_names_new();
}

void vgq_database_print_warnings(const struct vgq_database *db, const char *who, FILE *f)
{
	for (size_t i = 0; i < db->nwarnings; i++)
		fprintf(f, "%s: warning: %s\n", who, db->warnings[i]);
}

void vgq_build_finish(struct builder *b, struct vgq_database *db)
{
	db->warnings = b->warnings;
	db->nwarnings = b->nwarnings;
	struct vgq_relation **rels = vgq_xcalloc(b->nslots ? b->nslots : 1, sizeof *rels);
	bool *by_need = vgq_xcalloc(b->nslots ? b->nslots : 1, sizeof *by_need);
	qsort(b->slots, b->nslots, sizeof *b->slots, by_name);
	for (size_t i = 0; i < b->nslots; i++) {
		rels[i] = b->slots[i]->rel;
		by_need[i] = b->slots[i]->by_need;
		vgq_relation_finish(rels[i], db->last);
		vgq_open_free(&b->slots[i]->open);
		free(b->slots[i]->keyed);
		free(b->slots[i]->begun);
		free(b->slots[i]);
	}
	db->relations = rels;
	db->nrelations = b->nslots;
	db->internal = vgq_xcalloc(1, sizeof *db->internal);
	db->internal->pool = b->pool;
	db->internal->by_need = by_need;
	db->internal->nwarnings_pass = b->nwarnings;

	free(b->slots);
	vgq_build_free_types(b);
	vgq_keymap_free(b->keys);
	vgt_names_free(b->names);
}

const struct vgt_event *vgq_reader_next(struct vgq_reader *r)
{
	for (;;) {
		const struct vgt_event *ev = vgt_source_next(r->src);
		if (!ev)
			return NULL;
		/* vg.report.synth: the stream's next event is synthesized, its valid time is
		 * `at` (docs/consistency.md). */
		r->recorded = ev->ts;
		if (vgq_is_synth_marker(ev->type)) {
			r->synth_stream = ev->stream;
			r->synth_at = ev->ts - (int64_t)ev->clock_value + (int64_t)ev->values[0].u;
			continue;
		}
		if (r->synth_stream && ev->stream == r->synth_stream) {
			r->synthesized = *ev;
			r->synthesized.ts = r->synth_at;
			r->synth_stream = NULL;
			return &r->synthesized;
		}
		return ev;
	}
}

void vgq_build_count(struct vgq_database *db, const struct vgt_event *ev)
{
	if (!db->events++)
		db->first = db->last = ev->ts;
	if (ev->ts > db->last)
		db->last = ev->ts;
}

static bool named(const char *name, const struct vgq_build_options *o)
{
	if (!o || !o->need)
		return true;
	for (size_t i = 0; i < o->nneed; i++)
		if (!strcasecmp(o->need[i], name))
			return true;
	return false;
}

/* Event types of relations not needed are passed over (the built-in entity events,
 * whose relations are made by kind as they come, are kept). */
static void leave_out_unneeded(struct builder *b, const struct vgq_build_options *o)
{
	for (size_t c = 0; o && o->need && c < b->nby_class; c++) {
		const struct tinfo *ti = b->by_class[c];
		if (ti && ti->slot && !named(ti->slot->rel->name, o))
			b->by_class[c] = NULL;
	}
}

/* The classes whose events nothing of the build reads the values of: no relation's (as
 * mapped, or left out), not vigil's own (names, synthesized times) nor WaitFor's. NULL
 * when a keep filter sees every event. */
static bool *unread_payloads(const struct builder *b, const struct vgq_build_options *o,
                             const struct vgq_waits *waits)
{
	if (o && o->keep)
		return NULL;
	size_t n = b->nby_class;
	bool *skip = vgq_xcalloc(n + 1, sizeof *skip);
	for (size_t c = 0; c < n; c++) {
		const struct vgt_event_type *t = vgt_class_at(b->trace, c);
		skip[c] =
		    !b->by_class[c] && strncmp(t->name, "vg.", 3) && !vgq_waits_wants(waits, t);
	}
	return skip;
}

/* Options that watch every event as it is kept (keep, end_since) or stop early need the
 * one merged pass of this thread. */
static bool serial_only(const struct vgq_build_options *o)
{
	return o && (o->keep || o->end_since || o->max_events || o->has_until);
}

struct vgq_database *vgq_database_build_opts(struct vgt_trace *t, const struct vgq_build_options *o)
{
	uint64_t lap = vgq_phase_clock();
	struct builder b;
	vgq_build_init(&b, t);
	b.ends_without_begin = o && o->ends_without_begin;
	b.defer_merge = o && o->defer_merge;
	b.end_since = o ? o->end_since : NULL;
	b.end_since_arg = o ? o->keep_arg : NULL;
	vgq_build_schema(&b, t);
	for (size_t i = 0; i < b.nslots; i++)
		b.slots[i]->by_need = true;
	leave_out_unneeded(&b, o);
	struct vgq_waits *waits = named("WaitFor", o) ? vgq_waits_new(t) : NULL;

	struct vgq_database *db = vgq_xcalloc(1, sizeof *db);
	struct vgq_reader rd = {.src = vgt_source_of(t)};
	bool *skip = unread_payloads(&b, o, waits);
	vgt_source_skip_payloads(rd.src, skip);
	struct vgq_build_bounds bounds;
	vgq_build_bounds_apply(&b, o, waits, &bounds);
	vgt_packet_summaries(t, bounds.summaries);
	vgt_source_skip_outside(rd.src, bounds.windows);
	const struct vgt_event *ev;
	uint64_t read = 0;
	bool dropped = false; /* derived relations need every event (derived.c) */
	unsigned threads = vgt_decode_threads();
	vgq_phase_lap(VGQ_PHASE_OPEN, &lap);
	bool streamed = false; /* build_streams.c timed its own phases */
	if (serial_only(o) || (!(streamed = vgq_build_streams(&b, &rd, waits, db, threads)) &&
	                       !vgq_build_parallel(&b, &rd, waits, db, threads))) {
		while ((!o || !o->max_events || read++ < o->max_events) &&
		       (ev = vgq_reader_next(&rd))) {
			if (o && o->has_until &&
			    rd.recorded > o->until) { /* recorded after: not yet known */
				dropped = true;
				continue;
			}
			if (o && o->keep && !o->keep(o->keep_arg, ev)) {
				dropped = true;
				continue;
			}
			vgq_build_count(db, ev);
			vgt_names_observe(b.names, ev);
			vgq_build_feed(&b, ev);
			vgq_waits_feed(waits, ev);
		}
	}
	if (streamed)
		lap = vgq_phase_clock();
	else
		vgq_phase_lap(VGQ_PHASE_READ, &lap);
	vgt_source_close(rd.src);
	vgt_packet_summaries(t, false); /* the build's readers only */
	free(skip);
	vgq_build_bounds_count(t, &bounds, db);
	if (o && o->max_events && read > o->max_events) /* stopped before the end */
		dropped = true;
	size_t pass_warnings = b.nwarnings; /* the rest are WaitFor's */
	vgq_waits_finish(waits, &b);
	db->damage = vgt_damage_total(t);
	db->partial = db->damage > 0;
	vgq_build_finish(&b, db);
	db->internal->nwarnings_pass = pass_warnings;
	vgq_build_bounds_free(&bounds); /* after the types pointing into it are freed */
	db->internal->trace = t;
	db->internal->whole_trace = !dropped;
	vgq_phase_lap(VGQ_PHASE_FINISH, &lap);
	return db;
}

struct vgq_database *vgq_database_build(struct vgt_trace *t)
{
	return vgq_database_build_opts(t, NULL);
}

void vgq_database_free(struct vgq_database *db)
{
	if (!db)
		return;
	if (db->internal->cache) /* its relations are partly mapped */
		vgc_free(db);
	else
		for (size_t i = 0; i < db->nrelations; i++)
			vgq_relation_free(db->relations[i]);
	free((void *)db->relations);
	for (size_t i = 0; i < db->internal->nclocks; i++)
		vgq_relation_free(db->internal->clocks[i]);
	free(db->internal->clocks);
	free(db->internal->clock_ticks);
	free(db->internal->by_need);
	vgq_derived_free(db);
	for (size_t i = 0; i < db->nwarnings; i++)
		free(db->warnings[i]);
	free(db->warnings);
	vgq_pool_free(db->internal->pool);
	free(db->internal);
	free(db);
}

const struct vgq_relation *vgq_database_find(const struct vgq_database *db, const char *name)
{
	for (size_t i = 0; i < db->nrelations; i++)
		if (!strcasecmp(db->relations[i]->name, name)) {
			if (db->internal->cache) /* mapped: made ready when first asked for */
				vgc_materialize(db->internal->cache, db->relations[i], i);
			return db->relations[i];
		}
	return NULL;
}

const char *vgq_database_string(const struct vgq_database *db, const char *s)
{
	return vgq_pool_find(db->internal->pool, s, strlen(s));
}
