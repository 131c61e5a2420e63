/* The rule engine: walks the merged stream and applies each event to the identities,
 * invocation stacks and lock states, reporting what breaks a rule (docs/consistency.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct vgc_key key_of(const struct vgc *c, uint32_t kind, uint64_t id)
{
	struct vgc_key k = {.id = id, .kind = kind};
	k.scope = kind == VGC_KIND_PROCESS  ? 0
	          : kind == VGC_KIND_THREAD ? c->ty->process
	                                    : c->ty->image;
	return k;
}

static const char *event_name(const struct vgc *c)
{
	return c->ev->type->name;
}

/* Why (k, gen) is not live now, for a message: "its creation was not reported", ... */
static const char *why_not_live(struct vgc *c, const struct vgc_ent *e, uint64_t gen, char *buf,
                                size_t size)
{
	if (!e)
		snprintf(buf, size, "its creation was not reported");
	else if (e->gen == gen && (e->state & VGC_DEAD))
		snprintf(buf, size, "it was reclaimed at %s", vgc_pos_text(c, e->pos_mark));
	else if (e->state & VGC_LIVE)
		snprintf(buf, size, "its creation was not reported (gen %" PRIu64 " is live)",
		         e->gen);
	else
		snprintf(buf, size,
		         "its creation was not reported (gen %" PRIu64 " was reclaimed at %s)",
		         e->gen, vgc_pos_text(c, e->pos_mark));
	return buf;
}

static bool live(const struct vgc_ent *e, uint64_t gen)
{
	return e && e->gen == gen && (e->state & VGC_LIVE);
}

/* ---- entity ops (rules 1 and 3) ---------------------------------------------------------- */

static void op_create(struct vgc *c, const struct vgc_key *k, uint64_t gen)
{
	bool fresh;
	struct vgc_ent *e = vgc_table_insert(&c->ents.t, k, &fresh);
	if (!e) {
		c->oom = true;
		return;
	}
	c->sum->entities++;
	if (!fresh && (e->state & VGC_LIVE)) {
		if (e->gen == gen)
			vgc_violate(c, 1, "%s created again while live (created at %s)",
			            vgc_describe(c, k, gen), vgc_pos_text(c, e->pos_create));
		else if (e->gen < gen)
			vgc_violate(c, 3,
			            "%s reclaimed without a reported reclamation (gen %" PRIu64
			            " created; gen %" PRIu64 " created at %s)",
			            vgc_describe(c, k, e->gen), gen, e->gen,
			            vgc_pos_text(c, e->pos_create));
		else
			vgc_violate(c, 1, "%s created while a newer generation %" PRIu64 " is live",
			            vgc_describe(c, k, gen), e->gen);
	}
	e->gen = gen;
	e->state = VGC_LIVE;
	e->pos_create = c->pos;
	e->pos_mark = 0;
}

static void op_change(struct vgc *c, enum vgc_op op, const struct vgc_key *k, uint64_t gen)
{
	struct vgc_ent *e = vgc_ent_find(&c->ents, k);
	const char *what = op == VGC_OP_LOAD     ? "loaded"
	                   : op == VGC_OP_RENAME ? "renamed"
	                                         : "reclaimed";
	if (!live(e, gen)) {
		char why[256];
		if (e && e->gen == gen && (e->state & VGC_DEAD) && op == VGC_OP_RECLAIM)
			snprintf(why, sizeof why, "it was already reclaimed at %s",
			         vgc_pos_text(c, e->pos_mark));
		else
			why_not_live(c, e, gen, why, sizeof why);
		vgc_violate(c, 1, "%s %s, but %s", vgc_describe(c, k, gen), what, why);
		return;
	}
	if (op == VGC_OP_RECLAIM) {
		e->state = VGC_DEAD;
		e->pos_mark = c->pos;
	} else if (op == VGC_OP_LOAD) {
		if (e->state & VGC_LOADED)
			vgc_violate(c, 1, "%s loaded again (loaded at %s)", vgc_describe(c, k, gen),
			            vgc_pos_text(c, e->pos_mark));
		else if (e->state & VGC_REFD)
			vgc_violate(c, 2, "%s loaded, but referred to at %s before its load",
			            vgc_describe(c, k, gen), vgc_pos_text(c, e->pos_mark));
		e->state = (e->state & ~(uint32_t)VGC_REFD) | VGC_LOADED;
		e->pos_mark = c->pos;
	}
}

/* ---- references (rule 2) ----------------------------------------------------------------- */

/* Checks one reference of an activity; returns the live record, or NULL. */
static struct vgc_ent *refer(struct vgc *c, const struct vgc_ref_field *rf)
{
	const struct vgt_value *v = &c->ev->values[rf->field];
	if (v->type != VGT_REF || (v->ref.id == 0 && v->ref.gen == 0))
		return NULL;
	struct vgc_key k = key_of(c, rf->kind, v->ref.id);
	struct vgc_ent *e = vgc_ent_find(&c->ents, &k);
	if (!live(e, v->ref.gen)) {
		char why[256];
		vgc_violate(c, 2, "%s refers to %s (field %s), but %s", event_name(c),
		            vgc_describe(c, &k, v->ref.gen), c->ev->type->fields[rf->field].name,
		            why_not_live(c, e, v->ref.gen, why, sizeof why));
		return NULL;
	}
	if (!(e->state & (VGC_LOADED | VGC_REFD))) {
		/* A violation only if a load is reported later. */
		e->state |= VGC_REFD;
		e->pos_mark = c->pos;
	}
	return e;
}

static void refer_all(struct vgc *c)
{
	for (unsigned i = 0; i < c->ty->nrefs; i++)
		refer(c, &c->ty->refs[i]);
}

/* ---- invocations (rule 4) ---------------------------------------------------------------- */

/* The thread performing the current event. */
static const char *thread_text(struct vgc *c)
{
	struct vgc_key k = key_of(c, VGC_KIND_THREAD, c->ev->tid);
	return vgc_describe(c, &k, c->ev->thread_gen);
}

static void op_enter(struct vgc *c, struct vgc_thread *th)
{
	c->sum->invocations++;
	if (c->ty->depth < 0) {
		th->depth++;
	} else {
		uint64_t d = vgt_value_u64(&c->ev->values[c->ty->depth]);
		if (d == 0)
			vgc_violate(c, 4, "%s on %s has vg_depth 0 (the outermost invocation is 1)",
			            event_name(c), thread_text(c));
		else if (d - 1 > th->depth)
			vgc_violate(c, 4,
			            "%s at depth %" PRIu64 " on %s, but %" PRIu32
			            " enclosing invocation%s reported: its parent is missing",
			            event_name(c), d, thread_text(c), th->depth,
			            th->depth == 1 ? " is" : "s are");
		else if (d - 1 < th->depth)
			vgc_violate(
			    c, 4,
			    "%s at depth %" PRIu64 " on %s, but %" PRIu32
			    " invocation%s open in the reported stream (leaves are missing)",
			    event_name(c), d, thread_text(c), th->depth,
			    th->depth == 1 ? " is" : "s are");
		/* Follow the real stack from here on: one violation, not a cascade. */
		th->depth = d ? (uint32_t)(d > UINT32_MAX ? UINT32_MAX : d) : th->depth + 1;
	}
	if (th->depth > c->sum->max_depth)
		c->sum->max_depth = th->depth;
}

static void op_leave(struct vgc *c, struct vgc_thread *th)
{
	if (!th->depth) {
		vgc_violate(c, 4, "%s on %s, but no invocation is open in the reported stream",
		            event_name(c), thread_text(c));
		return;
	}
	th->depth--;
}

/* ---- locks and suspensions (rule 5) ------------------------------------------------------ */

static const struct vgc_ref_field *target_ref(const struct vgc_type *ty)
{
	for (unsigned i = 0; i < ty->nrefs; i++)
		if (ty->refs[i].field == ty->target)
			return &ty->refs[i];
	return NULL;
}

static void op_lock(struct vgc *c, enum vgc_op op)
{
	refer_all(c);
	const struct vgt_value *v = &c->ev->values[c->ty->target];
	if (v->type != VGT_REF || (v->ref.id == 0 && v->ref.gen == 0))
		return;
	struct vgc_key k = key_of(c, c->ty->target_kind, v->ref.id);
	struct vgc_ent *e = vgc_ent_find(&c->ents, &k);
	if (e && e->gen == v->ref.gen && !(e->state & VGC_LOCK)) {
		e->state |= VGC_LOCK;
		c->sum->locks++;
	}
	uint64_t pos_wait = 0;
	int p = vgc_lock_op(&c->locks, op, (uint32_t)c->ev->stream->index, &k, v->ref.gen, c->pos,
	                    &pos_wait);
	if (p < 0) {
		c->oom = true;
		return;
	}
	struct vgc_key tk = key_of(c, VGC_KIND_THREAD, c->ev->tid);
	if (p == VGC_LOCK_OK && c->sink->lock) {
		struct vgc_lock_event le = {
		    .op = op == VGC_OP_ACQUIRE      ? VGC_LK_ACQUIRE
		          : op == VGC_OP_RELEASE    ? VGC_LK_RELEASE
		          : op == VGC_OP_WAIT_BEGIN ? VGC_LK_WAIT_BEGIN
		                                    : VGC_LK_WAIT_END,
		    .thread = c->ev->tid,
		    .thread_gen = c->ev->thread_gen,
		    .thread_scope = tk.scope,
		    .lock = k.id,
		    .lock_gen = v->ref.gen,
		    .lock_scope = k.scope,
		    .lock_kind = k.kind,
		    .image = c->ty->image,
		    .ts = c->synth ? c->synth_at : c->ev->ts,
		    .checker = c,
		};
		le.t_ns = le.ts - c->first_ts;
		le.t = (double)le.t_ns / 1e9;
		c->sink->lock(c->sink->ctx, &le);
	}
	switch (p) {
	case VGC_LOCK_NOT_HELD:
		vgc_violate(c, 5,
		            "%s: %s releases %s, but no acquire of it by this thread is reported",
		            event_name(c), vgc_describe(c, &tk, c->ev->thread_gen),
		            vgc_describe(c, &k, v->ref.gen));
		break;
	case VGC_LOCK_ACQ_WAITING:
		vgc_violate(c, 5, "%s: %s acquires %s while waiting for it (wait began at %s)",
		            event_name(c), vgc_describe(c, &tk, c->ev->thread_gen),
		            vgc_describe(c, &k, v->ref.gen), vgc_pos_text(c, pos_wait));
		break;
	case VGC_LOCK_WAITING_AGAIN:
		vgc_violate(c, 5, "%s: %s begins waiting for %s while already waiting (since %s)",
		            event_name(c), vgc_describe(c, &tk, c->ev->thread_gen),
		            vgc_describe(c, &k, v->ref.gen), vgc_pos_text(c, pos_wait));
		break;
	case VGC_LOCK_NOT_WAITING:
		vgc_violate(
		    c, 5,
		    "%s: %s stops waiting for %s, but no wait begin of it by this thread is "
		    "reported",
		    event_name(c), vgc_describe(c, &tk, c->ev->thread_gen),
		    vgc_describe(c, &k, v->ref.gen));
		break;
	}
}

static void op_suspend(struct vgc *c, enum vgc_op op)
{
	for (unsigned i = 0; i < c->ty->nrefs; i++)
		if (c->ty->refs[i].field != c->ty->target)
			refer(c, &c->ty->refs[i]);
	const struct vgc_ref_field *rf = target_ref(c->ty);
	struct vgc_ent *e = rf ? refer(c, rf) : NULL;
	if (!e)
		return;
	bool suspended = e->state & VGC_SUSPENDED;
	if (op == VGC_OP_SUSPEND && suspended)
		vgc_violate(c, 5, "%s: %s suspended again without a reported resume", event_name(c),
		            vgc_describe(c, &e->key, e->gen));
	else if (op == VGC_OP_RESUME && !suspended)
		vgc_violate(c, 5, "%s: %s resumed, but its suspension was not reported",
		            event_name(c), vgc_describe(c, &e->key, e->gen));
	if (op == VGC_OP_SUSPEND)
		e->state |= VGC_SUSPENDED;
	else
		e->state &= ~(uint32_t)VGC_SUSPENDED;
}

void vgc_lock_event_texts(const struct vgc_lock_event *e, struct vgc_lock_texts *out)
{
	struct vgc *c = e->checker;
	struct vgc_key tk = {e->thread, e->thread_scope, VGC_KIND_THREAD};
	struct vgc_key k = {e->lock, e->lock_scope, e->lock_kind};
	unsigned involved = c->ninvolved;
	c->ninvolved = 0; /* the two descriptions fill ents_involved[0..1] */
	out->thread_text = vgc_describe(c, &tk, e->thread_gen);
	out->lock_text = vgc_describe(c, &k, e->lock_gen);
	out->thread_name = c->ents_involved[0].name;
	out->lock_name = c->ents_involved[1].name;
	out->lock_kind = vgc_kind_display(&c->kinds, e->lock_kind);
	c->ninvolved = involved;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

/* The entity an entity op acts on: from the built-in's fields or the target reference. */
static bool op_entity(struct vgc *c, struct vgc_key *k, uint64_t *gen)
{
	const struct vgc_type *ty = c->ty;
	const struct vgt_value *vals = c->ev->values;
	switch (ty->builtin) {
	case VGC_B_PROCESS_BEGIN:
	case VGC_B_PROCESS_END:
	case VGC_B_PROCESS_NAME:
		*k = key_of(c, VGC_KIND_PROCESS, vgt_value_u64(&vals[ty->f_id]));
		break;
	case VGC_B_THREAD_BEGIN:
	case VGC_B_THREAD_NAME:
	case VGC_B_THREAD_END:
		*k = key_of(c, VGC_KIND_THREAD, vgt_value_u64(&vals[ty->f_id]));
		break;
	case VGC_B_NONE: {
		const struct vgt_value *v = &vals[ty->target];
		if (v->type != VGT_REF || (v->ref.id == 0 && v->ref.gen == 0))
			return false;
		*k = key_of(c, ty->target_kind, v->ref.id);
		*gen = v->ref.gen;
		return true;
	}
	default: {
		int64_t kind = vgc_kind_intern(&c->kinds, vals[ty->f_kind].str.ptr);
		if (kind < 0) {
			c->oom = true;
			return false;
		}
		*k = key_of(c, (uint32_t)kind, vgt_value_u64(&vals[ty->f_id]));
	}
	}
	*gen = vgt_value_u64(&vals[ty->f_gen]);
	return true;
}

static void check_event(struct vgc *c, struct vgc_thread *th)
{
	struct vgc_key k;
	uint64_t gen;
	switch (c->ty->op) {
	case VGC_OP_CREATE:
	case VGC_OP_LOAD:
	case VGC_OP_RENAME:
	case VGC_OP_RECLAIM:
		if (c->ty->builtin != VGC_B_NONE && c->ty->builtin != VGC_B_SYNTH)
			vgt_names_observe(c->names, c->ev);
		if (!op_entity(c, &k, &gen))
			return;
		if (c->ty->op == VGC_OP_CREATE)
			op_create(c, &k, gen);
		else
			op_change(c, c->ty->op, &k, gen);
		return;
	case VGC_OP_ENTER:
		op_enter(c, th);
		return;
	case VGC_OP_LEAVE:
		op_leave(c, th);
		return;
	case VGC_OP_ACQUIRE:
	case VGC_OP_RELEASE:
	case VGC_OP_WAIT_BEGIN:
	case VGC_OP_WAIT_END:
		op_lock(c, c->ty->op);
		return;
	case VGC_OP_SUSPEND:
	case VGC_OP_RESUME:
		op_suspend(c, c->ty->op);
		return;
	case VGC_OP_COUNT: /* not checkable (warned) */
		return;
	default:
		refer_all(c);
	}
}

static int setup(struct vgc *c, char *err, size_t errsize)
{
	size_t ns = vgt_stream_count(c->trace);
	c->threads = calloc(ns ? ns : 1, sizeof *c->threads);
	c->nthreads = ns;
	c->names = vgt_names_new();
	if (!c->threads || !c->names || vgc_kinds_init(&c->kinds) < 0 ||
	    vgc_types_build(&c->types, c->trace, &c->kinds, c->sink) < 0) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ns; i++)
		c->threads[i].label = vgc_path_label(vgt_stream_at(c->trace, i)->path);
	vgc_ents_init(&c->ents);
	vgc_locks_init(&c->locks);
	return 0;
}

static void teardown(struct vgc *c)
{
	vgc_table_free(&c->locks);
	vgc_table_free(&c->ents.t);
	vgc_types_free(&c->types);
	vgc_kinds_free(&c->kinds);
	if (c->names)
		vgt_names_free(c->names);
	free(c->threads);
}

/* The walker: one event at a time, so that a reader that already walks the trace (the
 * relations of src/relations) can feed the checker without a second pass. */
struct vgc_walk {
	struct vgc c;
	struct vgc_summary *sum;
	const struct vgt_event_type *last_type;
	bool first_set;
};

struct vgc_walk *vgc_walk_new(struct vgt_trace *t, const struct vgc_sink *sink,
                              struct vgc_summary *sum, int64_t first_ts, char *err, size_t errsize)
{
	static const struct vgc_sink none = {0};
	struct vgc_walk *w = calloc(1, sizeof *w);
	if (!w) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	memset(sum, 0, sizeof *sum);
	w->sum = sum;
	w->c.trace = t;
	w->c.sink = sink ? sink : &none;
	w->c.sum = sum;
	w->c.first_ts = first_ts;
	w->first_set = first_ts != INT64_MIN;
	if (setup(&w->c, err, errsize) < 0) {
		teardown(&w->c);
		free(w);
		return NULL;
	}
	return w;
}

/* A followed trace (trace/follow.h) gains streams and event types as it is read: the
 * walk learns them when an event of one comes. */
static bool grow(struct vgc *c)
{
	size_t ns = vgt_stream_count(c->trace);
	if (ns > c->nthreads) {
		struct vgc_thread *th = realloc(c->threads, ns * sizeof *th);
		if (!th)
			return false;
		memset(th + c->nthreads, 0, (ns - c->nthreads) * sizeof *th);
		for (size_t i = c->nthreads; i < ns; i++)
			th[i].label = vgc_path_label(vgt_stream_at(c->trace, i)->path);
		c->threads = th;
		c->nthreads = ns;
	}
	return vgc_types_grow(&c->types, c->trace, &c->kinds, c->sink) == 0;
}

bool vgc_walk_event(struct vgc_walk *w, const struct vgt_event *ev)
{
	struct vgc *c = &w->c;
	if (c->oom)
		return false;
	if ((ev->stream->index >= c->nthreads || ev->type->class_id >= c->types.n) && !grow(c)) {
		c->oom = true;
		return false;
	}
	if (!w->first_set) {
		c->first_ts = ev->ts;
		w->first_set = true;
	}
	w->sum->events++;
	if (ev->type != w->last_type) {
		c->ty = vgc_type_of(&c->types, ev->type);
		w->last_type = ev->type;
	}
	if (!c->ty)
		return true;
	struct vgc_thread *th = &c->threads[ev->stream->index];
	c->ev = ev;
	c->pos = vgc_pos(ev->stream->index, ev->offset);
	c->synth = th->synth_next;
	c->synth_at = th->synth_at;
	c->ninvolved = 0;
	th->synth_next = false;
	if (c->ty->builtin == VGC_B_SYNTH) {
		/* `at` is a clock value, like the event header's timestamp. */
		th->synth_next = true;
		th->synth_at = (int64_t)vgt_value_u64(&ev->values[c->ty->f_id]) +
		               (ev->ts - (int64_t)ev->clock_value);
		return true;
	}
	if (c->synth)
		w->sum->synthesized++;
	check_event(c, th);
	return !c->oom;
}

int vgc_walk_end(struct vgc_walk *w, char *err, size_t errsize)
{
	struct vgc *c = &w->c;
	struct vgc_summary *sum = w->sum;
	for (size_t i = 0; i < vgt_stream_count(c->trace); i++)
		sum->discarded += vgt_stream_at(c->trace, i)->stats.events_discarded;
	sum->damage = vgt_damage_total(c->trace);
	int rc = 0;
	if (c->oom) {
		snprintf(err, errsize, "out of memory after %" PRIu64 " events", sum->events);
		rc = -1;
	}
	teardown(c);
	free(w);
	return rc;
}

int vgc_check(struct vgt_trace *t, const struct vgc_sink *sink, struct vgc_summary *sum, char *err,
              size_t errsize)
{
	struct vgt_source *src = vgt_source_of(t);
	struct vgc_walk *w = vgc_walk_new(t, sink, sum, vgt_source_first_ts(src), err, errsize);
	if (!w) {
		vgt_source_close(src);
		return -1;
	}
	for (const struct vgt_event *ev; (ev = vgt_source_next(src)) && vgc_walk_event(w, ev);)
		;
	vgt_source_close(src);
	return vgc_walk_end(w, err, errsize);
}
