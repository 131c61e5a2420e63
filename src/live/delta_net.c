/* The update network (delta.h): a relation builder fed event by event and never
 * finished; per source relation, the tuples not yet final; per retrieve, its variables'
 * kept tuples and the semi-naive runs of the engine over small databases. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live/delta_internal.h"
#include "relations/build.h"
#include "relations/derived.h"

/* A relation of the builder (or WaitFor, followed by its own walk) that some variable
 * ranges over. */
struct source {
	const char *name;
	struct vgq_relation *rel; /* NULL until the builder (or the walk) has made it */
	bool waits;               /* WaitFor from the lock operations (relations/waits.c) */
	/* a derived relation followed live (relations/derived.h: Message), or NULL */
	const struct vgq_derived_live *live;
	char *live_error; /* its analysis failed: said once, in place of its answers */
	size_t seen;      /* tuples [0, seen) were looked at by an earlier update */
	size_t *pending;  /* tuples looked at and still open */
	size_t npending, cappending;
	size_t *fin; /* this update's newly final tuples */
	size_t nfin, capfin;
	int64_t future_from; /* no tuple still to come starts before this */
};

struct vgq_delta {
	struct builder b;
	const struct vgt_trace *trace; /* followed (trace/follow.h): gains classes */
	struct vgq_build_options bo;
	struct vgq_waits *waits; /* when a variable ranges over WaitFor */
	/* the analyses followed live, one state each (relations/derived.h) */
	const struct vgq_derived_live **lives;
	void **live_states;
	size_t nlives;
	struct vgq_options o;
	struct delta_retrieve *rets;
	size_t nrets;
	bool *broken; /* per retrieve: an error was reported; not run again */
	struct source *sources;
	size_t nsources;
	size_t **var_source; /* per retrieve, per variable: its source */
	/* vg.report.synth: the stream whose next event is synthesized, and its time */
	const struct vgt_stream *synth_stream;
	int64_t synth_at;
	struct vgq_delta_stats st;
	/* An event came earlier than one fed before it (a synthesized one): tuples may start
	 * in the past, so nothing is dropped any more. */
	bool disorder;
	struct vgq_db_internal internal;
};

/* Does the builder have a relation of that name (the trace's own)? */
static bool declared(const struct builder *b, const char *name)
{
	for (size_t i = 0; i < b->nslots; i++)
		if (!strcasecmp(b->slots[i]->rel->name, name))
			return true;
	return false;
}

static size_t source_of(struct vgq_delta *d, const char *name)
{
	for (size_t i = 0; i < d->nsources; i++)
		if (!strcasecmp(d->sources[i].name, name))
			return i;
	d->sources = vgq_xrealloc(d->sources, d->nsources + 1, sizeof *d->sources);
	d->sources[d->nsources] = (struct source){.name = name};
	return d->nsources++;
}

struct vgq_delta *vgq_delta_new(const struct tquel_query *q, struct vgt_trace *t,
                                const struct vgq_build_options *bo, const struct vgq_options *o,
                                char *why, size_t whysize)
{
	struct delta_retrieve *rets;
	size_t n;
	if (vgq_delta_shape(q, &rets, &n, why, whysize) < 0)
		return NULL;
	struct vgq_delta *d = vgq_xcalloc(1, sizeof *d);
	d->rets = rets;
	d->nrets = n;
	d->o = *o;
	if (bo)
		d->bo = *bo;
	d->broken = vgq_xcalloc(n ? n : 1, sizeof *d->broken);
	d->var_source = vgq_xcalloc(n ? n : 1, sizeof *d->var_source);
	for (size_t i = 0; i < n; i++) {
		d->var_source[i] = vgq_xcalloc(DELTA_MAX_VARS, sizeof **d->var_source);
		for (size_t v = 0; v < rets[i].nvars; v++)
			d->var_source[i][v] = source_of(d, rets[i].vars[v].relation);
		d->st.unbounded |= rets[i].unbounded;
	}
	d->trace = t;
	vgq_build_init(&d->b, t);
	d->b.ends_without_begin = d->bo.ends_without_begin;
	d->b.end_since = d->bo.end_since;
	d->b.end_since_arg = d->bo.keep_arg;
	vgq_build_schema(&d->b, t);
	d->internal.pool = d->b.pool;
	for (size_t i = 0; i < d->nsources; i++) {
		if (!strcasecmp(d->sources[i].name, "WaitFor") && !d->waits)
			d->waits = vgq_waits_new_live(t);
		/* a relation of the trace's own of that name wins, as in a build */
		const struct vgq_derived_live *live = vgq_derived_live_of(d->sources[i].name);
		if (!live || declared(&d->b, d->sources[i].name))
			continue;
		d->sources[i].live = live;
		bool started = false;
		for (size_t k = 0; k < d->nlives && !started; k++)
			started = d->lives[k] == live;
		if (started)
			continue;
		d->lives = vgq_xrealloc(d->lives, d->nlives + 1, sizeof *d->lives);
		d->live_states =
		    vgq_xrealloc(d->live_states, d->nlives + 1, sizeof *d->live_states);
		d->lives[d->nlives] = live;
		d->live_states[d->nlives++] = live->start(t, d->b.pool);
	}
	return d;
}

void vgq_delta_free(struct vgq_delta *d)
{
	if (!d)
		return;
	vgq_delta_shape_free(d->rets, d->nrets);
	for (size_t i = 0; i < d->nrets; i++)
		free(d->var_source[i]);
	free(d->var_source);
	free(d->broken);
	for (size_t i = 0; i < d->nsources; i++) {
		free(d->sources[i].pending);
		free(d->sources[i].fin);
		free(d->sources[i].live_error);
	}
	for (size_t k = 0; k < d->nlives; k++)
		d->lives[k]->free(d->live_states[k]);
	free(d->lives);
	free(d->live_states);
	free(d->sources);
	vgq_waits_free_live(d->waits);
	/* The builder's relations were never handed to a database: finish it into one and
	 * free that, which frees them and the pool. */
	struct vgq_database *db = vgq_xcalloc(1, sizeof *db);
	vgq_build_finish(&d->b, db);
	vgq_database_free(db);
	free(d);
}

void vgq_delta_feed(struct vgq_delta *d, const struct vgt_event *ev)
{
	/* As vgq_database_build_opts reads: a vg.report.synth marker times the next event
	 * of its stream (docs/consistency.md). */
	struct vgt_event synthesized;
	if (vgq_is_synth_marker(ev->type)) {
		d->synth_stream = ev->stream;
		d->synth_at = ev->ts - (int64_t)ev->clock_value + (int64_t)ev->values[0].u;
		return;
	}
	if (d->synth_stream && ev->stream == d->synth_stream) {
		synthesized = *ev;
		synthesized.ts = d->synth_at;
		ev = &synthesized;
		d->synth_stream = NULL;
	}
	if (ev->type->class_id >= d->b.nby_class) /* declared since (a followed trace) */
		vgq_build_schema_grow(&d->b, d->trace);
	if (d->bo.keep && !d->bo.keep(d->bo.keep_arg, ev))
		return;
	if (d->st.events && ev->ts < d->st.last)
		d->disorder = true;
	if (!d->st.events++)
		d->st.first = d->st.last = ev->ts;
	if (ev->ts > d->st.last)
		d->st.last = ev->ts;
	vgt_names_observe(d->b.names, ev);
	vgq_build_feed(&d->b, ev);
	vgq_waits_feed(d->waits, ev);
	for (size_t k = 0; k < d->nlives; k++)
		d->lives[k]->feed(d->live_states[k], ev);
}

static void *live_state(struct vgq_delta *d, const struct vgq_derived_live *live)
{
	for (size_t k = 0; k < d->nlives; k++)
		if (d->lives[k] == live)
			return d->live_states[k];
	return NULL;
}

static void push_index(size_t **a, size_t *n, size_t *cap, size_t v)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*a = vgq_xrealloc(*a, *cap, sizeof **a);
	}
	(*a)[(*n)++] = v;
}

/* Sorts tuple i of the source: still open (kept pending) or final. */
static void sort_tuple(struct vgq_delta *d, struct source *s, size_t i, bool final,
                       int64_t *min_open)
{
	struct vgq_relation *r = s->rel;
	if (r->open && r->open[i] && !final) {
		push_index(&s->pending, &s->npending, &s->cappending, i);
		if (r->from[i] < *min_open)
			*min_open = r->from[i];
		return;
	}
	if (r->open && r->open[i])
		r->to[i] = d->st.last;
	push_index(&s->fin, &s->nfin, &s->capfin, i);
}

/* Which tuples of the source became final: those still open at the last update and
 * the ones made since. At the end every open tuple is final, ending at the last event. */
static void take_final(struct vgq_delta *d, struct source *s, bool final)
{
	s->nfin = 0;
	if (s->live && !s->live_error) {
		char err[512] = "";
		s->rel = s->live->sync(live_state(d, s->live), s->name, final, err, sizeof err);
		if (!s->rel && err[0])
			s->live_error = strcpy(vgq_xcalloc(strlen(err) + 1, 1), err);
	}
	if (!s->rel && !s->waits && !s->live)
		for (size_t i = 0; i < d->b.nslots; i++)
			if (!strcasecmp(d->b.slots[i]->rel->name, s->name))
				s->rel = d->b.slots[i]->rel;
	/* WaitFor, unless the trace has its own relation of that name (as in a build) */
	if (s->waits || (!s->rel && d->waits && !strcasecmp(s->name, "WaitFor"))) {
		s->waits = true;
		s->rel = vgq_waits_sync(d->waits, &d->b, d->st.last, final);
	}
	int64_t min_open = INT64_MAX;
	if (s->rel) {
		size_t old = s->npending;
		s->npending = 0; /* refilled in place: the i-th push reads entry i or later */
		for (size_t k = 0; k < old; k++)
			sort_tuple(d, s, s->pending[k], final, &min_open);
		for (size_t i = s->seen; i < s->rel->ntuples; i++)
			sort_tuple(d, s, i, final, &min_open);
		s->seen = s->rel->ntuples;
	}
	s->future_from = d->st.last < min_open ? d->st.last : min_open;
	/* A sampled interval's end may make a tuple that begins in the past. */
	if (d->disorder ||
	    (d->bo.ends_without_begin && (!s->rel || s->rel->kind == VGQ_REL_INTERVAL)))
		s->future_from = INT64_MIN;
}

/* Tuples [lo, hi) of r under another name, sharing its columns. */
static void view(struct vgq_relation *v, union vgq_column *cols, const struct vgq_relation *r,
                 const char *name, size_t lo, size_t hi)
{
	*v = *r;
	v->name = name;
	v->ntuples = hi - lo;
	v->from = r->from + lo;
	v->to = r->to ? r->to + lo : NULL;
	v->open = r->open ? r->open + lo : NULL;
	v->begin_unknown = r->begin_unknown ? r->begin_unknown + lo : NULL;
	v->nulls = NULL;
	for (size_t a = 0; a < r->nattrs; a++)
		vgq_delta_column_view(&cols[a], r, a, lo);
	v->cols = cols;
	vgq_delta_rel_span(v);
}

static int by_name(const void *a, const void *b)
{
	const struct vgq_relation *x = *(struct vgq_relation *const *)a;
	const struct vgq_relation *y = *(struct vgq_relation *const *)b;
	return strcasecmp(x->name, y->name);
}

/* One semi-naive run: variable `which` takes its delta ([old, n) of its kept tuples),
 * those before it their tuples kept before this update ([0, old)), those after it all
 * ([0, n)). Returns the engine's error count. */
static size_t run_once(struct vgq_delta *d, struct delta_retrieve *r, const size_t *old,
                       size_t which, vgq_emit_fn emit, void *ctx, FILE *errors)
{
	struct vgq_relation views[DELTA_MAX_VARS], *rels[DELTA_MAX_VARS];
	union vgq_column *cols[DELTA_MAX_VARS];
	for (size_t v = 0; v < r->nvars; v++) {
		const struct vgq_relation *st = r->vars[v].state;
		size_t lo = v == which ? old[v] : 0, hi = v < which ? old[v] : st->ntuples;
		cols[v] = vgq_xcalloc(st->nattrs ? st->nattrs : 1, sizeof *cols[v]);
		view(&views[v], cols[v], st, r->vars[v].alias, lo, hi);
		rels[v] = &views[v];
	}
	qsort(rels, r->nvars, sizeof *rels, by_name);
	struct vgq_database db = {.nrelations = r->nvars,
	                          .relations = rels,
	                          .first = d->st.first,
	                          .last = d->st.last,
	                          .events = d->st.events,
	                          .internal = &d->internal};
	struct vgq_session *s = vgq_session_new(&db, &d->o);
	size_t errs = vgq_run(s, &r->sub, emit, ctx, errors);
	vgq_session_free(s);
	for (size_t v = 0; v < r->nvars; v++)
		free(cols[v]);
	return errs;
}

/* The end of a kept tuple: its last instant. */
static int64_t end_of(const struct vgq_relation *r, size_t i)
{
	return r->to ? r->to[i] : r->from[i];
}

/* Drops the kept tuples of variable v that no tuple still to come can join. */
static void prune(struct vgq_delta *d, struct delta_retrieve *r, size_t ri, size_t v)
{
	struct delta_var *x = &r->vars[v];
	int64_t bound = INT64_MAX;
	for (size_t y = 0; y < r->nvars; y++) {
		if (y == v)
			continue;
		if (!x->drops_against[y])
			return;
		int64_t f = d->sources[d->var_source[ri][y]].future_from;
		if (f < bound)
			bound = f;
	}
	struct vgq_relation *st = x->state;
	bool *keep = vgq_xcalloc(st->ntuples ? st->ntuples : 1, sizeof *keep);
	size_t before = st->ntuples;
	for (size_t i = 0; i < st->ntuples; i++)
		keep[i] = end_of(st, i) >= bound;
	vgq_delta_rel_filter(st, keep);
	free(keep);
	d->st.dropped += before - st->ntuples;
}

static size_t update_retrieve(struct vgq_delta *d, size_t ri, bool final, vgq_emit_fn emit,
                              void *ctx, FILE *errors)
{
	struct delta_retrieve *r = &d->rets[ri];
	size_t old[DELTA_MAX_VARS];
	bool any = false, ready = true;
	for (size_t v = 0; v < r->nvars; v++) {
		struct source *s = &d->sources[d->var_source[ri][v]];
		ready &= s->rel != NULL;
		if (!s->rel)
			continue;
		if (!r->vars[v].state)
			r->vars[v].state = vgq_delta_rel_like(s->rel, r->vars[v].alias);
		struct vgq_relation *st = r->vars[v].state;
		if (r->nvars == 1)
			st->ntuples = 0; /* one variable: nothing is kept */
		old[v] = st->ntuples;
		for (size_t k = 0; k < s->nfin; k++)
			vgq_delta_rel_push(st, s->rel, s->fin[k]);
		any |= s->nfin > 0;
		d->st.deltas += s->nfin;
	}
	size_t errs = 0;
	if (ready && any && !d->broken[ri])
		for (size_t v = 0; v < r->nvars && !errs; v++)
			if (r->vars[v].state->ntuples > old[v])
				errs += run_once(d, r, old, v, emit, ctx, errors);
	for (size_t v = 0; v < r->nvars && !d->broken[ri]; v++)
		if (d->sources[d->var_source[ri][v]].live_error) {
			fprintf(errors, "%s: %s\n", r->sub.source,
			        d->sources[d->var_source[ri][v]].live_error);
			ready = false;
			errs++;
			d->st.derived_errors++;
			break;
		}
	if (!ready && final && !d->broken[ri] && !errs) {
		/* As the engine says of a stored trace that lacks the relation. */
		for (size_t v = 0; v < r->nvars; v++)
			if (!d->sources[d->var_source[ri][v]].rel)
				fprintf(errors, "%s: %s %s\n", r->sub.source,
				        d->sources[d->var_source[ri][v]].waits &&
				                vgq_waits_failed(d->waits)
				            ? "out of memory following"
				            : "no relation",
				        r->vars[v].relation);
		errs++;
	}
	if (errs)
		d->broken[ri] = true; /* reported once */
	if (ready && r->nvars > 1)
		for (size_t v = 0; v < r->nvars; v++)
			prune(d, r, ri, v);
	return errs;
}

size_t vgq_delta_update(struct vgq_delta *d, bool final, vgq_emit_fn emit, void *ctx, FILE *errors)
{
	for (size_t i = 0; i < d->nsources; i++)
		take_final(d, &d->sources[i], final);
	size_t errs = 0;
	for (size_t i = 0; i < d->nrets; i++)
		errs += update_retrieve(d, i, final, emit, ctx, errors);
	uint64_t state = 0;
	for (size_t i = 0; i < d->nrets; i++)
		for (size_t v = 0; d->rets[i].nvars > 1 && v < d->rets[i].nvars; v++)
			state += d->rets[i].vars[v].state ? d->rets[i].vars[v].state->ntuples : 0;
	d->st.state = state;
	if (state > d->st.state_peak)
		d->st.state_peak = state;
	return errs;
}

void vgq_delta_stats(const struct vgq_delta *d, struct vgq_delta_stats *out)
{
	*out = d->st;
}

void vgq_delta_print_warnings(const struct vgq_delta *d, const char *who, FILE *f)
{
	for (size_t i = 0; i < d->b.nwarnings; i++)
		fprintf(f, "%s: warning: %s\n", who, d->b.warnings[i]);
}
