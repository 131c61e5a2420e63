/* The export model as Perfetto's protobuf trace (proto/perfetto_trace.proto, encoded by
 * protobuf-c; docs/export.md). One packet sequence:
 *
 *   a TrackDescriptor per process (ProcessDescriptor), thread (ThreadDescriptor, parent
 *   the process), async lane (named by its relation, parent the process: slices that
 *   overlap get lanes of their own) and counter track (CounterDescriptor, parent the
 *   process: events_discarded, "RELATION FIELD" of a sampled sensor, "RELATION
 *   vigil.open"); then TrackEvents in time order: TYPE_INSTANT, TYPE_SLICE_BEGIN/END
 *   (each track's slices nest), TYPE_COUNTER (counter_value, or double_counter_value
 *   for a float64 field); fields as debug annotations; a send carries the flow
 *   ids of its messages (flow_ids), a receive ends them (terminating_flow_ids).
 *
 * Each packet is written as it is made, as field 1 of Trace: a file of them is a Trace. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_model.h"

#ifndef VIGIL_HAVE_PERFETTO
/* Built without protobuf-c: `vigil export` says so before reading the trace. */
bool vgx_perfetto_available(void)
{
	return false;
}

int vgx_write_perfetto(const struct vgx_model *m, FILE *f, char *err, size_t errsize)
{
	(void)m;
	(void)f;
	snprintf(err, errsize, "built without protobuf-c");
	return -1;
}
#else
#include "perfetto_trace.pb-c.h"

#define SEQ 1
#define UUID_PROC(p) ((1ull << 40) + (p))
#define UUID_THREAD(t) ((2ull << 40) + (t))
#define UUID_LANE(l) ((3ull << 40) + (l))
#define UUID_COUNTER(t) ((4ull << 40) + (t)) /* t: a vgx_ctrack */

bool vgx_perfetto_available(void)
{
	return true;
}

struct writer {
	FILE *f;
	uint8_t *buf;
	size_t cap;
	bool first, failed;
};

static void put_varint(FILE *f, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		putc(b | (v ? 0x80 : 0), f);
	} while (v);
}

static void emit(struct writer *w, Perfetto__Protos__TracePacket *p)
{
	p->has_trusted_packet_sequence_id = 1;
	p->trusted_packet_sequence_id = SEQ;
	if (w->first) { /* the sequence starts with nothing to remember */
		p->has_sequence_flags = 1;
		p->sequence_flags =
		    PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
		w->first = false;
	}
	size_t n = perfetto__protos__trace_packet__get_packed_size(p);
	if (n > w->cap) {
		uint8_t *b = realloc(w->buf, n);
		if (!b) {
			w->failed = true;
			return;
		}
		w->buf = b;
		w->cap = n;
	}
	perfetto__protos__trace_packet__pack(p, w->buf);
	putc(0x0a, w->f); /* Trace.packet: field 1, length-delimited */
	put_varint(w->f, n);
	fwrite(w->buf, 1, n, w->f);
}

static void descriptor(struct writer *w, Perfetto__Protos__TrackDescriptor *d)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	p.track_descriptor = d;
	emit(w, &p);
}

/* Arguments: one annotation per member; numbers and booleans typed, others as text. */
static size_t annotations(json_t *args, Perfetto__Protos__DebugAnnotation **out,
                          Perfetto__Protos__DebugAnnotation *store, char **texts)
{
	size_t n = 0;
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v)
	{
		Perfetto__Protos__DebugAnnotation *a = &store[n];
		perfetto__protos__debug_annotation__init(a);
		a->name = (char *)key;
		texts[n] = NULL;
		if (json_is_integer(v)) {
			a->has_int_value = 1;
			a->int_value = json_integer_value(v);
		} else if (json_is_real(v)) {
			a->has_double_value = 1;
			a->double_value = json_real_value(v);
		} else if (json_is_boolean(v)) {
			a->has_bool_value = 1;
			a->bool_value = json_is_true(v);
		} else if (json_is_string(v)) {
			a->string_value = (char *)json_string_value(v);
		} else {
			texts[n] = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
			a->string_value = texts[n] ? texts[n] : "";
		}
		out[n] = a;
		n++;
	}
	return n;
}

struct rec {
	int64_t ts;
	size_t seq;
	int type; /* TrackEvent type */
	uint64_t track;
	const struct vgx_item *item;       /* NULL for counters */
	const struct vgx_counter *counter; /* for counters */
};

struct recs {
	struct rec *v;
	size_t n;
};

static void add(struct recs *r, int64_t ts, int type, uint64_t track, const struct vgx_item *it,
                const struct vgx_counter *c)
{
	r->v[r->n] = (struct rec){ts, r->n, type, track, it, c};
	r->n++;
}

struct placed {
	const struct vgx_item *it;
	size_t track; /* index: threads first, then lanes */
};

static int by_track_start(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;
	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->it->ts != y->it->ts)
		return x->it->ts < y->it->ts ? -1 : 1;
	if (x->it->end != y->it->end)
		return x->it->end > y->it->end ? -1 : 1;
	return x->it->id < y->it->id ? -1 : x->it->id > y->it->id;
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct lane {
	uint32_t proc;
	const char *name;
	int64_t last_end;
};

static void event(struct writer *w, const struct rec *r)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	p.has_timestamp = 1;
	p.timestamp = (uint64_t)r->ts;
	p.track_event = &e;
	e.has_type = 1;
	e.type = r->type;
	e.has_track_uuid = 1;
	e.track_uuid = r->track;
	const struct vgx_item *it = r->item;
	if (!it) {
		if (r->counter->v.is_double) {
			e.has_double_counter_value = 1;
			e.double_counter_value = r->counter->v.d;
		} else {
			e.has_counter_value = 1;
			e.counter_value = r->counter->v.i;
		}
		emit(w, &p);
		return;
	}
	if (r->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
		emit(w, &p);
		return;
	}
	char *cat = (char *)it->cat;
	e.n_categories = 1;
	e.categories = &cat;
	e.name = it->name;
	json_t *args = json_copy(it->args);
	json_object_set_new(args, "vigil.event", json_string(it->event));
	if (it->end_event)
		json_object_set_new(args, "vigil.end_event", json_string(it->end_event));
	if (it->open)
		json_object_set_new(args, "vigil.open", json_true());
	size_t na = json_object_size(args);
	Perfetto__Protos__DebugAnnotation **ptrs = calloc(na + 1, sizeof *ptrs);
	Perfetto__Protos__DebugAnnotation *store = calloc(na + 1, sizeof *store);
	char **texts = calloc(na + 1, sizeof *texts);
	if (!ptrs || !store || !texts) {
		w->failed = true;
	} else {
		e.n_debug_annotations = annotations(args, ptrs, store, texts);
		e.debug_annotations = ptrs;
		e.n_flow_ids = it->nflows_out;
		e.flow_ids = it->flows_out;
		e.n_terminating_flow_ids = it->nflows_in;
		e.terminating_flow_ids = it->flows_in;
		emit(w, &p);
		for (size_t i = 0; i < na; i++)
			free(texts[i]);
	}
	free(ptrs);
	free(store);
	free(texts);
	json_decref(args);
}

static void tracks(struct writer *w, const struct vgx_model *m, const struct lane *lanes,
                   size_t nlanes)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
		d.has_uuid = 1;
		d.uuid = UUID_PROC(i);
		pd.has_pid = 1;
		pd.pid = (int32_t)m->procs[i].xpid;
		pd.process_name = (char *)(m->procs[i].name ? m->procs[i].name : "?");
		d.process = &pd;
		descriptor(w, &d);
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
		d.has_uuid = 1;
		d.uuid = UUID_THREAD(i);
		d.has_parent_uuid = 1;
		d.parent_uuid = UUID_PROC(m->threads[i].proc);
		td.has_pid = td.has_tid = 1;
		td.pid = (int32_t)m->procs[m->threads[i].proc].xpid;
		td.tid = (int32_t)m->threads[i].tid;
		td.thread_name = m->threads[i].name;
		d.thread = &td;
		descriptor(w, &d);
	}
	for (size_t i = 0; i < nlanes; i++) {
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		d.has_uuid = d.has_parent_uuid = 1;
		d.uuid = UUID_LANE(i);
		d.parent_uuid = UUID_PROC(lanes[i].proc);
		d.name = (char *)lanes[i].name;
		descriptor(w, &d);
	}
	for (size_t i = 0; i < m->nctracks && !w->failed; i++) {
		const struct vgx_ctrack *t = &m->ctracks[i];
		Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
		d.has_uuid = d.has_parent_uuid = 1;
		d.uuid = UUID_COUNTER(i);
		d.parent_uuid = UUID_PROC(t->proc);
		/* a track per series: "events_discarded", "RELATION FIELD" */
		char *name = NULL;
		if (!strcmp(t->name, "events_discarded"))
			name = strdup(t->name);
		else if (asprintf(&name, "%s %s", t->name, t->key) < 0)
			name = NULL;
		if (!name) {
			w->failed = true;
			break;
		}
		d.name = name;
		d.counter = &cd;
		descriptor(w, &d);
		free(name);
	}
}

/* Each async slice goes to the first lane of its process and name that is free by its
 * start (items come in start order). */
static struct lane *assign_lanes(const struct vgx_model *m, struct placed *pl, size_t *nlanes)
{
	struct lane *lanes = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < m->nitems; i++) {
		const struct vgx_item *it = &m->items[i];
		pl[i].it = it;
		if (it->kind == VGX_INSTANT || it->place == VGX_ON_THREAD) {
			pl[i].track = it->thread;
			continue;
		}
		size_t l = 0;
		while (l < n && !(lanes[l].proc == it->proc && !strcmp(lanes[l].name, it->name) &&
		                  lanes[l].last_end <= it->ts))
			l++;
		if (l == n) {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				struct lane *nl = realloc(lanes, cap * sizeof *nl);
				if (!nl) {
					free(lanes);
					return NULL;
				}
				lanes = nl;
			}
			lanes[n++] = (struct lane){it->proc, it->name, it->end};
		}
		lanes[l].last_end = it->end;
		pl[i].track = m->nthreads + l;
	}
	*nlanes = n;
	return lanes ? lanes : calloc(1, sizeof *lanes);
}

int vgx_write_perfetto(const struct vgx_model *m, FILE *f, char *err, size_t errsize)
{
	struct writer w = {f, NULL, 0, true, false};
	size_t nlanes = 0;
	struct placed *pl = calloc(m->nitems + 1, sizeof *pl);
	struct recs r = {calloc(2 * m->nitems + m->ncounters + 1, sizeof *r.v), 0};
	struct placed **stack = calloc(m->nitems + 1, sizeof *stack);
	struct lane *lanes = pl ? assign_lanes(m, pl, &nlanes) : NULL;
	int rc = -1;
	if (!pl || !r.v || !stack || !lanes) {
		snprintf(err, errsize, "out of memory");
		goto out;
	}
	qsort(pl, m->nitems, sizeof *pl, by_track_start);
	/* per track, a stack walk: ends before what starts at or after them */
	size_t depth = 0;
	for (size_t i = 0; i <= m->nitems; i++) {
		bool next_track = i == m->nitems || (i && pl[i].track != pl[i - 1].track);
		while (depth && (next_track || stack[depth - 1]->it->end <= pl[i].it->ts)) {
			struct placed *top = stack[--depth];
			uint64_t uuid = top->track < m->nthreads
			                    ? UUID_THREAD(top->track)
			                    : UUID_LANE(top->track - m->nthreads);
			add(&r, top->it->end, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END,
			    uuid, top->it, NULL);
		}
		if (i == m->nitems)
			break;
		const struct vgx_item *it = pl[i].it;
		uint64_t uuid = pl[i].track < m->nthreads ? UUID_THREAD(pl[i].track)
		                                          : UUID_LANE(pl[i].track - m->nthreads);
		if (it->kind == VGX_INSTANT) {
			add(&r, it->ts, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, uuid, it,
			    NULL);
			continue;
		}
		add(&r, it->ts, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, uuid, it,
		    NULL);
		stack[depth++] = &pl[i];
	}
	for (size_t i = 0; i < m->ncounters; i++)
		add(&r, m->counters[i].ts, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER,
		    UUID_COUNTER(m->counters[i].track), NULL, &m->counters[i]);
	qsort(r.v, r.n, sizeof *r.v, by_time);
	tracks(&w, m, lanes, nlanes);
	for (size_t i = 0; i < r.n && !w.failed; i++)
		event(&w, &r.v[i]);
	if (w.failed || ferror(f))
		snprintf(err, errsize, w.failed ? "out of memory" : "write error");
	else
		rc = 0;
out:
	free(w.buf);
	free(pl);
	free(r.v);
	free(stack);
	free(lanes);
	return rc;
}
#endif
