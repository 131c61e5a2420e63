/* Network, Message, NetRunning and NetWaiting: the interaction networks `vigil net split`
 * cuts a trace into (docs/net.md), as relations (docs/tquel.md "Derived relations").
 * The analysis is the same one (vgn_session_open, vgn_split_run with every input kind,
 * vgn_graph_build, vgn_stats_compute) over the trace the query opened; times are the
 * corrected ones (the reference host's clock: the trace's own on one host).
 *
 *   Network     interval [input, last event of the network): id (as net-N.json), input
 *               (its kind), what, host, program, last_program, servers, hosts, threads,
 *               messages, bytes, response (ns), thread (the input's).
 *   Message     interval [send, receive): network, sender, receiver, send_host,
 *               recv_host, send_program, recv_program, bytes, send_off, recv_off,
 *               cross_host (0/1). One per matched (send, receive) pair of the network.
 *   NetRunning  interval between two consecutive events of a thread in a network, the
 *   NetWaiting  thread running, or waiting (blocked in a receive of a message from
 *               another thread: the report's rule): network, thread, host, program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived/derived.h"
#include "derived/net_internal.h"
#include "net/net.h"
#include "trace/source.h"

static const char *const names[] = {"Network", "Message", "NetRunning", "NetWaiting", NULL};

bool vgd_net_has_events(const struct vgt_trace *t)
{
	for (size_t i = 0; i < vgt_class_count(t); i++)
		if (!strncmp(vgt_class_at(t, i)->name, "vg.net.", 7))
			return true;
	return false;
}

static struct vgq_ref thread_ref(struct rels *r, uint32_t thread)
{
	const struct vgn_thread *th = &r->s->threads[thread];
	const struct vgn_proc *pr = &r->s->procs[th->proc];
	uint32_t image =
	    vgq_derived_process_image(r->c, r->s->hosts[pr->host].name, pr->pid, pr->gen);
	return (struct vgq_ref){th->tid, th->gen, image,
	                        th->name && *th->name ? vgq_derived_intern(r->c, th->name) : NULL};
}

void vgd_net_schema(struct rels *r)
{
	struct vgq_derived_ctx *c = r->c;
	r->net = vgq_derived_new(c, "Network", VGQ_REL_INTERVAL);
	static const char *const net_uints[] = {"id", "hosts", "threads", "messages", "bytes"};
	vgq_derived_attr(c, r->net, "id", VGQ_UINT, NULL);
	vgq_derived_attr(c, r->net, "input", VGQ_STRING, NULL);
	vgq_derived_attr(c, r->net, "what", VGQ_STRING, NULL);
	vgq_derived_attr(c, r->net, "host", VGQ_STRING, NULL);
	vgq_derived_attr(c, r->net, "program", VGQ_STRING, NULL);
	vgq_derived_attr(c, r->net, "last_program", VGQ_STRING, NULL);
	vgq_derived_attr(c, r->net, "servers", VGQ_STRING, NULL);
	for (size_t i = 1; i < sizeof net_uints / sizeof *net_uints; i++)
		vgq_derived_attr(c, r->net, net_uints[i], VGQ_UINT, NULL);
	vgq_derived_attr(c, r->net, "response", VGQ_INT, NULL);
	vgq_derived_attr(c, r->net, "thread", VGQ_ENTITY, "OSThread");

	r->msg = vgq_derived_new(c, "Message", VGQ_REL_INTERVAL);
	vgq_derived_attr(c, r->msg, "network", VGQ_UINT, NULL);
	vgq_derived_attr(c, r->msg, "sender", VGQ_ENTITY, "OSThread");
	vgq_derived_attr(c, r->msg, "receiver", VGQ_ENTITY, "OSThread");
	static const char *const msg_strings[] = {"send_host", "recv_host", "send_program",
	                                          "recv_program"};
	for (size_t i = 0; i < 4; i++)
		vgq_derived_attr(c, r->msg, msg_strings[i], VGQ_STRING, NULL);
	static const char *const msg_uints[] = {"bytes", "send_off", "recv_off"};
	for (size_t i = 0; i < 3; i++)
		vgq_derived_attr(c, r->msg, msg_uints[i], VGQ_UINT, NULL);
	vgq_derived_attr(c, r->msg, "cross_host", VGQ_INT, NULL);

	r->run = vgq_derived_new(c, "NetRunning", VGQ_REL_INTERVAL);
	r->wait = vgq_derived_new(c, "NetWaiting", VGQ_REL_INTERVAL);
	struct vgq_relation *both[] = {r->run, r->wait};
	for (size_t i = 0; i < 2; i++) {
		vgq_derived_attr(c, both[i], "network", VGQ_UINT, NULL);
		vgq_derived_attr(c, both[i], "thread", VGQ_ENTITY, "OSThread");
		vgq_derived_attr(c, both[i], "host", VGQ_STRING, NULL);
		vgq_derived_attr(c, both[i], "program", VGQ_STRING, NULL);
	}
}

/* The last program of "a > b > c". */
static const char *last_of(struct vgq_derived_ctx *c, const char *servers)
{
	const char *p = strrchr(servers, '>');
	return vgq_derived_intern(c, p && p[1] == ' ' ? p + 2 : servers);
}

void vgd_net_add_network(struct rels *r, const struct vgn_split *sp, size_t n,
                         const struct vgn_graph *g, const struct vgn_stats *st)
{
	struct vgq_derived_ctx *c = r->c;
	const struct vgn_event *in = &r->s->events[sp->inputs[n]];
	const struct vgn_thread *th = &r->s->threads[in->thread];
	struct vgq_relation *rel = r->net;
	size_t t = vgq_derived_append(rel, st->start, st->end);
	rel->cols[0].u[t] = n + 1;
	rel->cols[1].s[t] = vgq_derived_intern(c, vgn_input_kind(r->s, sp->inputs[n]));
	rel->cols[2].s[t] = vgq_derived_intern(c, in->text ? in->text : "");
	rel->cols[3].s[t] = vgq_derived_intern(c, r->s->hosts[r->s->procs[th->proc].host].name);
	rel->cols[4].s[t] = vgq_derived_intern(c, in->program ? in->program : "");
	rel->cols[5].s[t] = last_of(c, st->servers);
	rel->cols[6].s[t] = vgq_derived_intern(c, st->servers);
	rel->cols[7].u[t] = st->machines;
	rel->cols[8].u[t] = g->nthreads;
	rel->cols[9].u[t] = st->messages;
	rel->cols[10].u[t] = st->bytes;
	rel->cols[11].i[t] = st->response;
	rel->cols[12].r[t] = thread_ref(r, in->thread);
}

/* The set's thread of each graph thread: vertex v is the event sp->events[first + v]. */
uint32_t *vgd_net_set_threads(const struct vgn_set *s, const struct vgn_split *sp, size_t n,
                              const struct vgn_graph *g)
{
	uint32_t *map = calloc(g->nthreads + 1, sizeof *map);
	if (!map)
		return NULL;
	for (size_t v = 0; v < g->nvertices; v++)
		map[g->vertices[v].thread] = s->events[sp->events[sp->first[n] + v]].thread;
	return map;
}

/* Tuple t of Message: message edge x of network n (thr: the set's thread of each graph
 * thread). The stored build and the live one (below) both write it here. */
void vgd_net_fill_message(struct rels *r, struct vgq_relation *m, size_t t, size_t n,
                          const struct vgn_graph *g, const struct vgn_gedge *x, const uint32_t *thr)
{
	struct vgq_derived_ctx *c = r->c;
	const struct vgn_gvertex *a = &g->vertices[x->from], *b = &g->vertices[x->to];
	const struct vgn_gthread *ta = &g->threads[a->thread], *tb = &g->threads[b->thread];
	m->cols[0].u[t] = n + 1;
	m->cols[1].r[t] = thread_ref(r, thr[a->thread]);
	m->cols[2].r[t] = thread_ref(r, thr[b->thread]);
	m->cols[3].s[t] = vgq_derived_intern(c, ta->host);
	m->cols[4].s[t] = vgq_derived_intern(c, tb->host);
	m->cols[5].s[t] = vgq_derived_intern(c, a->program ? a->program : ta->program);
	m->cols[6].s[t] = vgq_derived_intern(c, b->program ? b->program : tb->program);
	m->cols[7].u[t] = x->bytes;
	m->cols[8].u[t] = x->send_off;
	m->cols[9].u[t] = x->recv_off;
	m->cols[10].i[t] = x->cross_host;
}

/* The host and program of set event ev, as a graph vertex of it has them. */
static const char *event_host(struct rels *r, uint32_t ev)
{
	const struct vgn_set *s = r->s;
	const char *h = s->hosts[s->procs[s->threads[s->events[ev].thread].proc].host].name;
	return vgq_derived_intern(r->c, h);
}

size_t vgd_net_message_of_pair(struct rels *r, struct vgq_relation *m, size_t n,
                               const struct vgn_msg *x)
{
	const struct vgn_set *s = r->s;
	const struct vgn_event *a = &s->events[x->send], *b = &s->events[x->recv];
	size_t t = vgq_derived_append(m, a->cts, b->cts > a->cts ? b->cts : a->cts);
	m->cols[0].u[t] = n + 1;
	m->cols[1].r[t] = thread_ref(r, a->thread);
	m->cols[2].r[t] = thread_ref(r, b->thread);
	m->cols[3].s[t] = event_host(r, x->send);
	m->cols[4].s[t] = event_host(r, x->recv);
	m->cols[5].s[t] = vgq_derived_intern(r->c, a->program);
	m->cols[6].s[t] = vgq_derived_intern(r->c, b->program);
	m->cols[7].u[t] = x->bytes;
	m->cols[8].u[t] = a->off + x->send_at;
	m->cols[9].u[t] = b->off + x->recv_at;
	m->cols[10].i[t] = vgn_event_host(s, x->send) != vgn_event_host(s, x->recv);
	return t;
}

size_t vgd_net_run_of_events(struct rels *r, struct vgq_relation *rel, size_t n, uint32_t a,
                             uint32_t b)
{
	const struct vgn_event *e = &r->s->events[b];
	size_t t = vgq_derived_append(rel, r->s->events[a].cts, e->cts);
	rel->cols[0].u[t] = n + 1;
	rel->cols[1].r[t] = thread_ref(r, e->thread);
	rel->cols[2].s[t] = event_host(r, b);
	rel->cols[3].s[t] = vgq_derived_intern(r->c, e->program);
	return t;
}

size_t vgd_net_append_message(struct vgq_relation *m, const struct vgn_graph *g,
                              const struct vgn_gedge *x)
{
	const struct vgn_gvertex *a = &g->vertices[x->from], *b = &g->vertices[x->to];
	return vgq_derived_append(m, a->ts, b->ts > a->ts ? b->ts : a->ts);
}

bool *vgd_net_waited(const struct vgn_graph *g)
{
	bool *waited = calloc(g->nvertices + 1, sizeof *waited);
	for (size_t e = 0; waited && e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind == VGN_E_MESSAGE &&
		    g->vertices[x->from].thread != g->vertices[x->to].thread)
			waited[x->to] = true;
	}
	return waited;
}

size_t vgd_net_fill_thread_edge(struct rels *r, struct vgq_relation *rel, size_t n,
                                const struct vgn_graph *g, const struct vgn_gedge *x,
                                const uint32_t *thr)
{
	const struct vgn_gvertex *a = &g->vertices[x->from], *b = &g->vertices[x->to];
	const struct vgn_gthread *th = &g->threads[b->thread];
	size_t t = vgq_derived_append(rel, a->ts, b->ts);
	rel->cols[0].u[t] = n + 1;
	rel->cols[1].r[t] = thread_ref(r, thr[b->thread]);
	rel->cols[2].s[t] = vgq_derived_intern(r->c, th->host);
	rel->cols[3].s[t] = vgq_derived_intern(r->c, b->program ? b->program : th->program);
	return t;
}

static void add_edges(struct rels *r, size_t n, const struct vgn_graph *g, const uint32_t *thr)
{
	bool *waited = vgd_net_waited(g);
	for (size_t e = 0; e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind == VGN_E_MESSAGE)
			vgd_net_fill_message(r, r->msg, vgd_net_append_message(r->msg, g, x), n, g,
			                     x, thr);
	}
	for (size_t e = 0; waited && e < g->nedges; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind == VGN_E_THREAD)
			vgd_net_fill_thread_edge(r, waited[x->to] ? r->wait : r->run, n, g, x, thr);
	}
	free(waited);
}

static int build(struct vgq_derived_ctx *c, char *err, size_t errsize)
{
	struct rels r = {.c = c};
	vgd_net_schema(&r);
	if (vgq_derived_schema_only(c))
		return 0;
	struct vgt_trace *t = vgq_derived_trace(c);
	const char *label = vgt_image_count(t) ? vgt_image_at(t, 0)->path : "trace";
	struct vgn_session ss = {.open_trace = t};
	int opened = vgn_session_open(&ss, &label, 1, NULL, NULL, err, errsize);
	r.s = ss.set;
	if (opened < 0) { /* no vg.net event at all: no network, not an error here */
		int rc = ss.traces_read && !ss.load.net_events ? 0 : -1;
		vgn_session_close(&ss);
		return rc;
	}
	struct vgn_split sp = {0};
	int rc = vgn_split_run(ss.set, VGN_IN_ALL, &sp);
	for (size_t n = 0; rc == 0 && n < sp.nnets; n++) {
		struct vgn_graph *g = vgn_graph_build(ss.set, &sp, n);
		uint32_t *thr = g ? vgd_net_set_threads(ss.set, &sp, n, g) : NULL;
		struct vgn_stats st;
		if (!thr || vgn_stats_compute(g, &st) < 0) {
			free(thr);
			vgn_graph_free(g);
			rc = -1;
			break;
		}
		vgd_net_add_network(&r, &sp, n, g, &st);
		add_edges(&r, n, g, thr);
		vgn_stats_free(&st);
		free(thr);
		vgn_graph_free(g);
	}
	if (rc < 0)
		snprintf(err, errsize, "out of memory");
	vgn_split_free(&sp);
	vgn_session_close(&ss);
	return rc;
}

const struct vgq_derived_provider vgd_net_provider = {.names = names,
                                                      .source = "vigil net split",
                                                      .live = &vgd_net_live,
                                                      .applies = vgd_net_has_events,
                                                      .build = build};
