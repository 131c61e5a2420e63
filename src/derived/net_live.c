/* Message followed live (vigil watch; docs/watch.md "Derived relations live"): the
 * structural events are loaded into a set as they are fed, and at each update the
 * analysis of vigil net split runs again over the trace so far (match, clocks, split,
 * one graph per network) and every message not yet given is appended.
 *
 * Why the tuples given stay right: a prefix of the trace in time order has every event
 * a message's send and receive depend on (a receive matches sends before it on its host;
 * the walk takes each thread's events in time order), and networks are numbered by the
 * events that began them in time order (src/net/number.c), so a network begun later
 * cannot renumber an earlier one. What a later event still changes (a network's end, its
 * response, its threads' running and waiting) is not in Message. Each update checks the
 * messages given before against the analysis of the longer trace: one that changed or
 * went is an error (one line), never a silent difference. Several hosts are refused:
 * their clocks are corrected from the whole trace's messages. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derived/net_internal.h"
#include "net/net.h"
#include "relations/columns.h"

static const char *const live_names[] = {"Message", NULL};

struct net_live {
	struct vgt_trace *t;
	struct vgq_derived_ctx *c;
	struct vgn_set *s;
	struct vgn_load_stats st;
	struct vgn_loader *l;
	struct vgq_relation *msg;     /* given to the update network; grows */
	struct vgq_relation *scratch; /* one tuple, to compare with a given one */
	struct vgn_tmap given;        /* (send, receive) event -> its tuple in msg */
	uint32_t *seen;               /* per tuple: the last update that found it */
	uint32_t update;
	size_t synced_events; /* the set's events at the last update */
	char *error;          /* failed, for good */
};

static void *live_start(struct vgt_trace *t, struct vgq_pool *pool)
{
	struct net_live *n = vgb_xcalloc(1, sizeof *n);
	n->t = t;
	n->c = vgq_derived_ctx_live(t, pool);
	n->s = vgn_set_new();
	n->l = vgn_loader_new(n->s, t, "live", &n->st);
	vgn_tmap_init(&n->given);
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
	vgn_set_free(n->s);
	vgq_relation_free(n->msg);
	vgq_relation_free(n->scratch);
	vgq_derived_ctx_free(n->c);
	vgn_tmap_free(&n->given);
	free(n->seen);
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

/* Do tuple i of a and tuple j of b hold the same message? */
static bool same_tuple(const struct vgq_relation *a, size_t i, const struct vgq_relation *b,
                       size_t j)
{
	if (a->from[i] != b->from[j] || a->to[i] != b->to[j])
		return false;
	for (size_t k = 0; k < a->nattrs; k++) {
		const union vgq_column *x = &a->cols[k], *y = &b->cols[k];
		switch (a->attrs[k].type) {
		case VGQ_ENTITY:
			if (x->r[i].id != y->r[j].id || x->r[i].gen != y->r[j].gen ||
			    x->r[i].image != y->r[j].image || x->r[i].name != y->r[j].name)
				return false;
			break;
		case VGQ_STRING:
			if (x->s[i] != y->s[j]) /* one pool: equal texts are one pointer */
				return false;
			break;
		default:
			if (x->u[i] != y->u[j])
				return false;
			break;
		}
	}
	return true;
}

/* The messages of network `net`: appended if new, else checked against what was given. */
static void network_messages(struct net_live *n, struct rels *r, const struct vgn_split *sp,
                             size_t net, const struct vgn_graph *g, const uint32_t *thr)
{
	for (size_t e = 0; e < g->nedges && !n->error; e++) {
		const struct vgn_gedge *x = &g->edges[e];
		if (x->kind != VGN_E_MESSAGE)
			continue;
		uint32_t snd = sp->events[sp->first[net] + x->from];
		uint32_t rcv = sp->events[sp->first[net] + x->to];
		uint32_t t = vgn_tmap_get(&n->given, snd, rcv, 0);
		if (t == VGN_NONE) {
			size_t k = vgd_net_append_message(n->msg, g, x);
			vgd_net_fill_message(r, n->msg, k, net, g, x, thr);
			vgn_tmap_put(&n->given, snd, rcv, 0, (uint32_t)k);
			n->seen = vgb_xrealloc(n->seen, n->msg->ntuples, sizeof *n->seen);
			n->seen[k] = n->update;
			continue;
		}
		n->scratch->ntuples = 0;
		size_t k = vgd_net_append_message(n->scratch, g, x);
		vgd_net_fill_message(r, n->scratch, k, net, g, x, thr);
		if (!same_tuple(n->msg, t, n->scratch, k))
			fail(n,
			     "the message sent at %" PRId64 " ns (network %" PRIu64
			     " when given) is network %zu now: later events changed it "
			     "(docs/watch.md "
			     "\"Derived relations live\")",
			     n->msg->from[t], n->msg->cols[0].u[t], net + 1);
		n->seen[t] = n->update;
	}
}

/* One analysis of the trace so far, as vigil net split's (derived/net.c build). */
static void analyse(struct net_live *n)
{
	struct vgn_set *s = n->s;
	if (s->nhosts > 1) {
		fail(n,
		     "Message cannot be followed live over %zu hosts: their clocks are corrected "
		     "from the whole trace's messages (vigil query over the kept trace answers it)",
		     s->nhosts);
		return;
	}
	vgn_match(s, NULL);
	struct vgn_clock clock;
	vgn_clock_estimate(s, VGN_NONE, &clock);
	vgn_clock_apply(s, &clock);
	vgn_clock_free(&clock);
	struct vgn_split sp = {0};
	vgn_split_run(s, VGN_IN_ALL, &sp);
	struct rels r = {.c = n->c, .s = s};
	n->update++;
	for (size_t net = 0; net < sp.nnets && !n->error; net++) {
		struct vgn_graph *g = vgn_graph_build(s, &sp, net);
		uint32_t *thr = g ? vgd_net_set_threads(s, &sp, net, g) : NULL;
		if (!thr)
			fail(n, "out of memory following Message");
		else
			network_messages(n, &r, &sp, net, g, thr);
		free(thr);
		vgn_graph_free(g);
	}
	for (size_t t = 0; t < n->msg->ntuples && !n->error; t++)
		if (n->seen[t] != n->update)
			fail(n,
			     "the message sent at %" PRId64 " ns (network %" PRIu64
			     ") is in no network now: later events changed it (docs/watch.md "
			     "\"Derived relations live\")",
			     n->msg->from[t], n->msg->cols[0].u[t]);
	vgn_split_free(&sp);
}

static struct vgq_relation *live_sync(void *state, const char *name, bool final, char *err,
                                      size_t errsize)
{
	struct net_live *n = state;
	(void)name; /* Message only */
	if (!n->msg && !n->error) {
		if (!vgd_net_has_events(n->t))
			return NULL; /* no vg.net event declared yet */
		struct rels r = {.c = n->c};
		vgd_net_schema(&r);
		n->msg = vgq_derived_ctx_take(n->c, "Message");
		vgd_net_schema(&r);
		n->scratch = vgq_derived_ctx_take(n->c, "Message");
	}
	if (!n->error && n->s->nevents != n->synced_events && n->st.net_events) {
		n->synced_events = n->s->nevents;
		analyse(n);
	}
	(void) final; /* every update analyses all it has: the last one the whole trace */
	if (n->error) {
		snprintf(err, errsize, "%s", n->error);
		return NULL;
	}
	return n->msg;
}

const struct vgq_derived_live vgd_net_live = {.names = live_names,
                                              .start = live_start,
                                              .feed = live_feed,
                                              .sync = live_sync,
                                              .free = live_free};
