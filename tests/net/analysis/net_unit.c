/* Unit tests of the analysis side of interaction networks (src/net): matching, clock
 * correction and propagation on synthetic event sets with exact expectations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "net/net.h"

/* ---- building synthetic sets ---- */

static uint32_t thread(struct vgn_set *s, const char *host, int64_t pid, uint32_t tid,
                       const char *program)
{
	uint32_t h = vgn_host_get(s, host);
	uint32_t p = vgn_proc_get(s, h, pid, 1);
	s->procs[p].program = vgn_intern(s, program);
	return vgn_thread_get(s, p, tid, 0);
}

static uint64_t serial_next = 1;

static uint32_t conn(struct vgn_set *s, uint32_t th, const char *kind, const char *role,
                     const char *local, const char *remote)
{
	struct vgn_conn c = {s->threads[th].proc,
	                     0,
	                     serial_next++,
	                     3,
	                     vgn_intern(s, kind),
	                     vgn_intern(s, role),
	                     vgn_intern(s, local),
	                     vgn_intern(s, remote),
	                     0};
	vgn_conn_add(s, &c);
	return (uint32_t)c.serial;
}

static uint32_t ev(struct vgn_set *s, int kind, uint32_t th, int64_t ts, uint32_t serial,
                   uint64_t off, uint64_t len)
{
	struct vgn_event e = {.kind = (uint8_t)kind,
	                      .thread = th,
	                      .ts = ts,
	                      .serial = serial,
	                      .off = off,
	                      .len = len,
	                      .text = vgn_intern(s, ""),
	                      .program = s->procs[s->threads[th].proc].program,
	                      .trace = vgn_intern(s, "synthetic")};
	return vgn_event_add(s, &e);
}

#define US 1000LL
#define MS 1000000LL
#define T0 1700000000000000000LL

/* Three tiers on three hosts; `skew` is added to the back end host's clock. Each request:
 * the client reads stdin, asks the front, which asks the back; replies return. */
struct tiers {
	uint32_t client, front, back;
	uint32_t in0, c_req[4], f_req[4], f_sub[4], b_sub[4], b_rep[4], f_rep_in[4], f_rep[4],
	    c_rep[4];
};

static void three_tier(struct vgn_set *s, struct tiers *x, int requests, int64_t skew)
{
	x->client = thread(s, "hostc", 100, 100, "client");
	x->front = thread(s, "hostf", 200, 201, "front");
	x->back = thread(s, "hostb", 300, 302, "back");
	uint32_t in = conn(s, x->client, "stdin", "inherited", "pipe:1:1", "pipe:1:1");
	uint32_t cf = conn(s, x->client, "tcp", "connect", "10.0.0.1:40000", "10.0.0.2:80");
	uint32_t fc = conn(s, x->front, "tcp", "accept", "10.0.0.2:80", "10.0.0.1:40000");
	uint32_t fb = conn(s, x->front, "tcp", "connect", "10.0.0.2:41000", "10.0.0.3:90");
	uint32_t bf = conn(s, x->back, "tcp", "accept", "10.0.0.3:90", "10.0.0.2:41000");
	for (int r = 0; r < requests; r++) {
		int64_t t = T0 + r * 10 * MS;
		uint64_t o = (uint64_t)r;
		x->in0 = ev(s, VGN_RECV, x->client, t, in, o * 4, 4);
		x->c_req[r] = ev(s, VGN_SEND, x->client, t + 10 * US, cf, o * 10, 10);
		x->f_req[r] = ev(s, VGN_RECV, x->front, t + 110 * US, fc, o * 10, 10);
		x->f_sub[r] = ev(s, VGN_SEND, x->front, t + 150 * US, fb, o * 5, 5);
		x->b_sub[r] = ev(s, VGN_RECV, x->back, t + 250 * US + skew, bf, o * 5, 5);
		x->b_rep[r] = ev(s, VGN_SEND, x->back, t + 400 * US + skew, bf, o * 7, 7);
		x->f_rep_in[r] = ev(s, VGN_RECV, x->front, t + 520 * US, fb, o * 7, 7);
		x->f_rep[r] = ev(s, VGN_SEND, x->front, t + 560 * US, fc, o * 12, 12);
		x->c_rep[r] = ev(s, VGN_RECV, x->client, t + 700 * US, cf, o * 12, 12);
	}
}

static void split_all(struct vgn_set *s, const char *ref, struct vgn_clock *c, struct vgn_split *sp,
                      unsigned mask)
{
	assert_int_equal(vgn_match(s, NULL), 0);
	uint32_t r = VGN_NONE;
	for (size_t h = 0; ref && h < s->nhosts; h++)
		if (!strcmp(s->hosts[h].name, ref))
			r = (uint32_t)h;
	assert_int_equal(vgn_clock_estimate(s, r, c), 0);
	assert_int_equal(vgn_clock_apply(s, c), 0);
	assert_int_equal(vgn_split_run(s, mask, sp), 0);
}

/* ---- matching ---- */

static void matching_pairs_by_endpoints(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	struct tiers x;
	three_tier(s, &x, 2, 0);
	struct vgn_match_stats st;
	vgn_match(s, &st);
	assert_int_equal(st.pairs, 8); /* 4 messages per request */
	assert_int_equal(st.sends, 8);
	assert_int_equal(st.recvs, 10); /* 2 stdin reads, unmatched */
	assert_int_equal(st.matched_recvs, 8);
	assert_int_equal(st.cross_host_pairs, 8);
	for (size_t i = 0; i < s->nmsgs; i++)
		if (s->msgs[i].send == x.b_rep[1])
			assert_int_equal(s->msgs[i].recv, x.f_rep_in[1]);
	vgn_set_free(s);
}

static void matching_byte_ranges(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 1, 1, "a"), b = thread(s, "h", 2, 2, "b");
	uint32_t ca = conn(s, a, "unix", "connect", "unix:11", "unix:12");
	uint32_t cb = conn(s, b, "unix", "accept", "unix:12", "unix:11");
	/* one send of 100 read as 60 + 40; then two sends of 10 read at once */
	uint32_t s1 = ev(s, VGN_SEND, a, T0, ca, 0, 100);
	uint32_t r1 = ev(s, VGN_RECV, b, T0 + 1, cb, 0, 60);
	uint32_t r2 = ev(s, VGN_RECV, b, T0 + 2, cb, 60, 40);
	uint32_t s2 = ev(s, VGN_SEND, a, T0 + 3, ca, 100, 10);
	uint32_t s3 = ev(s, VGN_SEND, a, T0 + 4, ca, 110, 10);
	uint32_t r3 = ev(s, VGN_RECV, b, T0 + 5, cb, 100, 20);
	/* bytes past everything sent: unmatched, kept */
	uint32_t r4 = ev(s, VGN_RECV, b, T0 + 6, cb, 500, 5);
	struct vgn_match_stats st;
	vgn_match(s, &st);
	assert_int_equal(st.pairs, 4);
	assert_int_equal(s->nmatch[s1], 2);
	assert_int_equal(s->nmatch[r1], 1);
	assert_int_equal(s->nmatch[r2], 1);
	assert_int_equal(s->nmatch[s2], 1);
	assert_int_equal(s->nmatch[s3], 1);
	assert_int_equal(s->nmatch[r3], 2);
	assert_int_equal(s->nmatch[r4], 0);
	uint64_t bytes = 0;
	for (size_t i = 0; i < s->nmsgs; i++)
		bytes += s->msgs[i].bytes;
	assert_int_equal(bytes, 120);
	vgn_set_free(s);
}

static void matching_explicit_ids(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h1", 1, 1, "a"), b = thread(s, "h2", 2, 2, "b");
	uint32_t x = ev(s, VGN_SEND, a, T0, 0, 0, 8);
	s->events[x].msg = 0xabc;
	uint32_t y = ev(s, VGN_RECV, b, T0 + 5, 0, 0, 8);
	s->events[y].msg = 0xabc;
	uint32_t z = ev(s, VGN_RECV, b, T0 + 6, 0, 0, 8);
	s->events[z].msg = 0xdef;
	struct vgn_match_stats st;
	vgn_match(s, &st);
	assert_int_equal(st.pairs, 1);
	assert_true(s->msgs[0].explicit_id);
	assert_int_equal(s->msgs[0].send, x);
	assert_int_equal(s->msgs[0].recv, y);
	assert_int_equal(s->nmatch[z], 0);
	vgn_set_free(s);
}

/* ---- clocks ---- */

static void clock_recovers_offset(void **state)
{
	(void)state;
	const int64_t skew = 5 * MS + 123 * US;
	struct vgn_set *s = vgn_set_new();
	struct tiers x;
	three_tier(s, &x, 3, skew);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, "hostc", &c, &sp, VGN_IN_ALL);
	uint32_t hb = vgn_host_get(s, "hostb"), hf = vgn_host_get(s, "hostf");
	const struct vgn_clock_host *b = &c.hosts[hb], *f = &c.hosts[hf];
	assert_int_equal(c.hosts[vgn_host_get(s, "hostc")].status, VGN_CLOCK_REFERENCE);
	assert_int_equal(f->status, VGN_CLOCK_OK);
	assert_int_equal(b->status, VGN_CLOCK_OK);
	assert_int_equal(b->via, hf); /* back talks only to front */
	assert_true(b->lo <= (double)skew && (double)skew <= b->hi);
	assert_true(f->lo <= 0 && 0 <= f->hi);
	/* bounds: front->back transit 100 us, back->front 120 us, chained through front
	 * (client<->front 100 and 140 us): the width is the sum of the round trips */
	assert_true(b->hi - b->lo <= 460 * US + 1);
	/* exactly, from the transits: the front is within [-140 us, +100 us] of the client,
	 * estimated at the midpoint -20 us; the back within [skew - 120 us, skew + 100 us] of
	 * the front, midpoint skew - 10 us; chained: [skew - 260 us, skew + 200 us] and
	 * skew - 30 us (a bound as the estimate would be 170 us or more away) */
	assert_true(fabs(f->lo + 140 * US) < 1 && fabs(f->hi - 100 * US) < 1);
	assert_true(fabs(f->offset + 20 * US) < 1);
	assert_true(fabs(b->lo - (double)(skew - 260 * US)) < 1);
	assert_true(fabs(b->hi - (double)(skew + 200 * US)) < 1);
	assert_true(fabs(b->offset - (double)(skew - 30 * US)) < 1);
	for (size_t i = 0; i < s->nmsgs; i++)
		assert_true(s->events[s->msgs[i].recv].cts >= s->events[s->msgs[i].send].cts);
	/* round trip through JSON gives the same correction */
	json_t *j = vgn_clock_to_json(s, &c);
	struct vgn_clock c2;
	char err[256];
	assert_int_equal(vgn_clock_from_json(s, j, &c2, err, sizeof err), 0);
	assert_true(fabs(vgn_clock_correction(&c2, hb, T0) - vgn_clock_correction(&c, hb, T0)) < 1);
	json_decref(j);
	vgn_clock_free(&c2);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void clock_crossed_bounds(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "ha", 1, 1, "a"), b = thread(s, "hb", 2, 2, "b");
	uint32_t ab = conn(s, a, "tcp", "connect", "1.1.1.1:1", "2.2.2.2:2");
	uint32_t ba = conn(s, b, "tcp", "accept", "2.2.2.2:2", "1.1.1.1:1");
	/* a->b arrives 1 ms later by b's clock: b is at most 1 ms ahead; b->a arrives 1 ms
	 * earlier by a's clock than sent by b's: b is at least 1 ms ahead... and 3 ms */
	ev(s, VGN_SEND, a, T0, ab, 0, 4);
	ev(s, VGN_RECV, b, T0 + 1 * MS, ba, 0, 4);
	ev(s, VGN_SEND, b, T0 + 10 * MS, ba, 0, 4);
	ev(s, VGN_RECV, a, T0 + 7 * MS, ab, 0, 4);
	vgn_match(s, NULL);
	struct vgn_clock c;
	vgn_clock_estimate(s, vgn_host_get(s, "ha"), &c);
	const struct vgn_clock_host *h = &c.hosts[vgn_host_get(s, "hb")];
	assert_int_equal(h->status, VGN_CLOCK_CROSSED);
	assert_true(h->lo > h->hi);
	assert_true(fabs(h->lo - 3 * MS) < 1 && fabs(h->hi - 1 * MS) < 1);
	assert_non_null(strstr(h->why, "ha->hb"));
	assert_non_null(strstr(h->why, "hb->ha"));
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void clock_one_sided_and_unconnected(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "ha", 1, 1, "a"), b = thread(s, "hb", 2, 2, "b");
	thread(s, "hz", 3, 3, "z");
	uint32_t ab = conn(s, a, "tcp", "connect", "1.1.1.1:1", "2.2.2.2:2");
	uint32_t ba = conn(s, b, "tcp", "accept", "2.2.2.2:2", "1.1.1.1:1");
	ev(s, VGN_SEND, a, T0, ab, 0, 4);
	ev(s, VGN_RECV, b, T0 - 2 * MS, ba, 0, 4); /* b's clock is behind */
	vgn_match(s, NULL);
	struct vgn_clock c;
	vgn_clock_estimate(s, vgn_host_get(s, "ha"), &c);
	const struct vgn_clock_host *h = &c.hosts[vgn_host_get(s, "hb")];
	assert_int_equal(h->status, VGN_CLOCK_ONE_SIDED);
	assert_true(isinf(h->lo) && h->lo < 0);
	assert_true(fabs(h->hi + 2 * MS) < 1);
	assert_int_equal(c.hosts[vgn_host_get(s, "hz")].status, VGN_CLOCK_UNCONNECTED);
	assert_int_equal(vgn_clock_apply(s, &c), 0);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void clock_drift_fitted(void **state)
{
	(void)state;
	/* b's clock runs 200 ppm fast and starts 1 ms ahead; 50 request/replies over 1 s
	 * with 50 us transit: a constant offset cannot explain them */
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "ha", 1, 1, "a"), b = thread(s, "hb", 2, 2, "b");
	uint32_t ab = conn(s, a, "tcp", "connect", "1.1.1.1:1", "2.2.2.2:2");
	uint32_t ba = conn(s, b, "tcp", "accept", "2.2.2.2:2", "1.1.1.1:1");
	for (int i = 0; i < 50; i++) {
		int64_t t = i * 20 * MS;
		int64_t bt1 = t + 50 * US, bt2 = t + 60 * US;
		ev(s, VGN_SEND, a, T0 + t, ab, (uint64_t)i, 1);
		ev(s, VGN_RECV, b, T0 + bt1 + 1 * MS + (int64_t)(bt1 * 200e-6), ba, (uint64_t)i, 1);
		ev(s, VGN_SEND, b, T0 + bt2 + 1 * MS + (int64_t)(bt2 * 200e-6), ba, (uint64_t)i, 1);
		ev(s, VGN_RECV, a, T0 + t + 110 * US, ab, (uint64_t)i, 1);
	}
	vgn_match(s, NULL);
	struct vgn_clock c;
	vgn_clock_estimate(s, vgn_host_get(s, "ha"), &c);
	const struct vgn_clock_host *h = &c.hosts[vgn_host_get(s, "hb")];
	assert_int_equal(h->status, VGN_CLOCK_OK);
	assert_true(h->has_drift);
	assert_true(h->drift_lo <= 200e-6 && 200e-6 <= h->drift_hi);
	assert_true(fabs(h->drift - 200e-6) < 20e-6);
	assert_int_equal(vgn_clock_apply(s, &c), 0);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

/* ---- propagation ---- */

static void split_three_tier_networks(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	struct tiers x;
	three_tier(s, &x, 3, 7 * MS);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, "hostc", &c, &sp, VGN_IN_ALL);
	assert_int_equal(sp.nnets, 3);
	assert_int_equal(sp.forced, 0);
	for (int r = 0; r < 3; r++) {
		uint32_t n = sp.net_of[x.c_req[r]];
		assert_int_equal(n, (uint32_t)r);
		assert_int_equal(sp.net_of[x.b_rep[r]], n);
		assert_int_equal(sp.net_of[x.c_rep[r]], n);
		struct vgn_graph *g = vgn_graph_build(s, &sp, n);
		assert_int_equal(g->nthreads, 3);
		assert_int_equal(g->nvertices, 9);
		size_t msgs = 0, runs = 0, cross = 0;
		for (size_t e = 0; e < g->nedges; e++) {
			msgs += g->edges[e].kind == VGN_E_MESSAGE;
			cross += g->edges[e].cross_host;
			runs += g->edges[e].kind == VGN_E_THREAD;
		}
		assert_int_equal(msgs, 4);
		assert_int_equal(cross, 4);
		assert_int_equal(runs, 6); /* client 3, front 3, back 1... */
		assert_true(g->vertices[g->input].input);
		assert_int_equal(g->vertices[g->input].kind, VGN_RECV);
		struct vgn_stats st;
		vgn_stats_compute(g, &st);
		assert_int_equal(st.threads, 3);
		assert_int_equal(st.processes, 3);
		assert_int_equal(st.machines, 3);
		assert_int_equal(st.messages, 4);
		assert_int_equal(st.pairs, 2);
		assert_int_equal(st.bytes, 10 + 5 + 7 + 12);
		assert_int_equal(st.unmatched, 1); /* the stdin read */
		assert_string_equal(st.servers, "client > front > back");
		assert_int_equal(st.response, 700 * US);
		/* client: 10 us running, then waiting from its request to the reply */
		assert_int_equal(st.per_thread[0].running, 10 * US);
		assert_int_equal(st.per_thread[0].waiting, 690 * US);
		/* JSON round trip */
		json_t *j = vgn_graph_to_json(g);
		char err[256];
		struct vgn_graph *g2 = vgn_graph_from_json(j, "mem", err, sizeof err);
		assert_non_null(g2);
		assert_int_equal(g2->nedges, g->nedges);
		assert_int_equal(g2->nvertices, g->nvertices);
		assert_string_equal(g2->threads[2].program, "back");
		json_decref(j);
		vgn_graph_free(g2);
		vgn_stats_free(&st);
		vgn_graph_free(g);
	}
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_inputs_mask(void **state)
{
	(void)state;
	struct vgn_set *s = vgn_set_new();
	struct tiers x;
	three_tier(s, &x, 2, 0);
	struct vgn_clock c;
	struct vgn_split sp;
	/* stdin not an input: the client's request comes from nowhere, so the front's
	 * receive matches a send with no interaction: nothing */
	split_all(s, NULL, &c, &sp, VGN_IN_TTY | VGN_IN_ACCEPT);
	assert_int_equal(sp.nnets, 0);
	assert_int_equal(sp.outside, s->nevents);
	unsigned mask;
	char err[128];
	assert_int_equal(vgn_inputs_parse("tty,accept", &mask, err, sizeof err), 0);
	assert_int_equal(mask, VGN_IN_TTY | VGN_IN_ACCEPT);
	assert_int_equal(vgn_inputs_parse("tty,bogus", &mask, err, sizeof err), -1);
	assert_non_null(strstr(err, "bogus"));
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_accept_and_threads(void **state)
{
	(void)state;
	/* An unrecorded peer sends a request in two pieces to a server's main thread,
	 * which creates a worker (the only live thread: its creator); the worker sends
	 * to a recorded back end. A second request on another connection: a second
	 * network. */
	struct vgn_set *s = vgn_set_new();
	uint32_t m = thread(s, "h", 10, 10, "server");
	uint32_t back = thread(s, "h", 20, 20, "db");
	uint32_t c1 = conn(s, m, "tcp", "accept", "127.0.0.1:80", "127.0.0.1:5000");
	uint32_t c2 = conn(s, m, "tcp", "accept", "127.0.0.1:80", "127.0.0.1:5001");
	ev(s, VGN_THREAD_BEGIN, m, T0, 0, 0, 0);
	ev(s, VGN_THREAD_BEGIN, back, T0, 0, 0, 0);
	uint32_t r1 = ev(s, VGN_RECV, m, T0 + 10 * US, c1, 0, 10);
	uint32_t r1b = ev(s, VGN_RECV, m, T0 + 20 * US, c1, 10, 10);
	uint32_t w = thread(s, "h", 10, 11, "server");
	uint32_t wb = ev(s, VGN_THREAD_BEGIN, w, T0 + 30 * US, 0, 0, 0);
	uint32_t wc = conn(s, w, "unix", "connect", "unix:1", "unix:2");
	uint32_t bc = conn(s, back, "unix", "accept", "unix:2", "unix:1");
	uint32_t ws = ev(s, VGN_SEND, w, T0 + 40 * US, wc, 0, 3);
	uint32_t br = ev(s, VGN_RECV, back, T0 + 50 * US, bc, 0, 3);
	ev(s, VGN_THREAD_END, w, T0 + 60 * US, 0, 0, 0);
	uint32_t ans = ev(s, VGN_SEND, m, T0 + 70 * US, c1, 0, 4); /* unmatched: peer unrecorded */
	uint32_t r2 = ev(s, VGN_RECV, m, T0 + 1 * MS, c2, 0, 10);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL);
	assert_int_equal(sp.nnets, 2);
	assert_int_equal(sp.inputs[0], r1);
	assert_int_equal(sp.inputs[1], r2);
	assert_int_equal(sp.net_of[r1b], 0);
	assert_int_equal(sp.creator[w], m);
	assert_int_equal(sp.net_of[wb], 0);
	assert_int_equal(sp.net_of[ws], 0);
	assert_int_equal(sp.net_of[br], 0);
	assert_int_equal(sp.net_of[ans], 0);
	struct vgn_graph *g = vgn_graph_build(s, &sp, 0);
	assert_int_equal(g->nthreads, 3);
	size_t spawns = 0;
	for (size_t e = 0; e < g->nedges; e++)
		spawns += g->edges[e].kind == VGN_E_SPAWN;
	assert_int_equal(spawns, 1);
	vgn_graph_free(g);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_instrumented_iid(void **state)
{
	(void)state;
	/* vg_interaction_begin on one thread, work handed to a pool thread through a queue
	 * (vg_interaction_set): the pool thread's send carries the interaction id */
	struct vgn_set *s = vgn_set_new();
	uint32_t ui = thread(s, "h", 1, 1, "app"), pool = thread(s, "h", 1, 2, "app");
	ev(s, VGN_THREAD_BEGIN, ui, T0, 0, 0, 0);
	ev(s, VGN_THREAD_BEGIN, pool, T0 + 1, 0, 0, 0);
	uint32_t in = ev(s, VGN_INPUT, ui, T0 + 10 * US, 0, 0, 0);
	s->events[in].iid_hi = 0x1234;
	s->events[in].iid_lo = 0x5678;
	uint32_t snd = ev(s, VGN_SEND, pool, T0 + 20 * US, 0, 0, 5);
	s->events[snd].iid_hi = 0x1234;
	s->events[snd].iid_lo = 0x5678;
	s->events[snd].msg = 77;
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL);
	assert_int_equal(sp.nnets, 1);
	assert_int_equal(sp.net_of[snd], 0);
	struct vgn_graph *g = vgn_graph_build(s, &sp, 0);
	assert_string_equal(g->iid, "00000000000012340000000000005678");
	vgn_graph_free(g);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	/* without instrumented inputs: nothing */
	assert_int_equal(vgn_split_run(s, VGN_IN_ACCEPT, &sp), 0);
	assert_int_equal(sp.nnets, 0);
	vgn_split_free(&sp);
	vgn_set_free(s);
}

static void split_connect_inputs(void **state)
{
	(void)state;
	/* No stdin input: each client request after the previous reply starts an
	 * interaction; the front's calls to the back end stay in the one it serves. */
	struct vgn_set *s = vgn_set_new();
	struct tiers x;
	three_tier(s, &x, 3, 0);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_CONNECT | VGN_PER_EXCHANGE);
	assert_int_equal(sp.nnets, 3);
	for (uint32_t r = 0; r < 3; r++) {
		assert_int_equal(sp.inputs[r], x.c_req[r]);
		assert_int_equal(sp.net_of[x.f_sub[r]], r);
		assert_int_equal(sp.net_of[x.b_rep[r]], r);
		assert_int_equal(sp.net_of[x.c_rep[r]], r);
	}
	vgn_split_free(&sp);
	/* per connection (the default) and per process run: the three requests on the
	 * client's one connection are one input; the front's connection to the back end
	 * is its own (a server's call) and stays in it */
	for (int k = 0; k < 2; k++) {
		unsigned per = k ? VGN_PER_PROCESS : 0;
		assert_int_equal(vgn_split_run(s, VGN_IN_CONNECT | per, &sp), 0);
		assert_int_equal(sp.nnets, 1);
		assert_int_equal(sp.inputs[0], x.c_req[0]);
		for (uint32_t r = 0; r < 3; r++) {
			assert_int_equal(sp.net_of[x.c_req[r]], 0);
			assert_int_equal(sp.net_of[x.b_rep[r]], 0);
			assert_int_equal(sp.net_of[x.c_rep[r]], 0);
		}
		vgn_split_free(&sp);
	}
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_fork_joins_parent(void **state)
{
	(void)state;
	/* A shell reads a line (tty), forks a child that writes to a pipe the shell reads:
	 * the child is in the line's interaction (its parent's only thread made it), with a
	 * spawn edge from the shell. */
	struct vgn_set *s = vgn_set_new();
	uint32_t sh = thread(s, "h", 10, 10, "sh");
	uint32_t tty = conn(s, sh, "tty", "inherited", "tty:/dev/pts/1", "tty:/dev/pts/1");
	uint32_t pr = conn(s, sh, "pipe", "pipe", "pipe:1:9", "pipe:1:9");
	ev(s, VGN_THREAD_BEGIN, sh, T0, 0, 0, 0);
	uint32_t in = ev(s, VGN_RECV, sh, T0 + 10 * US, tty, 0, 3);
	uint32_t ch = thread(s, "h", 11, 11, "ls");
	s->procs[s->threads[ch].proc].ppid = 10;
	uint32_t cb = ev(s, VGN_PROC_BEGIN, ch, T0 + 20 * US, 0, 0, 0);
	uint32_t cw = conn(s, ch, "pipe", "inherited", "pipe:1:9", "pipe:1:9");
	uint32_t snd = ev(s, VGN_SEND, ch, T0 + 30 * US, cw, 0, 5);
	uint32_t rcv = ev(s, VGN_RECV, sh, T0 + 40 * US, pr, 0, 5);
	ev(s, VGN_PROC_END, ch, T0 + 50 * US, 0, 0, 0);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL);
	assert_int_equal(sp.nnets, 1);
	assert_int_equal(sp.inputs[0], in);
	assert_int_equal(sp.creator[ch], sh);
	assert_int_equal(sp.net_of[cb], 0);
	assert_int_equal(sp.net_of[snd], 0);
	assert_int_equal(sp.net_of[rcv], 0);
	struct vgn_graph *g = vgn_graph_build(s, &sp, 0);
	assert_int_equal(g->nthreads, 2);
	size_t spawns = 0, msgs = 0;
	for (size_t e = 0; e < g->nedges; e++) {
		spawns += g->edges[e].kind == VGN_E_SPAWN;
		msgs += g->edges[e].kind == VGN_E_MESSAGE;
	}
	assert_int_equal(spawns, 1);
	assert_int_equal(msgs, 1);
	vgn_graph_free(g);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_event_loop_replies(void **state)
{
	(void)state;
	/* One server thread reads two clients' requests, then answers both (an event
	 * loop, as redis): each reply in its request's interaction, the second reply in
	 * two pieces; then a push on the first connection after reading something else
	 * follows the thread's interaction. */
	struct vgn_set *s = vgn_set_new();
	uint32_t a = thread(s, "h", 1, 1, "ca"), b = thread(s, "h", 2, 2, "cb");
	uint32_t srv = thread(s, "h", 3, 3, "srv");
	uint32_t ac = conn(s, a, "tcp", "connect", "127.0.0.1:1001", "127.0.0.1:80");
	uint32_t bc = conn(s, b, "tcp", "connect", "127.0.0.1:1002", "127.0.0.1:80");
	uint32_t s1 = conn(s, srv, "tcp", "accept", "127.0.0.1:80", "127.0.0.1:1001");
	uint32_t s2 = conn(s, srv, "tcp", "accept", "127.0.0.1:80", "127.0.0.1:1002");
	uint32_t qa = ev(s, VGN_SEND, a, T0, ac, 0, 4);
	uint32_t qb = ev(s, VGN_SEND, b, T0 + 1 * US, bc, 0, 4);
	ev(s, VGN_RECV, srv, T0 + 2 * US, s1, 0, 4);
	ev(s, VGN_RECV, srv, T0 + 3 * US, s2, 0, 4);
	uint32_t ra = ev(s, VGN_SEND, srv, T0 + 4 * US, s1, 0, 6);
	uint32_t rb1 = ev(s, VGN_SEND, srv, T0 + 5 * US, s2, 0, 3);
	uint32_t rb2 = ev(s, VGN_SEND, srv, T0 + 6 * US, s2, 3, 3);
	uint32_t ga = ev(s, VGN_RECV, a, T0 + 7 * US, ac, 0, 6);
	uint32_t gb = ev(s, VGN_RECV, b, T0 + 8 * US, bc, 0, 6);
	/* the server reads b again, then pushes to a */
	uint32_t qb2 = ev(s, VGN_SEND, b, T0 + 10 * US, bc, 4, 4);
	ev(s, VGN_RECV, srv, T0 + 11 * US, s2, 4, 4);
	uint32_t push = ev(s, VGN_SEND, srv, T0 + 12 * US, s1, 6, 2);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL | VGN_PER_EXCHANGE);
	assert_int_equal(sp.nnets, 3);
	assert_int_equal(sp.inputs[0], qa);
	assert_int_equal(sp.inputs[1], qb);
	assert_int_equal(sp.inputs[2], qb2);
	assert_int_equal(sp.net_of[ra], 0);
	assert_int_equal(sp.net_of[rb1], 1);
	assert_int_equal(sp.net_of[rb2], 1);
	assert_int_equal(sp.net_of[ga], 0);
	assert_int_equal(sp.net_of[gb], 1);
	assert_int_equal(sp.net_of[push], 2);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_forking_server(void **state)
{
	(void)state;
	/* PostgreSQL on its Unix socket: psql connects (its end names the socket's path),
	 * the postmaster accepts (its end names psql's inode) and forks a backend that
	 * keeps the accepted connection (role accept, the same names). Both directions
	 * match; the network begins at psql's connect and holds the postmaster's accept,
	 * the backend's start, its replies and its exit. */
	struct vgn_set *s = vgn_set_new();
	uint32_t cl = thread(s, "h", 10, 10, "psql"), pm = thread(s, "h", 20, 20, "postgres");
	uint32_t cc = conn(s, cl, "unix", "connect", "unix:500", "unix:/run/.s.PGSQL.5432");
	uint32_t ce = ev(s, VGN_CONN, cl, T0, cc, 0, 0);
	uint32_t ac = conn(s, pm, "unix", "accept", "unix:501", "unix:500");
	uint32_t ae = ev(s, VGN_CONN, pm, T0 + 10 * US, ac, 0, 0);
	uint32_t q1 = ev(s, VGN_SEND, cl, T0 + 20 * US, cc, 0, 63);
	uint32_t be = thread(s, "h", 21, 21, "postgres");
	s->procs[s->threads[be].proc].ppid = 20;
	uint32_t bb = ev(s, VGN_PROC_BEGIN, be, T0 + 2 * MS, 0, 0, 0);
	uint32_t bc = conn(s, be, "unix", "accept", "unix:501", "unix:500");
	ev(s, VGN_CONN, be, T0 + 3 * MS, bc, 0, 0);
	uint32_t r1 = ev(s, VGN_RECV, be, T0 + 3 * MS, bc, 0, 63);
	uint32_t a1 = ev(s, VGN_SEND, be, T0 + 4 * MS, bc, 0, 400);
	uint32_t g1 = ev(s, VGN_RECV, cl, T0 + 4 * MS + 50 * US, cc, 0, 400);
	uint32_t q2 = ev(s, VGN_SEND, cl, T0 + 5 * MS, cc, 63, 14);
	ev(s, VGN_RECV, be, T0 + 5 * MS + 10 * US, bc, 63, 14);
	uint32_t a2 = ev(s, VGN_SEND, be, T0 + 6 * MS, bc, 400, 66);
	ev(s, VGN_RECV, cl, T0 + 6 * MS + 50 * US, cc, 400, 66);
	uint32_t bend = ev(s, VGN_PROC_END, be, T0 + 7 * MS, 0, 0, 0);
	uint32_t pend = ev(s, VGN_PROC_END, pm, T0 + 10 * MS, 0, 0, 0); /* alive at the fork */
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL);
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].kind == VGN_SEND || s->events[i].kind == VGN_RECV)
			assert_int_equal(s->nmatch[i], 1);
	assert_int_equal(sp.nnets, 1);
	assert_int_equal(sp.inputs[0], ce);
	assert_int_equal(sp.creator[be], pm);
	uint32_t in0[] = {ce, ae, q1, bb, r1, a1, g1, q2, a2, bend};
	for (size_t i = 0; i < sizeof in0 / sizeof *in0; i++)
		assert_int_equal(sp.net_of[in0[i]], 0);
	assert_true(sp.conn_vertex[ae] && sp.conn_vertex[ce]);
	assert_int_equal(sp.net_of[pend], VGN_NONE); /* the server's own end is not */
	struct vgn_graph *g = vgn_graph_build(s, &sp, 0);
	assert_int_equal(g->nthreads, 3);
	size_t spawns = 0;
	for (size_t e = 0; e < g->nedges; e++)
		if (g->edges[e].kind == VGN_E_SPAWN) {
			spawns++;
			assert_int_equal(g->vertices[g->edges[e].from].kind, VGN_CONN);
			assert_int_equal(g->vertices[g->edges[e].to].kind, VGN_PROC_BEGIN);
		}
	assert_int_equal(spawns, 1);
	vgn_graph_free(g);
	vgn_split_free(&sp);
	/* per exchange: two networks (start-up, query); the fork in the first */
	assert_int_equal(vgn_split_run(s, VGN_IN_ALL | VGN_PER_EXCHANGE, &sp), 0);
	assert_int_equal(sp.nnets, 2);
	assert_int_equal(sp.inputs[0], q1);
	assert_int_equal(sp.inputs[1], q2);
	assert_int_equal(sp.net_of[ae], 0);
	assert_int_equal(sp.net_of[bb], 0);
	assert_int_equal(sp.net_of[a2], 1);
	vgn_split_free(&sp);
	/* accept inputs only: psql's bytes are recorded, so none */
	assert_int_equal(vgn_split_run(s, VGN_IN_ACCEPT, &sp), 0);
	assert_int_equal(sp.nnets, 0);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

static void split_forking_server_alone(void **state)
{
	(void)state;
	/* The server recorded, its client not: the backend's receives are `accept` inputs,
	 * by default one per request (start-up, query), per connection one; the accept and
	 * the backend's start join the first either way. */
	struct vgn_set *s = vgn_set_new();
	uint32_t pm = thread(s, "h", 20, 20, "postgres");
	uint32_t ac = conn(s, pm, "tcp", "accept", "127.0.0.1:5432", "127.0.0.1:40000");
	uint32_t ae = ev(s, VGN_CONN, pm, T0, ac, 0, 0);
	uint32_t be = thread(s, "h", 21, 21, "postgres");
	s->procs[s->threads[be].proc].ppid = 20;
	uint32_t bb = ev(s, VGN_PROC_BEGIN, be, T0 + 1 * MS, 0, 0, 0);
	uint32_t bc = conn(s, be, "tcp", "accept", "127.0.0.1:5432", "127.0.0.1:40000");
	uint32_t r1 = ev(s, VGN_RECV, be, T0 + 2 * MS, bc, 0, 63);
	ev(s, VGN_SEND, be, T0 + 3 * MS, bc, 0, 400);
	uint32_t r2 = ev(s, VGN_RECV, be, T0 + 4 * MS, bc, 63, 14);
	uint32_t a2 = ev(s, VGN_SEND, be, T0 + 5 * MS, bc, 400, 66);
	ev(s, VGN_PROC_END, pm, T0 + 10 * MS, 0, 0, 0);
	struct vgn_clock c;
	struct vgn_split sp;
	split_all(s, NULL, &c, &sp, VGN_IN_ALL);
	assert_int_equal(sp.nnets, 2);
	assert_int_equal(sp.inputs[0], r1);
	assert_int_equal(sp.inputs[1], r2);
	assert_int_equal(sp.net_of[ae], 0);
	assert_int_equal(sp.net_of[bb], 0);
	assert_int_equal(sp.net_of[a2], 1);
	vgn_split_free(&sp);
	assert_int_equal(vgn_split_run(s, VGN_IN_ALL | VGN_PER_CONNECTION, &sp), 0);
	assert_int_equal(sp.nnets, 1);
	assert_int_equal(sp.net_of[ae], 0);
	assert_int_equal(sp.net_of[r2], 0);
	assert_int_equal(sp.net_of[a2], 0);
	vgn_split_free(&sp);
	vgn_clock_free(&c);
	vgn_set_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(matching_pairs_by_endpoints),
	    cmocka_unit_test(split_forking_server),
	    cmocka_unit_test(split_forking_server_alone),
	    cmocka_unit_test(matching_byte_ranges),
	    cmocka_unit_test(matching_explicit_ids),
	    cmocka_unit_test(clock_recovers_offset),
	    cmocka_unit_test(clock_crossed_bounds),
	    cmocka_unit_test(clock_one_sided_and_unconnected),
	    cmocka_unit_test(clock_drift_fitted),
	    cmocka_unit_test(split_three_tier_networks),
	    cmocka_unit_test(split_inputs_mask),
	    cmocka_unit_test(split_accept_and_threads),
	    cmocka_unit_test(split_instrumented_iid),
	    cmocka_unit_test(split_connect_inputs),
	    cmocka_unit_test(split_fork_joins_parent),
	    cmocka_unit_test(split_event_loop_replies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
