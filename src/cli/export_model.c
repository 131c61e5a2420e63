/* The export model: one merged pass over a trace (export_model.h). */
#define _GNU_SOURCE
#include "export_model.h"
#include "event_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_counters.h"
#include "export_map.h"
#include "net/net.h"
#include "trace/source.h"

/* Open begins of one (image, relation), oldest first; closed ones are SIZE_MAX. */
struct queue {
	size_t *v, n, cap, head;
};

struct build {
	struct vgx_model *m;
	struct vgt_names *names;
	struct vgx_map procs, threads, open, states, lives, net_items;
	struct queue *queues;
	size_t nqueues, cap_queues;
	struct vgx_counting counting;
	size_t cap_items, cap_threads;
	bool oom;
	struct vgt_fields *fields; /* field_names, by slot */
};

/* The fields read by name, resolved once per event class (trace/source.h). */
enum { F_NAME, F_TID, F_KIND, F_ID, F_PID, F_GEN, NF };
static const char *const field_names[NF] = {"name", "tid", "kind", "id", "pid", "gen"};

static json_t *value(struct build *b, const struct vgt_field *fd, const struct vgt_value *v)
{
	if (v->type != VGT_REF)
		return vg_value_json(v);
	const char *name = vgt_names_lookup(b->names, fd->ref_kind, v->ref.id, v->ref.gen);
	if (name)
		return vg_json_text(name, strlen(name));
	char buf[128];
	snprintf(buf, sizeof buf, "%s#%" PRIu64 ".%" PRIu32, fd->ref_kind ? fd->ref_kind : "entity",
	         v->ref.id, v->ref.gen);
	return json_string(buf);
}

static json_t *fields(struct build *b, const struct vgt_event *ev)
{
	json_t *o = json_object();
	for (unsigned i = 0; i < ev->type->nfields; i++) {
		const struct vgt_field *fd = &ev->type->fields[i];
		if (!fd->hidden)
			json_object_set_new(o, fd->name, value(b, fd, &ev->values[i]));
	}
	return o;
}

static uint32_t proc_of(struct build *b, const struct vgt_image *img, int64_t ts)
{
	char key[512];
	snprintf(key, sizeof key, "%s|%" PRId64 "|%" PRIu64, img->hostname ? img->hostname : "",
	         img->pid, img->process_gen);
	struct vgx_model *m = b->m;
	size_t *p = vgx_map_put(&b->procs, key, m->nprocs);
	if (!p || *p < m->nprocs)
		return p ? (uint32_t)*p : 0;
	struct vgx_proc *np = realloc(m->procs, (m->nprocs + 1) * sizeof *np);
	if (!np) {
		b->oom = true;
		return 0;
	}
	m->procs = np;
	int64_t xpid = img->pid >= 0 ? img->pid : 0;
	for (bool clash = true; clash;) { /* one pid on two hosts (or runs): another number */
		clash = false;
		for (size_t i = 0; i < m->nprocs && !clash; i++)
			clash = m->procs[i].xpid == xpid;
		if (clash)
			xpid += 1000000;
	}
	m->procs[m->nprocs] =
	    (struct vgx_proc){img->pid, xpid, img->hostname, img->procname, img->process_gen, ts};
	return (uint32_t)m->nprocs++;
}

static uint32_t thread_of(struct build *b, uint32_t proc, int64_t tid)
{
	char key[64];
	snprintf(key, sizeof key, "%" PRIu32 "|%" PRId64, proc, tid);
	struct vgx_model *m = b->m;
	size_t *p = vgx_map_put(&b->threads, key, m->nthreads);
	if (!p || *p < m->nthreads)
		return p ? (uint32_t)*p : 0;
	m->threads = vgx_grow(m->threads, &b->cap_threads, m->nthreads + 1, sizeof *m->threads);
	if (!m->threads) {
		b->oom = true;
		return 0;
	}
	m->threads[m->nthreads] = (struct vgx_thread){proc, tid, NULL};
	return (uint32_t)m->nthreads++;
}

static struct vgx_item *item_new(struct build *b, enum vgx_item_kind kind, const char *cat,
                                 const char *name, const struct vgt_event *ev, json_t *args)
{
	struct vgx_model *m = b->m;
	struct vgx_item *items = vgx_grow(m->items, &b->cap_items, m->nitems + 1, sizeof *items);
	char *nm = strdup(name);
	if (!items || !nm) {
		free(nm);
		json_decref(args);
		b->oom = true;
		return NULL;
	}
	m->items = items;
	uint32_t proc = proc_of(b, ev->image, ev->ts);
	struct vgx_item *it = &m->items[m->nitems];
	*it = (struct vgx_item){.kind = kind,
	                        .place = VGX_ASYNC,
	                        .cat = cat,
	                        .name = nm,
	                        .proc = proc,
	                        .thread = thread_of(b, proc, ev->tid),
	                        .ts = ev->ts,
	                        .end = ev->ts,
	                        .open = kind == VGX_SLICE,
	                        .event = ev->type->name,
	                        .args = args,
	                        .id = m->nitems + 1};
	m->nitems++;
	return it;
}

/* The value of field `name` as text, or "" */
static void field_text(const struct build *b, const struct vgt_event *ev, int f, char *buf,
                       size_t size)
{
	int i = vgt_fields_slots(b->fields, ev->type)[f];
	buf[0] = 0;
	if (i < 0)
		return;
	const struct vgt_value *v = &ev->values[i];
	switch (v->type) {
	case VGT_INT:
		snprintf(buf, size, "%" PRId64, v->i);
		break;
	case VGT_UINT:
		snprintf(buf, size, "%" PRIu64, v->u);
		break;
	case VGT_STRING:
		snprintf(buf, size, "%.*s", (int)(v->str.len < 200 ? v->str.len : 200), v->str.ptr);
		break;
	case VGT_REF:
		snprintf(buf, size, "%" PRIu64 ".%" PRIu32, v->ref.id, v->ref.gen);
		break;
	default:
		break;
	}
}

static void thread_names(struct build *b, const struct vgt_event *ev)
{
	const char *n = ev->type->name;
	if (strcmp(n, "vg.thread.begin") && strcmp(n, "vg.thread.name"))
		return;
	const int *slot = vgt_fields_slots(b->fields, ev->type);
	int fi = slot[F_NAME], ti = slot[F_TID];
	if (fi < 0 || ev->values[fi].type != VGT_STRING)
		return;
	int64_t tid = ev->tid;
	if (ti >= 0 && ev->values[ti].type == VGT_UINT)
		tid = (int64_t)ev->values[ti].u;
	else if (ti >= 0 && ev->values[ti].type == VGT_INT)
		tid = ev->values[ti].i;
	struct vgx_thread *t = &b->m->threads[thread_of(b, proc_of(b, ev->image, ev->ts), tid)];
	if (b->oom)
		return;
	free(t->name);
	t->name = strndup(ev->values[fi].str.ptr, ev->values[fi].str.len);
}

static void instant(struct build *b, const struct vgt_event *ev, const char *cat)
{
	item_new(b, VGX_INSTANT, cat, ev->type->name, ev, fields(b, ev));
}

static void begin(struct build *b, const struct vgt_event *ev)
{
	char key[512];
	snprintf(key, sizeof key, "%p|%s", (const void *)ev->image, ev->type->relation);
	size_t *q = vgx_map_put(&b->open, key, b->nqueues);
	struct vgx_item *it =
	    item_new(b, VGX_SLICE, "interval", ev->type->relation, ev, fields(b, ev));
	if (!q || !it)
		return;
	if (*q == b->nqueues) {
		b->queues = vgx_grow(b->queues, &b->cap_queues, b->nqueues + 1, sizeof *b->queues);
		if (!b->queues) {
			b->oom = true;
			return;
		}
		b->queues[b->nqueues++] = (struct queue){0};
	}
	struct queue *qu = &b->queues[*q];
	qu->v = vgx_grow(qu->v, &qu->cap, qu->n + 1, sizeof *qu->v);
	if (!qu->v) {
		b->oom = true;
		return;
	}
	qu->v[qu->n++] = b->m->nitems - 1;
}

/* Closes the oldest open begin whose fields equal the end's (true); else an instant. */
static bool end(struct build *b, const struct vgt_event *ev)
{
	char key[512];
	snprintf(key, sizeof key, "%p|%s", (const void *)ev->image, ev->type->relation);
	size_t *q = vgx_map_get(&b->open, key);
	json_t *f = fields(b, ev);
	if (q) {
		struct queue *qu = &b->queues[*q];
		for (size_t k = qu->head; k < qu->n; k++) {
			if (qu->v[k] == SIZE_MAX)
				continue;
			struct vgx_item *it = &b->m->items[qu->v[k]];
			const char *name;
			json_t *val;
			bool same = true;
			json_object_foreach(f, name, val)
			{
				json_t *bv = json_object_get(it->args, name);
				if (bv && !json_equal(bv, val))
					same = false;
			}
			if (!same)
				continue;
			it->end = ev->ts;
			it->end_event = ev->type->name;
			it->open = false;
			if (it->thread == thread_of(b, it->proc, ev->tid))
				it->place = VGX_ON_THREAD;
			json_object_foreach(f, name, val) if (!json_object_get(it->args, name))
			    json_object_set(it->args, name, val);
			qu->v[k] = SIZE_MAX;
			while (qu->head < qu->n && qu->v[qu->head] == SIZE_MAX)
				qu->head++;
			json_decref(f);
			return true;
		}
	}
	json_object_set_new(f, "unmatched_end", json_true());
	item_new(b, VGX_INSTANT, "interval", ev->type->name, ev, f);
	return false;
}

/* The entity a state change is of: target, else performer, else the first reference,
 * else the thread. */
static void state(struct build *b, const struct vgt_event *ev)
{
	const struct vgt_event_type *t = ev->type;
	int fi = t->target >= 0 ? t->target : t->performer;
	for (unsigned i = 0; fi < 0 && i < t->nfields; i++)
		if (t->fields[i].type == VGT_REF)
			fi = (int)i;
	char who[64], key[512];
	if (fi >= 0)
		snprintf(who, sizeof who, "%" PRIu64 ".%" PRIu32, ev->values[fi].ref.id,
		         ev->values[fi].ref.gen);
	else
		snprintf(who, sizeof who, "tid %" PRIu32 ".%" PRIu32, ev->tid, ev->thread_gen);
	snprintf(key, sizeof key, "%p|%s|%s", (const void *)ev->image, t->relation, who);
	size_t *cur = vgx_map_get(&b->states, key);
	if (cur && *cur != SIZE_MAX) {
		struct vgx_item *prev = &b->m->items[*cur];
		prev->end = ev->ts; /* its end is the next state's begin */
		prev->open = false;
	}
	struct vgx_item *it = item_new(b, VGX_SLICE, "state", t->relation, ev, fields(b, ev));
	size_t *slot = vgx_map_put(&b->states, key, SIZE_MAX);
	if (it && slot)
		*slot = b->m->nitems - 1;
}

/* Entity lifetimes: vg.entity.create/.reclaim (by kind, id, gen), vg.process.*,
 * vg.thread.*, and a program's own create/reclaim sensors. */
static void life_key(const struct build *b, const struct vgt_event *ev, char *key, size_t size,
                     const char **label)
{
	char kind[256], id[64], gen[64];
	field_text(b, ev, F_KIND, kind, sizeof kind);
	field_text(b, ev, F_ID, id, sizeof id);
	if (!id[0])
		field_text(b, ev, F_PID, id, sizeof id);
	if (!id[0])
		field_text(b, ev, F_TID, id, sizeof id);
	field_text(b, ev, F_GEN, gen, sizeof gen);
	*label = ev->type->relation;
	if (!strcmp(*label, "vg.process"))
		*label = "OSProcess";
	else if (!strcmp(*label, "vg.thread"))
		*label = "OSThread";
	snprintf(key, size, "%p|%s|%s|%s|%s", (const void *)ev->image, ev->type->relation, kind, id,
	         gen);
}

static void create(struct build *b, const struct vgt_event *ev)
{
	char key[1024];
	const char *label;
	life_key(b, ev, key, sizeof key, &label);
	int ki = vgt_fields_slots(b->fields, ev->type)[F_KIND];
	char kind[256];
	if (ki >= 0 && ev->values[ki].type == VGT_STRING) {
		field_text(b, ev, F_KIND, kind, sizeof kind);
		label = kind;
	}
	struct vgx_item *it = item_new(b, VGX_SLICE, "entity", label, ev, fields(b, ev));
	size_t *slot = vgx_map_put(&b->lives, key, SIZE_MAX);
	if (it && slot)
		*slot = b->m->nitems - 1;
}

static void reclaim(struct build *b, const struct vgt_event *ev)
{
	char key[1024];
	const char *label;
	life_key(b, ev, key, sizeof key, &label);
	size_t *slot = vgx_map_get(&b->lives, key);
	if (slot && *slot != SIZE_MAX) {
		struct vgx_item *it = &b->m->items[*slot];
		it->end = ev->ts;
		it->end_event = ev->type->name;
		it->open = false;
		*slot = SIZE_MAX;
		return;
	}
	json_t *f = fields(b, ev);
	json_object_set_new(f, "unmatched_end", json_true());
	item_new(b, VGX_INSTANT, "entity", ev->type->name, ev, f);
}

static void net_key(char *key, size_t size, const char *host, int64_t pid, int64_t tid, int64_t ts,
                    uint64_t offset)
{
	snprintf(key, size, "%s|%" PRId64 "|%" PRId64 "|%" PRId64 "|%" PRIu64, host ? host : "",
	         pid, tid, ts, offset);
}

static void feed(struct build *b, const struct vgt_event *ev)
{
	const struct vgt_event_type *t = ev->type;
	vgt_names_observe(b->names, ev);
	thread_names(b, ev);
	if (!t->vigil) {
		instant(b, ev, "event");
		return;
	}
	bool runtime = !strncmp(t->relation, "vg.", 3);
	int open_delta = 0; /* of a sampled interval relation's open count */
	switch (t->kind) {
	case VGT_KIND_BEGIN:
		begin(b, ev);
		open_delta = 1;
		break;
	case VGT_KIND_END:
		open_delta = end(b, ev) ? -1 : 0;
		break;
	case VGT_KIND_STATE:
		if (runtime) /* renames: the names of threads, processes and entities */
			instant(b, ev, "entity");
		else
			state(b, ev);
		break;
	case VGT_KIND_CREATE:
		create(b, ev);
		break;
	case VGT_KIND_RECLAIM:
		reclaim(b, ev);
		break;
	default:
		if (!strcmp(t->name, "vg.net.send") || !strcmp(t->name, "vg.net.recv")) {
			instant(b, ev, "net");
			char key[512];
			net_key(key, sizeof key, ev->image->hostname, ev->image->pid, ev->tid,
			        ev->ts, ev->offset);
			if (!vgx_map_put(&b->net_items, key, b->m->nitems - 1))
				b->oom = true;
		} else {
			instant(b, ev, "event");
		}
	}
	/* sampled sensors: their values (and open intervals) as counter tracks */
	if (t->sampled && !runtime && !b->oom &&
	    !vgx_count_sampled(b->m, &b->counting, proc_of(b, ev->image, ev->ts), ev, open_delta))
		b->oom = true;
}

static int by_thread_start(const void *a, const void *b)
{
	const struct vgx_item *x = *(struct vgx_item *const *)a, *y = *(struct vgx_item *const *)b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Slices of one thread stay on it only if they nest (a viewer's thread track is a
 * stack; one ending where the next begins is its sibling); the others go to the
 * process's async track of their relation. */
static void nest(struct vgx_model *m)
{
	struct vgx_item **v = malloc((m->nitems + 1) * sizeof *v);
	struct vgx_item **stack = malloc((m->nitems + 1) * sizeof *stack);
	if (!v || !stack)
		goto out;
	size_t n = 0, depth = 0;
	for (size_t i = 0; i < m->nitems; i++)
		if (m->items[i].kind == VGX_SLICE && m->items[i].place == VGX_ON_THREAD)
			v[n++] = &m->items[i];
	qsort(v, n, sizeof *v, by_thread_start);
	for (size_t i = 0; i < n; i++) {
		struct vgx_item *it = v[i];
		if (i && v[i - 1]->thread != it->thread)
			depth = 0;
		while (depth && stack[depth - 1]->end <= it->ts)
			depth--;
		if (depth && it->end > stack[depth - 1]->end) {
			it->place = VGX_ASYNC;
			continue;
		}
		stack[depth++] = it;
	}
out:
	free(v);
	free(stack);
}

static void add_flows(struct build *b, const char *const *paths, size_t npaths)
{
	if (!b->net_items.n)
		return;
	struct vgn_session ss = {0};
	char err[512];
	if (vgn_session_open(&ss, paths, npaths, NULL, NULL, err, sizeof err) < 0) {
		if (asprintf(&b->m->net_note, "no flows: %s", err) < 0)
			b->m->net_note = NULL;
		return;
	}
	const struct vgn_set *s = ss.set;
	for (size_t i = 0; i < s->nmsgs; i++) {
		uint32_t ends[2] = {s->msgs[i].send, s->msgs[i].recv};
		struct vgx_item *its[2] = {NULL, NULL};
		for (int k = 0; k < 2; k++) {
			const struct vgn_event *e = &s->events[ends[k]];
			const struct vgn_thread *th = &s->threads[e->thread];
			const struct vgn_proc *pr = &s->procs[th->proc];
			char key[512];
			net_key(key, sizeof key, s->hosts[pr->host].name, pr->pid, th->tid, e->ts,
			        e->offset);
			size_t *ix = vgx_map_get(&b->net_items, key);
			its[k] = ix ? &b->m->items[*ix] : NULL;
		}
		if (!its[0] || !its[1])
			continue;
		uint64_t id = ++b->m->flows;
		struct vgx_item *snd = its[0], *rcv = its[1];
		uint64_t *o = realloc(snd->flows_out, (snd->nflows_out + 1) * sizeof *o);
		uint64_t *in = realloc(rcv->flows_in, (rcv->nflows_in + 1) * sizeof *in);
		if (o)
			snd->flows_out = o;
		if (in)
			rcv->flows_in = in;
		if (!o || !in) {
			b->oom = true;
			break;
		}
		snd->flows_out[snd->nflows_out++] = id;
		rcv->flows_in[rcv->nflows_in++] = id;
	}
	vgn_session_close(&ss);
}

struct stream_loss {
	uint32_t proc;
	int64_t ts;
	uint64_t lost;
};

static int by_proc_time(const void *a, const void *b)
{
	const struct stream_loss *x = a, *y = b;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The trace counts discarded events per stream, in its last packet: per process, a
 * sample at 0 when it starts and one at the end of each stream that lost events, the
 * running sum in time order. */
static void discarded(struct build *b, struct vgt_trace *t)
{
	struct vgx_model *m = b->m;
	size_t n = 0;
	for (size_t i = 0; i < vgt_stream_count(t); i++)
		n += vgt_stream_at(t, i)->stats.events_discarded > 0;
	if (!n)
		return;
	struct stream_loss *c = calloc(n, sizeof *c);
	if (!c) {
		b->oom = true;
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < vgt_stream_count(t); i++) {
		const struct vgt_stream *s = vgt_stream_at(t, i);
		m->discarded += s->stats.events_discarded;
		if (s->stats.events_discarded)
			c[k++] = (struct stream_loss){proc_of(b, s->image, s->stats.first_ts),
			                              s->stats.last_ts, s->stats.events_discarded};
	}
	qsort(c, n, sizeof *c, by_proc_time);
	int64_t sum = 0;
	for (size_t i = 0; i < n && !b->oom; i++) {
		if (!i || c[i - 1].proc != c[i].proc) {
			sum = 0;
			if (!vgx_count(m, &b->counting, c[i].proc, "events_discarded", "discarded",
			               m->procs[c[i].proc].first_ts, (struct vgx_counter_value){0}))
				b->oom = true;
		}
		sum += (int64_t)c[i].lost;
		if (!vgx_count(m, &b->counting, c[i].proc, "events_discarded", "discarded", c[i].ts,
		               (struct vgx_counter_value){.i = sum}))
			b->oom = true;
	}
	free(c);
}

struct vgx_model *vgx_build(struct vgt_trace *t, const char *const *paths, size_t npaths)
{
	struct build b = {0};
	if (!(b.m = calloc(1, sizeof *b.m)) || !(b.names = vgt_names_new())) {
		free(b.m);
		return NULL;
	}
	b.fields = vgt_fields_new(t, field_names, NF);
	struct vgt_source *src = vgt_source_of(t);
	b.m->first = vgt_source_first_ts(src);
	for (const struct vgt_event *ev; !b.oom && (ev = vgt_source_next(src));) {
		if (!b.m->events)
			b.m->first = ev->ts;
		b.m->events++;
		b.m->last = ev->ts;
		feed(&b, ev);
	}
	vgt_source_close(src);
	vgt_fields_free(b.fields);
	/* still open at the end of the trace: they end at its last event */
	for (size_t i = 0; i < b.m->nitems; i++) {
		struct vgx_item *it = &b.m->items[i];
		if (it->open && b.m->last > it->ts)
			it->end = b.m->last;
	}
	nest(b.m);
	discarded(&b, t);
	add_flows(&b, paths, npaths);
	b.m->damage = vgt_damage_total(t);
	for (size_t i = 0; i < b.nqueues; i++)
		free(b.queues[i].v);
	free(b.queues);
	vgx_map_free(&b.procs);
	vgx_map_free(&b.threads);
	vgx_map_free(&b.open);
	vgx_map_free(&b.states);
	vgx_map_free(&b.lives);
	vgx_map_free(&b.net_items);
	vgx_counting_free(&b.counting);
	vgt_names_free(b.names);
	if (b.oom) {
		vgx_free(b.m);
		return NULL;
	}
	return b.m;
}

void vgx_free(struct vgx_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nthreads; i++)
		free(m->threads[i].name);
	for (size_t i = 0; i < m->nitems; i++) {
		free(m->items[i].name);
		json_decref(m->items[i].args);
		free(m->items[i].flows_out);
		free(m->items[i].flows_in);
	}
	free(m->threads);
	free(m->items);
	free(m->procs);
	for (size_t i = 0; i < m->nctracks; i++) {
		free(m->ctracks[i].name);
		free(m->ctracks[i].key);
	}
	free(m->ctracks);
	free(m->counters);
	free(m->net_note);
	free(m);
}
