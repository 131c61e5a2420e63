/* A model from a recorded CTF trace: events in time order (the reader's merge), one
 * event type per event name, transitions between consecutive events of a thread (its
 * stream, continued across the process's execs in the next image's stream). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/inputs.h"
#include "trace/source.h"

struct last {
	long event; /* class_id of its latest event, -1 before the stream's first event */
	int64_t ts;
	bool seen; /* the stream's thread and image are known: */
	uint32_t tid, gen;
	const struct vgt_image *img;
};

/* The first event of a stream in an exec'd image: the thread went on from its stream in
 * an earlier image of the process (the latest one), whose last event leads to it. */
static void continue_thread(struct last *last, size_t ns, struct last *l)
{
	struct last *from = NULL;
	for (size_t j = 0; j < ns; j++) {
		struct last *o = &last[j];
		if (o != l && o->seen && o->event >= 0 && o->img != l->img && o->tid == l->tid &&
		    o->gen == l->gen && vgt_image_same_process(o->img, l->img) &&
		    (!from || o->ts > from->ts))
			from = o;
	}
	if (from) {
		l->event = from->event;
		l->ts = from->ts;
		from->event = -1; /* handed on once */
	}
}

int vgm_trace_steps(struct vgt_trace *t, vgm_step_fn step, void *ctx)
{
	struct vgt_source *source = vgt_source_of(t);
	size_t ns = vgt_stream_count(t);
	struct last *last = malloc((ns + 1) * sizeof *last);
	int rc = -1;
	if (!last)
		goto out;
	for (size_t i = 0; i < ns; i++)
		last[i] = (struct last){.event = -1};
	const struct vgt_event *ev;
	while ((ev = vgt_source_next(source))) {
		struct last *l = &last[ev->stream->index];
		if (!l->seen) {
			*l = (struct last){-1, 0, true, ev->tid, ev->thread_gen, ev->image};
			if (ev->image->exec_index > 0)
				continue_thread(last, ns, l);
		}
		if (step(ctx, ev, l->event >= 0 ? vgt_class_at(t, (size_t)l->event) : NULL, l->ts))
			goto out;
		l->event = (long)ev->type->class_id;
		l->ts = ev->ts;
	}
	rc = 0;
out:
	free(last);
	vgt_source_close(source);
	return rc;
}

struct from_trace {
	struct vgm_model *m;
	long *event_of; /* each event class's model event, interned at its first event */
	uint64_t n;
};

static long event_of(struct from_trace *f, const struct vgt_event_type *type)
{
	long e = f->event_of[type->class_id];
	if (e >= 0)
		return e;
	char *site = malloc(strlen(type->name) + 8);
	if (!site)
		return -1;
	sprintf(site, "sensor:%s", type->name);
	e = vgm_event_intern(f->m, site, type->name);
	free(site);
	return f->event_of[type->class_id] = e;
}

static int add_step(void *ctx, const struct vgt_event *ev, const struct vgt_event_type *prev,
                    int64_t prev_ts)
{
	struct from_trace *f = ctx;
	long e = event_of(f, ev->type);
	if (e < 0)
		return -1;
	f->m->events[e].count++;
	f->n++;
	if (prev) {
		struct vgm_trans *tr =
		    vgm_trans_intern(f->m, (uint32_t)event_of(f, prev), (uint32_t)e);
		if (!tr)
			return -1;
		/* A stream's times never go backwards (the reader reports it as damage). */
		uint64_t dt = ev->ts > prev_ts ? (uint64_t)(ev->ts - prev_ts) : 0;
		tr->count++;
		tr->sum_ns += dt;
		if (vgm_sketch_add(&tr->sk, dt, 1))
			return -1;
	}
	return 0;
}

int vgm_from_trace(struct vgm_model *m, const char *path, uint64_t *damaged, char *err,
                   size_t errsize)
{
	const char *paths[] = {path};
	struct vgt_source *source = vgt_source_open(paths, 1, 0, err, errsize);
	if (!source)
		return -1;
	struct vgt_trace *t = vgt_source_trace(source);
	struct from_trace f = {m, malloc((vgt_class_count(t) + 1) * sizeof *f.event_of), 0};
	int rc = -1;
	if (!f.event_of)
		goto oom;
	for (size_t i = 0; i < vgt_class_count(t); i++)
		f.event_of[i] = -1;
	if (vgm_trace_steps(t, add_step, &f) < 0)
		goto oom;
	*damaged = vgt_damage_total(t);
	char src[600];
	snprintf(src, sizeof src, "trace %.500s: %llu events", path, (unsigned long long)f.n);
	if (vgm_add_source(m, src))
		goto oom;
	vgm_model_update_out(m);
	rc = 0;
	goto out;
oom:
	snprintf(err, errsize, "%s: out of memory", path);
out:
	free(f.event_of);
	vgt_source_close(source);
	return rc;
}
