/* The networks followed live (vigil watch; docs/watch.md "Derived relations live"): the
 * structural events are loaded into a set as they are fed; at each update the analysis
 * of vigil net split runs over the trace so far (match, clocks, split), and then only
 * what changed is looked at, event by event, without building a graph: each event's
 * state (its network as a vertex, the event its thread edge comes from, whether it
 * received a message from another thread of its network, its thread's name, its matched
 * sends) is kept, and the tuples of the events that are new or whose state changed
 * (Message, NetRunning, NetWaiting: a graph's edges, made as vgn_graph_build makes them)
 * are appended. Network is given at the end, from graphs.
 *
 * Why the tuples given stay right: a prefix of the trace in time order has every event
 * a message's send and receive, or a thread's two consecutive events, depend on (a
 * receive matches sends before it on its host; the walk takes each thread's events in
 * time order), and networks are numbered by the events that began them in time order
 * (src/net/number.c), so a network begun later cannot renumber an earlier one. What a
 * later event still changes (a network's end, its response, its counts) is in Network
 * only. A tuple is a function of its two events' states, so one given stays right as
 * long as neither state changes: an event with a tuple given whose state changed is an
 * error (one line), never a silent difference. Several hosts are refused: their clocks
 * are corrected from the whole trace's messages. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "derived/net_internal.h"
#include "net/net.h"
#include "relations/columns.h"

/* Followed at each update; Network is given at the end. */
enum { MSG, RUN, WAIT, NREL };
static const char *const rel_names[NREL] = {"Message", "NetRunning", "NetWaiting"};
static const char *const live_names[] = {"Message", "NetRunning", "NetWaiting", "Network", NULL};

/* An event as the tuples see it (at the last analysis). */
struct ev_state {
	uint32_t net;   /* its network if it is a vertex of one, else VGN_NONE */
	uint32_t prev;  /* the vertex its thread edge comes from, or VGN_NONE */
	uint64_t print; /* its thread's name; its matched sends */
	bool waited;    /* received a message from another thread of its network */
};

struct net_live {
	struct vgt_trace *t;
	struct vgq_derived_ctx *c;
	struct vgn_set *s;
	struct vgn_load_stats st;
	struct vgn_loader *l;
	struct vgq_relation *rel[NREL]; /* given to the update network; grow */
	struct vgq_relation *network;   /* empty until the end */
	bool network_done;
	struct vgn_split sp;    /* the last analysis */
	struct ev_state *state; /* per event of the last analysis */
	bool *given;            /* per event: a tuple of it was given */
	size_t nstate, cap;     /* events of the last analysis, and room */
	size_t synced_events;   /* the set's events at the last analysis */
	char *error;            /* failed, for good */
};

static void *live_start(struct vgt_trace *t, struct vgq_pool *pool)
{
	struct net_live *n = vgb_xcalloc(1, sizeof *n);
	n->t = t;
	n->c = vgq_derived_ctx_live(t, pool);
	n->s = vgn_set_new();
	n->l = vgn_loader_new(n->s, t, "live", &n->st);
	return n;
}

static void live_feed(void *state, const struct vgt_event *ev)
{
	struct net_live *n = state;
	if (!n->error && !strncmp(ev->type->name, "vg.", 3))
		vgn_loader_event(n->l, ev);
}

static void live_free(void *state)
{
	struct net_live *n = state;
	if (!n)
		return;
	vgn_loader_free(n->l);
	vgn_split_free(&n->sp);
	vgn_set_free(n->s);
	for (int k = 0; k < NREL; k++)
		vgq_relation_free(n->rel[k]);
	vgq_relation_free(n->network);
	vgq_derived_ctx_free(n->c);
	free(n->state);
	free(n->given);
	free(n->error);
	free(n);
}

static void fail(struct net_live *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct net_live *n, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!n->error)
		n->error = vgb_xstrdup(line);
}

static uint64_t mix2(uint64_t h, uint64_t v)
{
	return vgq_mix(h ^ vgq_mix(v + 0x9e3779b97f4a7c15ull));
}

/* Is ev a vertex of a graph when in a network (split.c's `structural`)? Connections and
 * closes are not, but for the accepts of forking servers and clients' connects. */
static bool structural(const struct vgn_set *s, const struct vgn_split *sp, uint32_t ev)
{
	int k = s->events[ev].kind;
	return (k != VGN_CONN && k != VGN_CLOSE) || sp->conn_vertex[ev];
}

/* Each event's state in this analysis (now[ev]); false (failed) if a thread's events are
 * not in time order in the set (the split orders them by time: the thread edges below
 * follow the set's order). */
static bool states_now(struct net_live *n, struct ev_state *now)
{
	const struct vgn_set *s = n->s;
	const struct vgn_split *sp = &n->sp;
	uint32_t *last = vgb_xcalloc(s->nthreads + 1, sizeof *last);
	for (size_t t = 0; t < s->nthreads; t++)
		last[t] = VGN_NONE;
	bool ok = true;
	for (uint32_t ev = 0; ev < s->nevents; ev++) {
		const struct vgn_event *e = &s->events[ev];
		now[ev] = (struct ev_state){VGN_NONE, VGN_NONE,
		                            mix2(0, (uintptr_t)s->threads[e->thread].name), false};
		if (!structural(s, sp, ev))
			continue;
		uint32_t p = last[e->thread], net = sp->net_of[ev];
		if (p != VGN_NONE && s->events[p].cts > e->cts && ok) {
			fail(n,
			     "a thread's events at %" PRId64 " and %" PRId64 " ns were read out of "
			     "time order: its runs cannot be followed live",
			     s->events[p].cts, e->cts);
			ok = false;
		}
		last[e->thread] = ev;
		now[ev].net = net;
		if (net != VGN_NONE && p != VGN_NONE && sp->net_of[p] == net)
			now[ev].prev = p;
	}
	free(last);
	/* a receive's matched sends (in any order), and whether one came from another thread
	 * of its network (then its thread edge is NetWaiting) */
	for (size_t i = 0; i < s->nmsgs; i++) {
		const struct vgn_msg *x = &s->msgs[i];
		now[x->recv].print += mix2(mix2(mix2(x->send, x->bytes), x->send_at), x->recv_at);
	}
	for (size_t i = 0; i < s->nmsgs; i++) {
		const struct vgn_msg *x = &s->msgs[i];
		uint32_t net = now[x->recv].net;
		if (net != VGN_NONE && now[x->send].net == net &&
		    s->events[x->send].thread != s->events[x->recv].thread)
			now[x->recv].waited = true;
	}
	return ok;
}

/* One analysis of the trace so far, as vigil net split's (derived/net.c build); then the
 * tuples of the events that are new or changed, each given once. */
static void analyse(struct net_live *n)
{
	struct vgn_set *s = n->s;
	if (s->nhosts > 1) {
		fail(n,
		     "the networks cannot be followed live over %zu hosts: their clocks are "
		     "corrected from the whole trace's messages (vigil query over the kept trace "
		     "answers it)",
		     s->nhosts);
		return;
	}
	vgn_match(s, NULL);
	struct vgn_clock clock;
	vgn_clock_estimate(s, VGN_NONE, &clock);
	vgn_clock_apply(s, &clock);
	vgn_clock_free(&clock);
	vgn_split_free(&n->sp);
	vgn_split_run(s, VGN_IN_ALL, &n->sp);
	size_t ne = s->nevents;
	struct ev_state *now = vgb_xcalloc(ne + 1, sizeof *now);
	if (!states_now(n, now)) {
		free(now);
		return;
	}
	if (ne > n->cap) {
		n->cap = ne * 2;
		n->given = vgb_xrealloc(n->given, n->cap, sizeof *n->given);
	}
	memset(n->given + n->nstate, 0, (ne - n->nstate) * sizeof *n->given);
	/* which events' tuples to give: new ones, and old ones whose state changed (an
	 * error if one of their tuples was given) */
	bool *changed = vgb_xcalloc(ne + 1, sizeof *changed);
	for (size_t ev = 0; ev < ne && !n->error; ev++) {
		const struct ev_state *a = &now[ev], *b = ev < n->nstate ? &n->state[ev] : NULL;
		changed[ev] = !b || a->net != b->net || a->prev != b->prev ||
		              a->print != b->print || a->waited != b->waited;
		if (changed[ev] && n->given[ev])
			fail(n,
			     "the event at %" PRId64 " ns (a vertex of network %" PRIu32
			     " when its "
			     "tuples were given) is %s now: later events changed it (docs/watch.md "
			     "\"Derived relations live\")",
			     s->events[ev].cts, b->net + 1,
			     a->net == VGN_NONE ? "in no network" : "another vertex");
	}
	struct rels r = {.c = n->c, .s = s};
	for (uint32_t ev = 0; ev < ne && !n->error; ev++) {
		const struct ev_state *a = &now[ev];
		if (!changed[ev] || a->prev == VGN_NONE)
			continue;
		vgd_net_run_of_events(&r, n->rel[a->waited ? WAIT : RUN], a->net, a->prev, ev);
		n->given[ev] = n->given[a->prev] = true;
	}
	for (size_t i = 0; i < s->nmsgs && !n->error; i++) {
		const struct vgn_msg *x = &s->msgs[i];
		uint32_t net = now[x->recv].net;
		if (net == VGN_NONE || now[x->send].net != net ||
		    !(changed[x->send] || changed[x->recv]))
			continue;
		vgd_net_message_of_pair(&r, n->rel[MSG], net, x);
		n->given[x->send] = n->given[x->recv] = true;
	}
	free(changed);
	free(n->state);
	n->state = now;
	n->nstate = ne;
}

/* Network's tuples, once the trace has ended: a network's attributes (its last event,
 * response, counts) are final only when nothing can join it any more. */
static void networks_at_end(struct net_live *n)
{
	struct rels r = {.c = n->c, .s = n->s, .net = n->network};
	const struct vgn_split *sp = &n->sp;
	for (size_t net = 0; net < sp->nnets && !n->error; net++) {
		struct vgn_graph *g = vgn_graph_build(n->s, sp, net);
		struct vgn_stats st;
		if (!g || vgn_stats_compute(g, &st) < 0) {
			vgn_graph_free(g);
			fail(n, "out of memory following the networks");
			return;
		}
		vgd_net_add_network(&r, sp, net, g, &st);
		vgn_stats_free(&st);
		vgn_graph_free(g);
	}
	n->network_done = true;
}

static struct vgq_relation *live_sync(void *state, const char *name, bool final, char *err,
                                      size_t errsize)
{
	struct net_live *n = state;
	if (!n->network && !n->error) {
		if (!vgd_net_has_events(n->t))
			return NULL; /* no vg.net event declared yet */
		struct rels r = {.c = n->c};
		vgd_net_schema(&r);
		for (int k = 0; k < NREL; k++)
			n->rel[k] = vgq_derived_ctx_take(n->c, rel_names[k]);
		n->network = vgq_derived_ctx_take(n->c, "Network");
	}
	/* every update analyses all it has (the last one the whole trace), once for all
	 * four relations */
	if (!n->error && n->s->nevents != n->synced_events && n->st.net_events) {
		n->synced_events = n->s->nevents;
		analyse(n);
	}
	if (!n->error && final && !n->network_done && !strcasecmp(name, "Network"))
		networks_at_end(n);
	if (n->error) {
		snprintf(err, errsize, "%s", n->error);
		return NULL;
	}
	if (!strcasecmp(name, "Network"))
		return n->network;
	for (int k = 0; k < NREL; k++)
		if (!strcasecmp(name, rel_names[k]))
			return n->rel[k];
	return NULL;
}

const struct vgq_derived_live vgd_net_live = {.names = live_names,
                                              .start = live_start,
                                              .feed = live_feed,
                                              .sync = live_sync,
                                              .free = live_free};
