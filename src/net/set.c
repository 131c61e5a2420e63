/* The event set: hosts, processes, threads, connections and structural events of all the
 * traces of one analysis, with the lookups that identify them across traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

struct index {
	struct vgn_tmap procs, threads, conns, conns_any;
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull;
	h ^= (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
	h ^= (c + 0x165667b19e3779f9ull) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

void vgn_tmap_init(struct vgn_tmap *m)
{
	m->n = 64;
	m->used = 0;
	m->slots = vgb_xcalloc(m->n, sizeof *m->slots);
}

void vgn_tmap_free(struct vgn_tmap *m)
{
	free(m->slots);
	m->slots = NULL;
}

uint32_t vgn_tmap_get(const struct vgn_tmap *m, uint64_t a, uint64_t b, uint64_t c)
{
	for (size_t k = mix(a, b, c) & (m->n - 1); m->slots[k].used; k = (k + 1) & (m->n - 1))
		if (m->slots[k].a == a && m->slots[k].b == b && m->slots[k].c == c)
			return m->slots[k].v;
	return VGN_NONE;
}

void vgn_tmap_put(struct vgn_tmap *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	if ((m->used + 1) * 2 > m->n) {
		struct vgn_tmap g = {vgb_xcalloc(m->n * 2, sizeof *m->slots), m->n * 2, 0};
		for (size_t i = 0; i < m->n; i++)
			if (m->slots[i].used)
				vgn_tmap_put(&g, m->slots[i].a, m->slots[i].b, m->slots[i].c,
				             m->slots[i].v);
		free(m->slots);
		*m = g;
	}
	size_t k = mix(a, b, c) & (m->n - 1);
	for (; m->slots[k].used; k = (k + 1) & (m->n - 1))
		if (m->slots[k].a == a && m->slots[k].b == b && m->slots[k].c == c) {
			m->slots[k].v = v;
			return;
		}
	m->slots[k] = (struct vgn_tkey){a, b, c, v, 1};
	m->used++;
}

static const char *const kind_names[VGN_KIND_COUNT] = {
    "input",        "conn",       "send",          "recv",         "close",
    "thread.begin", "thread.end", "process.begin", "process.exec", "process.end"};

const char *vgn_kind_name(enum vgn_kind k)
{
	return (unsigned)k < VGN_KIND_COUNT ? kind_names[k] : "?";
}

int vgn_kind_parse(const char *name)
{
	for (int k = 0; k < VGN_KIND_COUNT; k++)
		if (!strcmp(kind_names[k], name))
			return k;
	return -1;
}

struct vgn_set *vgn_set_new(void)
{
	struct vgn_set *s = vgb_xcalloc(1, sizeof *s);
	struct index *ix = vgb_xcalloc(1, sizeof *ix);
	vgn_tmap_init(&ix->procs);
	vgn_tmap_init(&ix->threads);
	vgn_tmap_init(&ix->conns);
	vgn_tmap_init(&ix->conns_any);
	s->index = ix;
	s->pool = vgb_intern_new();
	return s;
}

void vgn_set_free(struct vgn_set *s)
{
	if (!s)
		return;
	struct index *ix = s->index;
	vgn_tmap_free(&ix->procs);
	vgn_tmap_free(&ix->threads);
	vgn_tmap_free(&ix->conns);
	vgn_tmap_free(&ix->conns_any);
	free(ix);
	free(s->hosts);
	free(s->procs);
	free(s->threads);
	free(s->conns);
	free(s->events);
	free(s->states);
	free(s->msgs);
	free(s->nmatch);
	vgb_intern_free(s->pool);
	free(s);
}

const char *vgn_intern(struct vgn_set *s, const char *str)
{
	return vgb_intern_str(s->pool, str);
}

uint32_t vgn_host_get(struct vgn_set *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i].name, name))
			return (uint32_t)i;
	VGN_GROW(s->hosts, s->cap_hosts, s->nhosts + 1);
	s->hosts[s->nhosts].name = vgn_intern(s, name);
	return (uint32_t)s->nhosts++;
}

uint32_t vgn_proc_get(struct vgn_set *s, uint32_t host, int64_t pid, uint64_t gen)
{
	struct index *ix = s->index;
	uint32_t p = vgn_tmap_get(&ix->procs, host, (uint64_t)pid, gen);
	if (p != VGN_NONE)
		return p;
	VGN_GROW(s->procs, s->cap_procs, s->nprocs + 1);
	s->procs[s->nprocs] = (struct vgn_proc){host, pid, 0, gen, vgn_intern(s, ""), NULL, 0};
	vgn_tmap_put(&ix->procs, host, (uint64_t)pid, gen, (uint32_t)s->nprocs);
	return (uint32_t)s->nprocs++;
}

uint32_t vgn_thread_get(struct vgn_set *s, uint32_t proc, uint32_t tid, uint32_t gen)
{
	struct index *ix = s->index;
	uint32_t t = vgn_tmap_get(&ix->threads, proc, tid, gen);
	if (t != VGN_NONE)
		return t;
	VGN_GROW(s->threads, s->cap_threads, s->nthreads + 1);
	s->threads[s->nthreads] = (struct vgn_thread){proc, tid, gen, vgn_intern(s, ""), 0, 0};
	vgn_tmap_put(&ix->threads, proc, tid, gen, (uint32_t)s->nthreads);
	return (uint32_t)s->nthreads++;
}

uint32_t vgn_conn_add(struct vgn_set *s, const struct vgn_conn *c)
{
	struct index *ix = s->index;
	VGN_GROW(s->conns, s->cap_conns, s->nconns + 1);
	s->conns[s->nconns] = *c;
	vgn_tmap_put(&ix->conns, c->proc, c->exec, c->serial, (uint32_t)s->nconns);
	vgn_tmap_put(&ix->conns_any, c->proc, c->serial, 0, (uint32_t)s->nconns);
	return (uint32_t)s->nconns++;
}

uint32_t vgn_event_add(struct vgn_set *s, const struct vgn_event *e)
{
	VGN_GROW(s->events, s->cap_events, s->nevents + 1);
	struct vgn_event *d = &s->events[s->nevents];
	*d = *e;
	d->cts = e->ts;
	d->conn = VGN_NONE;
	if ((e->kind == VGN_SEND || e->kind == VGN_RECV || e->kind == VGN_CLOSE ||
	     e->kind == VGN_CONN) &&
	    e->serial) {
		struct index *ix = s->index;
		uint32_t proc = s->threads[e->thread].proc;
		/* The connection of this image, else the latest of that serial in the process
		 * (a runtime that keeps its serials across exec). */
		d->conn = vgn_tmap_get(&ix->conns, proc, e->exec, e->serial);
		if (d->conn == VGN_NONE)
			d->conn = vgn_tmap_get(&ix->conns_any, proc, e->serial, 0);
	}
	return (uint32_t)s->nevents++;
}

uint32_t vgn_event_proc(const struct vgn_set *s, uint32_t ev)
{
	return s->threads[s->events[ev].thread].proc;
}

uint32_t vgn_event_host(const struct vgn_set *s, uint32_t ev)
{
	return s->procs[vgn_event_proc(s, ev)].host;
}

const struct vgn_conn *vgn_event_conn(const struct vgn_set *s, uint32_t ev)
{
	uint32_t c = s->events[ev].conn;
	return c == VGN_NONE ? NULL : &s->conns[c];
}

/* ---- per-thread order ---- */

static const struct vgn_set *sort_set;
static int sort_corrected;

static int by_time(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct vgn_event *ex = &sort_set->events[x], *ey = &sort_set->events[y];
	int64_t tx = sort_corrected ? ex->cts : ex->ts, ty = sort_corrected ? ey->cts : ey->ts;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

void vgn_order_build(const struct vgn_set *s, struct vgn_order *o, int corrected)
{
	o->first = vgb_xcalloc(s->nthreads + 1, sizeof *o->first);
	o->order = vgb_xcalloc(s->nevents, sizeof *o->order);
	for (size_t i = 0; i < s->nevents; i++)
		o->first[s->events[i].thread + 1]++;
	for (size_t t = 0; t < s->nthreads; t++)
		o->first[t + 1] += o->first[t];
	uint32_t *fill = vgb_xcalloc(s->nthreads + 1, sizeof *fill);
	for (size_t i = 0; i < s->nevents; i++) {
		uint32_t t = s->events[i].thread;
		o->order[o->first[t] + fill[t]++] = (uint32_t)i;
	}
	free(fill);
	/* qsort has no context argument: one analysis at a time per process. */
	sort_set = s;
	sort_corrected = corrected;
	for (size_t t = 0; t < s->nthreads; t++)
		qsort(o->order + o->first[t], o->first[t + 1] - o->first[t], sizeof *o->order,
		      by_time);
}

void vgn_order_free(struct vgn_order *o)
{
	free(o->order);
	free(o->first);
	o->order = o->first = NULL;
}
