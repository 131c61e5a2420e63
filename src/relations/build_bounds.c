/* A query's selections handed to the build (docs/query.md "How selections reach
 * decoding"): time bounds and key selections on event relations, put on the builder's
 * event types. An event of a bounded relation recorded outside its bound is passed over
 * by the reader (its payload walked, not decoded) and makes no tuple; an event failing
 * every alternative of its relation's key selection is decoded (the key is in it) but
 * makes no tuple. Interval and state relations are never bounded: an interval's begin
 * may lie before the bound and its end within it, and a key an end matches on may hold
 * other values at its begin. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "relations/build.h"

/* The bound on relation `name` the options give (the span of all bounds naming it). */
static bool bound_of(const struct vgq_build_options *o, const char *name, int64_t *lo, int64_t *hi)
{
	bool found = false;
	for (size_t i = 0; i < o->nbounds; i++) {
		const struct vgq_time_bound *q = &o->bounds[i];
		if (strcasecmp(q->relation, name))
			continue;
		*lo = found && *lo < q->lo ? *lo : q->lo;
		*hi = found && *hi > q->hi ? *hi : q->hi;
		found = true;
	}
	return found;
}

/* The field of ti that gives attribute `attr` exactly as the engine compares it (an
 * integer field of an integer attribute of the same signedness, a text field of a text
 * attribute), or -1. */
static int key_field(const struct tinfo *ti, const struct vgq_key_cond *k)
{
	const struct vgq_relation *r = ti->slot->rel;
	int a = vgq_relation_attr(r, k->attr);
	if (a < 0)
		return -1;
	for (unsigned f = 0; f < ti->type->nfields; f++) {
		if (ti->col[f] != a)
			continue;
		enum vgt_vtype ft = ti->type->fields[f].type;
		enum vgq_type at = r->attrs[a].type;
		bool ok = k->is_string ? ft == VGT_STRING && at == VGQ_STRING &&
		                             (k->op == VGQ_KEY_EQ || k->op == VGQ_KEY_NE)
		                       : (ft == VGT_INT && at == VGQ_INT) ||
		                             (ft == VGT_UINT && at == VGQ_UINT && k->i >= 0);
		return ok ? (int)f : -1;
	}
	return -1;
}

/* The checks of relation rel's alternatives on type ti, appended to bb->checks (room for
 * o->nkeys more); false (nothing appended) when some condition cannot be checked on this
 * type: then its events are all kept. */
static bool key_checks(struct tinfo *ti, const struct vgq_build_options *o,
                       struct vgq_build_bounds *bb, size_t *n)
{
	size_t start = *n;
	for (size_t i = 0; i < o->nkeys; i++) {
		const struct vgq_key_cond *k = &o->keys[i];
		if (strcasecmp(k->relation, ti->slot->rel->name))
			continue;
		int f = key_field(ti, k);
		if (f < 0) {
			*n = start;
			return false;
		}
		bb->checks[(*n)++] = (struct vgq_key_check){k->alt, f, k->op, k};
	}
	return *n > start;
}

static bool holds(const struct vgq_key_check *c, const struct vgt_value *v)
{
	const struct vgq_key_cond *k = c->cond;
	int cmp;
	if (k->is_string)
		cmp = strcmp(v->str.ptr, k->s) != 0; /* = and != only */
	else if (v->type == VGT_INT)
		cmp = (v->i > k->i) - (v->i < k->i);
	else
		cmp = (v->u > (uint64_t)k->i) - (v->u < (uint64_t)k->i);
	switch (c->op) {
	case VGQ_KEY_EQ:
		return cmp == 0;
	case VGQ_KEY_NE:
		return cmp != 0;
	case VGQ_KEY_LT:
		return cmp < 0;
	case VGQ_KEY_LE:
		return cmp <= 0;
	case VGQ_KEY_GT:
		return cmp > 0;
	case VGQ_KEY_GE:
		return cmp >= 0;
	}
	return true;
}

bool vgq_build_keys_hold(const struct tinfo *ti, const struct vgt_event *ev)
{
	for (size_t i = 0; i < ti->nchecks;) {
		unsigned alt = ti->checks[i].alt;
		bool all = true;
		for (; i < ti->nchecks && ti->checks[i].alt == alt; i++)
			all = all && holds(&ti->checks[i], &ev->values[ti->checks[i].field]);
		if (all)
			return true;
	}
	return false;
}

static int by_alt(const void *a, const void *b)
{
	const struct vgq_key_check *x = a, *y = b;
	return x->alt != y->alt ? (x->alt < y->alt ? -1 : 1)
	                        : (x->cond > y->cond) - (x->cond < y->cond);
}

/* Counts rel among the relations seen[0..*n) once. */
static void count_once(const struct rslot **seen, size_t *n, const struct rslot *rel)
{
	size_t k = 0;
	while (k < *n && seen[k] != rel)
		k++;
	if (k == *n)
		seen[(*n)++] = rel;
}

/* Event relations under a query's time bound make tuples only of events valid within it
 * (feed.c), and the reader passes over the payloads of their events recorded outside it:
 * not those WaitFor reads, nor vigil's own (names), nor the event after a vg.report.synth
 * marker (its valid time is the marker's: the window keeps it). Nothing is bounded with
 * VIGIL_SKIP=off, or when a keep filter sees every event. */
void vgq_build_bounds_apply(struct builder *b, const struct vgq_build_options *o,
                            const struct vgq_waits *waits, struct vgq_build_bounds *bb)
{
	const char *env = getenv("VIGIL_SKIP");
	*bb = (struct vgq_build_bounds){0};
	/* Packets holding only events passed over are passed over whole, unless the build
	 * must see every event (a keep filter, a stop) */
	bool every = o && (o->keep || o->end_since || o->max_events || o->has_until);
	bb->summaries = !every && !(env && !strcmp(env, "off"));
	if (!o || (!o->nbounds && !o->nkeys) || o->keep || (env && !strcmp(env, "off")))
		return;
	size_t n = vgt_class_count(b->trace), nchecks = 0;
	bb->windows = vgq_xcalloc(n + 1, sizeof *bb->windows);
	bb->checks = vgq_xcalloc(n * o->nkeys + 1, sizeof *bb->checks);
	const struct rslot **bounded = vgq_xcalloc(n + 1, sizeof *bounded);
	const struct rslot **keyed = vgq_xcalloc(n + 1, sizeof *keyed);
	for (size_t c = 0; c < n; c++) {
		const struct vgt_event_type *t = vgt_class_at(b->trace, c);
		bb->windows[c].keeps_next = vgq_is_synth_marker(t);
		struct tinfo *ti = b->by_class[c];
		if (!ti || ti->what != T_EVENT || !ti->slot ||
		    ti->slot->rel->kind != VGQ_REL_EVENT || !strncmp(t->name, "vg.", 3))
			continue;
		size_t from = nchecks;
		if (key_checks(ti, o, bb, &nchecks)) {
			qsort(bb->checks + from, nchecks - from, sizeof *bb->checks, by_alt);
			ti->checks = bb->checks + from;
			ti->nchecks = nchecks - from;
			count_once(keyed, &bb->nkeyed, ti->slot);
		}
		int64_t lo = 0, hi = 0;
		if (!bound_of(o, ti->slot->rel->name, &lo, &hi))
			continue;
		ti->bounded = true;
		ti->lo = lo;
		ti->hi = hi;
		count_once(bounded, &bb->nbounded, ti->slot);
		if (!vgq_waits_wants(waits, t))
			bb->windows[c] =
			    (struct vgt_class_window){.lo = lo, .hi = hi, .active = true};
	}
	free(bounded);
	free(keyed);
	if (!bb->nbounded) { /* the reader has nothing to pass over */
		free(bb->windows);
		bb->windows = NULL;
	}
}

void vgq_build_bounds_count(const struct vgt_trace *t, const struct vgq_build_bounds *bb,
                            struct vgq_database *db)
{
	struct vgq_skip_stats *st = &db->skipped;
	*st = (struct vgq_skip_stats){.nbounded = bb->nbounded, .nkeyed = bb->nkeyed};
	bool any = db->events > 0;
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream_stats *s = &vgt_stream_at(t, i)->stats;
		st->events += s->events_outside;
		st->packets += s->packets_outside;
		st->packets_read += s->packets;
		st->packets_skipped += s->packets_skipped;
		st->events_skipped += s->events_skipped;
		st->packets_positioned += s->packets_positioned;
		if (!s->events_skipped) /* the stream's events were all counted as returned */
			continue;
		db->first = any && db->first < s->first_ts ? db->first : s->first_ts;
		db->last = any && db->last > s->last_ts ? db->last : s->last_ts;
		any = true;
	}
	db->events += st->events_skipped;
	if (getenv("VIGIL_BUILD_STATS")) /* every front end's build, for tests */
		fprintf(stderr,
		        "vigil build: {\"events\":%" PRIu64 ",\"bounded\":%zu,\"keyed\":%zu,"
		        "\"events_outside\":%" PRIu64 ",\"packets_skipped\":%" PRIu64
		        ",\"events_skipped\":%" PRIu64 ",\"packets_positioned\":%" PRIu64 "}\n",
		        db->events, st->nbounded, st->nkeyed, st->events, st->packets_skipped,
		        st->events_skipped, st->packets_positioned);
}

void vgq_build_bounds_free(struct vgq_build_bounds *bb)
{
	free(bb->windows);
	free(bb->checks);
	*bb = (struct vgq_build_bounds){0};
}
