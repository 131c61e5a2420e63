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
	long event; /* index, -1 before the stream's first event */
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

int vgm_from_trace(struct vgm_model *m, const char *path, uint64_t *damaged, char *err,
                   size_t errsize)
{
	const char *paths[] = {path};
	struct vgt_source *source = vgt_source_open(paths, 1, 0, err, errsize);
	if (!source)
		return -1;
	struct vgt_trace *t = vgt_source_trace(source);
	size_t ns = vgt_stream_count(t);
	struct last *last = malloc((ns + 1) * sizeof *last);
	/* Each event class's model event, interned at its first event (-1 before). */
	long *event_of = malloc((vgt_class_count(t) + 1) * sizeof *event_of);
	int rc = -1;
	if (!last || !event_of) {
		snprintf(err, errsize, "%s: out of memory", path);
		goto out;
	}
	for (size_t i = 0; i < ns; i++)
		last[i] = (struct last){.event = -1};
	for (size_t i = 0; i < vgt_class_count(t); i++)
		event_of[i] = -1;
	uint64_t n = 0;
	const struct vgt_event *ev;
	while ((ev = vgt_source_next(source))) {
		long e = event_of[ev->type->class_id];
		if (e < 0) {
			char *site = malloc(strlen(ev->type->name) + 8);
			if (!site)
				goto oom;
			sprintf(site, "sensor:%s", ev->type->name);
			e = vgm_event_intern(m, site, ev->type->name);
			free(site);
			if (e < 0)
				goto oom;
			event_of[ev->type->class_id] = e;
		}
		m->events[e].count++;
		n++;
		struct last *l = &last[ev->stream->index];
		if (!l->seen) {
			*l = (struct last){-1, 0, true, ev->tid, ev->thread_gen, ev->image};
			if (ev->image->exec_index > 0)
				continue_thread(last, ns, l);
		}
		if (l->event >= 0) {
			struct vgm_trans *tr = vgm_trans_intern(m, (uint32_t)l->event, (uint32_t)e);
			if (!tr)
				goto oom;
			/* A stream's times never go backwards (the reader reports it as damage). */
			uint64_t dt = ev->ts > l->ts ? (uint64_t)(ev->ts - l->ts) : 0;
			tr->count++;
			tr->sum_ns += dt;
			if (vgm_sketch_add(&tr->sk, dt, 1))
				goto oom;
		}
		l->event = e;
		l->ts = ev->ts;
	}
	*damaged = vgt_damage_total(t);
	char src[600];
	snprintf(src, sizeof src, "trace %.500s: %llu events", path, (unsigned long long)n);
	if (vgm_add_source(m, src))
		goto oom;
	vgm_model_update_out(m);
	rc = 0;
	goto out;
oom:
	snprintf(err, errsize, "%s: out of memory", path);
out:
	free(last);
	free(event_of);
	vgt_source_close(source);
	return rc;
}
