/* LogEvent, Transition, ModelEvent and ModelTransition: behaviour models (docs/model.md)
 * as relations (docs/tquel.md "Derived relations").
 *
 *   LogEvent         event per event of the trace, as `vigil model --from-trace` counts
 *                    them: name (the event type), site ("sensor:NAME"), thread.
 *   Transition       interval between consecutive events of a thread (across its
 *                    process's execs), as that model's transitions: from_event, to_event,
 *                    duration (ns), thread.
 *   ModelEvent       the model `vigil model DIR` makes of the recording (its log models,
 *   ModelTransition  else its trace's events), static: valid over the whole trace.
 *                    ModelEvent: site, format, name, count, out. ModelTransition:
 *                    from_site, from_format, to_site, to_format, count, probability
 *                    (count / the from event's out), mean, p50, p90, p99 (ns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived/derived.h"
#include "model/inputs.h"
#include "model/sketch.h"
#include "trace/source.h"

static const char *const steps_names[] = {"LogEvent", "Transition", NULL};
static const char *const model_names[] = {"ModelEvent", "ModelTransition", NULL};

struct steps {
	struct vgq_derived_ctx *c;
	struct vgq_relation *ev, *tr;
	const char **site_of; /* per event class: "sensor:NAME", interned */
};

static const char *site_of(struct steps *s, const struct vgt_event_type *type)
{
	const char **site = &s->site_of[type->class_id];
	if (!*site) {
		char *text = malloc(strlen(type->name) + 8);
		if (!text)
			return NULL;
		sprintf(text, "sensor:%s", type->name);
		*site = vgq_derived_intern(s->c, text);
		free(text);
	}
	return *site;
}

static int step(void *ctx, const struct vgt_event *ev, const struct vgt_event_type *prev,
                int64_t prev_ts)
{
	struct steps *s = ctx;
	uint32_t image = vgq_derived_image_index(s->c, ev->image, true);
	struct vgq_ref thread = {ev->tid, ev->thread_gen, image, NULL};
	const char *name = vgq_derived_intern(s->c, ev->type->name);
	size_t t = vgq_derived_append(s->ev, ev->ts, ev->ts);
	s->ev->cols[0].s[t] = name;
	if (!(s->ev->cols[1].s[t] = site_of(s, ev->type)))
		return -1;
	s->ev->cols[2].r[t] = thread;
	if (prev) {
		t = vgq_derived_append(s->tr, prev_ts, ev->ts > prev_ts ? ev->ts : prev_ts);
		s->tr->cols[0].s[t] = vgq_derived_intern(s->c, prev->name);
		s->tr->cols[1].s[t] = name;
		s->tr->cols[2].i[t] = ev->ts > prev_ts ? ev->ts - prev_ts : 0;
		s->tr->cols[3].r[t] = thread;
	}
	return 0;
}

static int build_steps(struct vgq_derived_ctx *c, char *err, size_t errsize)
{
	struct vgt_trace *t = vgq_derived_trace(c);
	struct steps s = {c, vgq_derived_new(c, "LogEvent", VGQ_REL_EVENT),
	                  vgq_derived_new(c, "Transition", VGQ_REL_INTERVAL),
	                  calloc(vgt_class_count(t) + 1, sizeof *s.site_of)};
	vgq_derived_attr(c, s.ev, "name", VGQ_STRING, NULL);
	vgq_derived_attr(c, s.ev, "site", VGQ_STRING, NULL);
	vgq_derived_attr(c, s.ev, "thread", VGQ_ENTITY, "OSThread");
	vgq_derived_attr(c, s.tr, "from_event", VGQ_STRING, NULL);
	vgq_derived_attr(c, s.tr, "to_event", VGQ_STRING, NULL);
	vgq_derived_attr(c, s.tr, "duration", VGQ_INT, NULL);
	vgq_derived_attr(c, s.tr, "thread", VGQ_ENTITY, "OSThread");
	if (vgq_derived_schema_only(c)) {
		free(s.site_of);
		return 0;
	}
	int rc = s.site_of ? vgm_trace_steps(t, step, &s) : -1;
	if (rc < 0)
		snprintf(err, errsize, "out of memory");
	free(s.site_of);
	return rc;
}

/* The two relations of model m (NULL: without tuples). */
static void add_model(struct vgq_derived_ctx *c, const struct vgm_model *m)
{
	const struct vgq_database *db = vgq_derived_database(c);
	struct vgq_relation *e = vgq_derived_new(c, "ModelEvent", VGQ_REL_INTERVAL);
	vgq_derived_attr(c, e, "site", VGQ_STRING, NULL);
	vgq_derived_attr(c, e, "format", VGQ_STRING, NULL);
	vgq_derived_attr(c, e, "name", VGQ_STRING, NULL);
	vgq_derived_attr(c, e, "count", VGQ_UINT, NULL);
	vgq_derived_attr(c, e, "out", VGQ_UINT, NULL);
	for (size_t i = 0; m && i < m->nevents; i++) {
		const struct vgm_event *x = &m->events[i];
		size_t t = vgq_derived_append(e, db->first, db->last);
		e->cols[0].s[t] = vgq_derived_intern(c, x->site);
		e->cols[1].s[t] = vgq_derived_intern(c, x->fmt);
		e->cols[2].s[t] = vgq_derived_intern(c, x->name);
		e->cols[3].u[t] = x->count;
		e->cols[4].u[t] = x->out;
	}
	struct vgq_relation *r = vgq_derived_new(c, "ModelTransition", VGQ_REL_INTERVAL);
	static const char *const strings[] = {"from_site", "from_format", "to_site", "to_format"};
	for (size_t i = 0; i < 4; i++)
		vgq_derived_attr(c, r, strings[i], VGQ_STRING, NULL);
	vgq_derived_attr(c, r, "count", VGQ_UINT, NULL);
	static const char *const doubles[] = {"probability", "mean", "p50", "p90", "p99"};
	for (size_t i = 0; i < 5; i++)
		vgq_derived_attr(c, r, doubles[i], VGQ_DOUBLE, NULL);
	for (size_t i = 0; m && i < m->ntrans; i++) {
		const struct vgm_trans *x = &m->trans[i];
		const struct vgm_event *from = &m->events[x->from], *to = &m->events[x->to];
		size_t t = vgq_derived_append(r, db->first, db->last);
		r->cols[0].s[t] = vgq_derived_intern(c, from->site);
		r->cols[1].s[t] = vgq_derived_intern(c, from->fmt);
		r->cols[2].s[t] = vgq_derived_intern(c, to->site);
		r->cols[3].s[t] = vgq_derived_intern(c, to->fmt);
		r->cols[4].u[t] = x->count;
		r->cols[5].d[t] = from->out ? (double)x->count / (double)from->out : 0;
		r->cols[6].d[t] = vgm_sketch_mean(&x->sk);
		r->cols[7].d[t] = vgm_sketch_quantile(&x->sk, 0.5);
		r->cols[8].d[t] = vgm_sketch_quantile(&x->sk, 0.9);
		r->cols[9].d[t] = vgm_sketch_quantile(&x->sk, 0.99);
	}
}

static int build_model(struct vgq_derived_ctx *c, char *err, size_t errsize)
{
	if (vgq_derived_schema_only(c)) {
		add_model(c, NULL); /* the relations, no tuples */
		return 0;
	}
	char *dir = vgt_recording_dir(vgq_derived_trace(c));
	struct vgm_model *m = vgm_model_new();
	struct vgm_symbolizer *sym = vgm_symbolizer_new();
	struct vgm_input_stats st = {0};
	int rc = -1;
	if (!dir || !m || !sym)
		snprintf(err, errsize, "out of memory");
	else if (vgm_load_input(m, dir, false, sym, &st, err, errsize) == 0)
		rc = 0;
	if (rc == 0)
		add_model(c, m);
	vgm_symbolizer_free(sym);
	vgm_model_free(m);
	free(dir);
	return rc;
}

const struct vgq_derived_provider vgd_steps_provider = {
    .names = steps_names,
    .source = "vigil model --from-trace",
    .not_live = "it is made of every event of every sensor (vigil watch enables the "
                "query's)",
    .build = build_steps};
const struct vgq_derived_provider vgd_model_provider = {
    .names = model_names,
    .source = "vigil model",
    .not_live = "a model is made of the whole run and of the log models processes write "
                "at their end",
    .build = build_model};
