/* Violation and Deadlock: what `vigil check` finds (docs/consistency.md), as relations
 * (docs/tquel.md "Derived relations"), from one walk of the checker over the trace.
 *
 *   Violation  event at the violating event's valid time: rule, event (its type),
 *              message, file, offset (as `vigil check --json` gives them), thread (the
 *              performing thread), kind1/entity1, kind2/entity2 (the entities involved,
 *              NULL when fewer).
 *   Deadlock   event at the instant a cycle of the wait-for graph formed, one tuple per
 *              step: cycle (1, 2, ... in the order they formed), step, steps, thread
 *              (waiting), lock (held by the next step's thread), since (when the thread
 *              began waiting, ns), standing (1: still standing at the end of the trace,
 *              a deadlock; 0: broken before), as `vigil check --deadlocks --json`.
 * The wait-for edges themselves are the primitive build's WaitFor relation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/waitfor.h"
#include "derived/derived.h"

static const char *const names[] = {"Violation", "Deadlock", NULL};

struct walk {
	struct vgq_derived_ctx *c;
	struct vgq_relation *viol;
	struct vgc_wf *wf;
	bool oom;
};

static struct vgq_ref entity_ref(struct walk *w, const struct vgc_entity_ref *e, uint32_t image)
{
	return (struct vgq_ref){e->id, (uint32_t)e->gen, image, vgq_derived_intern(w->c, e->name)};
}

static void on_violation(void *ctx, const struct vgc_violation *v)
{
	struct walk *w = ctx;
	struct vgq_relation *r = w->viol;
	const struct vgt_event *ev = v->event;
	size_t t = vgq_derived_append(r, v->valid_ts, v->valid_ts);
	uint32_t image = vgq_derived_image_index(w->c, ev->image, false);
	uint32_t process = vgq_derived_image_index(w->c, ev->image, true);
	r->cols[0].i[t] = v->rule;
	r->cols[1].s[t] = vgq_derived_intern(w->c, ev->type->name);
	r->cols[2].s[t] = vgq_derived_intern(w->c, v->message);
	r->cols[3].s[t] = vgq_derived_intern(w->c, v->file);
	r->cols[4].u[t] = ev->offset;
	r->cols[5].r[t] = (struct vgq_ref){ev->tid, ev->thread_gen, process, NULL};
	for (unsigned i = 0; i < v->nentities && i < 2; i++) {
		const struct vgc_entity_ref *e = &v->entities[i];
		bool thread = !strcmp(e->kind, "thread");
		r->cols[6 + 2 * i].s[t] = vgq_derived_intern(w->c, e->kind);
		r->cols[7 + 2 * i].r[t] = entity_ref(w, e, thread ? process : image);
	}
}

static void on_lock(void *ctx, const struct vgc_lock_event *e)
{
	struct walk *w = ctx;
	if (!w->oom && !vgc_wf_event(w->wf, e))
		w->oom = true;
}

/* A thread is scoped by its process's first image, as in OSThread; a lock by its image. */
static struct vgq_ref node_ref(struct walk *w, const struct vgc_wf_node *n, bool thread)
{
	uint32_t image = n->image;
	if (thread)
		image = vgq_derived_image_index(
		    w->c, vgt_image_at(vgq_derived_trace(w->c), n->image), true);
	return (struct vgq_ref){n->id, (uint32_t)n->gen, image,
	                        n->name && *n->name ? vgq_derived_intern(w->c, n->name) : NULL};
}

static void add_deadlocks(struct walk *w, struct vgq_relation *r)
{
	const struct vgc_wf_cycle *cycles;
	size_t n = vgc_wf_cycles(w->wf, &cycles);
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < cycles[k].nsteps; i++) {
			const struct vgc_wf_step *s = &cycles[k].steps[i];
			size_t t = vgq_derived_append(r, cycles[k].ts, cycles[k].ts);
			r->cols[0].u[t] = k + 1;
			r->cols[1].u[t] = i + 1;
			r->cols[2].u[t] = cycles[k].nsteps;
			r->cols[3].r[t] = node_ref(w, vgc_wf_thread(w->wf, s->thread_index), true);
			r->cols[4].r[t] = node_ref(w, vgc_wf_lock(w->wf, s->lock_index), false);
			r->cols[5].i[t] = s->since_ts;
			r->cols[6].i[t] = cycles[k].standing;
		}
}

static int build(struct vgq_derived_ctx *c, char *err, size_t errsize)
{
	struct walk w = {.c = c};
	static const struct vgq_derived_attrdef violation[] = {
	    {"rule", VGQ_INT, NULL},       {"event", VGQ_STRING, NULL},
	    {"message", VGQ_STRING, NULL}, {"file", VGQ_STRING, NULL},
	    {"offset", VGQ_UINT, NULL},    {"thread", VGQ_ENTITY, "OSThread"},
	    {"kind1", VGQ_STRING, NULL},   {"entity1", VGQ_ENTITY, NULL},
	    {"kind2", VGQ_STRING, NULL},   {"entity2", VGQ_ENTITY, NULL}};
	static const struct vgq_derived_attrdef deadlock[] = {
	    {"cycle", VGQ_UINT, NULL},  {"step", VGQ_UINT, NULL},
	    {"steps", VGQ_UINT, NULL},  {"thread", VGQ_ENTITY, "OSThread"},
	    {"lock", VGQ_ENTITY, NULL}, {"since", VGQ_INT, NULL},
	    {"standing", VGQ_INT, NULL}};
	struct vgq_relation *v = w.viol = vgq_derived_new(c, "Violation", VGQ_REL_EVENT);
	vgq_derived_attrs(c, v, violation, sizeof violation / sizeof *violation);
	struct vgq_relation *d = vgq_derived_new(c, "Deadlock", VGQ_REL_EVENT);
	vgq_derived_attrs(c, d, deadlock, sizeof deadlock / sizeof *deadlock);

	if (vgq_derived_schema_only(c))
		return 0;
	if (!(w.wf = vgc_wf_new())) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	struct vgc_sink sink = {.ctx = &w, .violation = on_violation, .lock = on_lock};
	struct vgc_summary sum;
	int rc = vgc_check(vgq_derived_trace(c), &sink, &sum, err, errsize);
	if (rc == 0 && w.oom) {
		snprintf(err, errsize, "out of memory in the wait-for graph");
		rc = -1;
	}
	if (rc == 0)
		add_deadlocks(&w, d);
	for (size_t t = 0; t < v->ntuples; t++) /* fewer than two entities: NULL */
		for (size_t k = 6; k < 10; k += 2)
			if (!v->cols[k].s[t]) {
				vgq_derived_set_null(v, k, t);
				vgq_derived_set_null(v, k + 1, t);
			}
	vgc_wf_free(w.wf);
	return rc;
}

const struct vgq_derived_provider vgd_check_provider = {
    .names = names,
    .source = "vigil check",
    .not_live = "a violation can come from any sensor (rule 2 judges every event naming an "
                "entity), where vigil watch enables the query's sensors only, and whether a "
                "deadlock stands is known at the trace's end",
    .build = build};
