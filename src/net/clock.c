/* Clock correction from matched messages (docs/net.md "Clocks").
 *
 * For two hosts A and B, d = o_B - o_A (how far B's clock is ahead of A's). A message
 * A->B sent at s (A's clock) and received at r (B's clock) cannot arrive before it left,
 * so d <= r - s; a message B->A gives d >= s - r. With only an offset, d lies in
 * [max lower, min upper]; the estimate is the middle. With drift, d(t) = a + b(t - t0) and
 * each message is a half-plane in (a, b): their intersection is a convex polygon (Duda et
 * al.'s convex-hull method, here by clipping), whose centre is the estimate and whose
 * extent gives the bounds. Drift is used only when the data excludes zero drift (the
 * simpler model otherwise). Hosts without messages to the reference are chained through
 * other hosts; their bounds add up. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

struct pt {
	double t, v;
};

struct pair {
	uint32_t a, b; /* constraints on d = o_b - o_a */
	struct pt *up, *lowv;
	size_t nup, nlow, cap_up, cap_low;
	/* the tightest messages, for the explanation of crossed bounds */
	uint32_t up_msg, low_msg;
	/* the estimate */
	struct vgn_clock_host est;
};

const char *vgn_clock_status_name(enum vgn_clock_status st)
{
	static const char *const n[] = {"reference", "ok", "one-sided", "unconnected", "crossed"};
	return (unsigned)st < 5 ? n[st] : "?";
}

/* ---- convex polygon clipping: the feasible (a, B) region ---- */

struct poly {
	double (*p)[2];
	size_t n;
};

/* Keeps the part of the polygon where ka*a + kb*B <= v. */
static void clip(struct poly *pg, double ka, double kb, double v)
{
	size_t n = pg->n;
	double(*out)[2] = vgb_xcalloc(2 * n + 2, sizeof *out);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		double *p = pg->p[i], *q = pg->p[(i + 1) % n];
		double fp = ka * p[0] + kb * p[1] - v, fq = ka * q[0] + kb * q[1] - v;
		if (fp <= 0) {
			out[m][0] = p[0];
			out[m][1] = p[1];
			m++;
		}
		if ((fp < 0 && fq > 0) || (fp > 0 && fq < 0)) {
			double k = fp / (fp - fq);
			out[m][0] = p[0] + k * (q[0] - p[0]);
			out[m][1] = p[1] + k * (q[1] - p[1]);
			m++;
		}
	}
	free(pg->p);
	pg->p = out;
	pg->n = m;
}

/* Tries the drift model. Returns 1 and fills e if the data bounds the drift and excludes
 * zero drift (or the offset-only bounds cross but a drift reconciles them). */
static int drift_fit(const struct pair *pr, double t0, bool need, struct vgn_clock_host *e)
{
	if (pr->nup < 2 || pr->nlow < 2)
		return 0;
	double tmin = INFINITY, tmax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
	for (size_t i = 0; i < pr->nup; i++) {
		tmin = fmin(tmin, pr->up[i].t), tmax = fmax(tmax, pr->up[i].t);
		vmin = fmin(vmin, pr->up[i].v), vmax = fmax(vmax, pr->up[i].v);
	}
	for (size_t i = 0; i < pr->nlow; i++) {
		tmin = fmin(tmin, pr->lowv[i].t), tmax = fmax(tmax, pr->lowv[i].t);
		vmin = fmin(vmin, pr->lowv[i].v), vmax = fmax(vmax, pr->lowv[i].v);
	}
	double span = tmax - tmin;
	if (span < 1e6) /* under a millisecond: no drift to see */
		return 0;
	/* B = b * span: the drift over the whole recording, in ns; at most 1000 ppm. */
	double bmax = 1e-3 * span, c = (tmin + tmax) / 2;
	double amin = vmin - 2 * bmax - 1, amax = vmax + 2 * bmax + 1;
	struct poly pg = {vgb_xcalloc(4, sizeof *pg.p), 4};
	double box[4][2] = {{amin, -bmax}, {amax, -bmax}, {amax, bmax}, {amin, bmax}};
	memcpy(pg.p, box, sizeof box);
	/* constraints in (a at c, B): d(t) = a + B*(t - c)/span */
	for (size_t i = 0; i < pr->nup && pg.n; i++)
		clip(&pg, 1, (pr->up[i].t - c) / span, pr->up[i].v);
	for (size_t i = 0; i < pr->nlow && pg.n; i++)
		clip(&pg, -1, -(pr->lowv[i].t - c) / span, -pr->lowv[i].v);
	int ok = 0;
	if (pg.n >= 3) {
		double blo = INFINITY, bhi = -INFINITY, sa = 0, sb = 0;
		for (size_t i = 0; i < pg.n; i++) {
			blo = fmin(blo, pg.p[i][1]);
			bhi = fmax(bhi, pg.p[i][1]);
			sa += pg.p[i][0];
			sb += pg.p[i][1];
		}
		bool bounded = blo > -bmax * 0.999 && bhi < bmax * 0.999;
		if (bounded && (need || blo > 0 || bhi < 0)) {
			double ac = sa / (double)pg.n, bc = sb / (double)pg.n;
			e->drift = bc / span;
			e->drift_lo = blo / span;
			e->drift_hi = bhi / span;
			e->has_drift = true;
			/* the offset at t0 and its range over the polygon */
			double k = (t0 - c) / span, lo = INFINITY, hi = -INFINITY;
			for (size_t i = 0; i < pg.n; i++) {
				double a = pg.p[i][0] + pg.p[i][1] * k;
				lo = fmin(lo, a);
				hi = fmax(hi, a);
			}
			e->offset = ac + bc * k;
			e->lo = lo;
			e->hi = hi;
			e->status = VGN_CLOCK_OK;
			ok = 1;
		}
	}
	free(pg.p);
	return ok;
}

static void fmt_ns(char *buf, size_t n, double ns)
{
	snprintf(buf, n, "%.6f ms", ns / 1e6);
}

static void estimate_pair(const struct vgn_set *s, struct pair *pr, double t0)
{
	struct vgn_clock_host *e = &pr->est;
	memset(e, 0, sizeof *e);
	e->via = VGN_NONE;
	/* as seen from b: its messages to a (lower bounds) and from a (upper bounds) */
	e->to_ref = pr->nlow;
	e->from_ref = pr->nup;
	double lo = -INFINITY, hi = INFINITY;
	for (size_t i = 0; i < pr->nup; i++)
		hi = fmin(hi, pr->up[i].v);
	for (size_t i = 0; i < pr->nlow; i++)
		lo = fmax(lo, pr->lowv[i].v);
	e->lo = lo;
	e->hi = hi;
	if (pr->nup && pr->nlow) {
		if (lo <= hi) {
			e->status = VGN_CLOCK_OK;
			e->offset = (lo + hi) / 2;
			drift_fit(pr, t0, false, e);
			return;
		}
		if (drift_fit(pr, t0, true, e))
			return;
		e->status = VGN_CLOCK_CROSSED;
		e->offset = (lo + hi) / 2;
		const struct vgn_msg *mu = &s->msgs[pr->up_msg], *ml = &s->msgs[pr->low_msg];
		char b1[48], b2[48];
		fmt_ns(b1, sizeof b1, lo);
		fmt_ns(b2, sizeof b2, hi);
		snprintf(e->why, sizeof e->why,
		         "messages %s->%s need %s's clock at most %s ahead (fastest, from %s pid "
		         "%lld), messages %s->%s need it at least %s ahead (from %s pid %lld)",
		         s->hosts[pr->a].name, s->hosts[pr->b].name, s->hosts[pr->b].name, b2,
		         s->hosts[pr->a].name, (long long)s->procs[vgn_event_proc(s, mu->send)].pid,
		         s->hosts[pr->b].name, s->hosts[pr->a].name, b1, s->hosts[pr->b].name,
		         (long long)s->procs[vgn_event_proc(s, ml->send)].pid);
		return;
	}
	/* One direction only: the bound itself (the fastest message took no time). */
	e->status = VGN_CLOCK_ONE_SIDED;
	e->offset = pr->nup ? hi : lo;
}

static void negate(struct vgn_clock_host *e)
{
	double lo = e->lo, dlo = e->drift_lo;
	e->offset = -e->offset;
	e->lo = -e->hi;
	e->hi = -lo;
	e->drift = -e->drift;
	e->drift_lo = -e->drift_hi;
	e->drift_hi = -dlo;
	uint64_t t = e->to_ref;
	e->to_ref = e->from_ref;
	e->from_ref = t;
}

static int worse(enum vgn_clock_status a, enum vgn_clock_status b)
{
	static const int rank[] = {0, 1, 2, 4, 3};
	return rank[a] >= rank[b] ? a : b;
}

int vgn_clock_estimate(const struct vgn_set *s, uint32_t reference, struct vgn_clock *c)
{
	memset(c, 0, sizeof *c);
	c->nhosts = s->nhosts;
	c->hosts = vgb_xcalloc(s->nhosts ? s->nhosts : 1, sizeof *c->hosts);
	/* t0: the middle of the matched messages' send times */
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;
	for (size_t i = 0; i < s->nmsgs; i++) {
		int64_t t = s->events[s->msgs[i].send].ts;
		tmin = t < tmin ? t : tmin;
		tmax = t > tmax ? t : tmax;
	}
	c->t0 = s->nmsgs ? tmin + (tmax - tmin) / 2 : 0;
	/* constraints per host pair */
	struct vgn_tmap pmap;
	vgn_tmap_init(&pmap);
	struct pair *pairs = NULL;
	size_t npairs = 0, cap = 0;
	uint64_t *cross = vgb_xcalloc(s->nhosts + 1, sizeof *cross);
	for (size_t i = 0; i < s->nmsgs; i++) {
		const struct vgn_msg *m = &s->msgs[i];
		uint32_t hs = vgn_event_host(s, m->send), hr = vgn_event_host(s, m->recv);
		if (hs == hr)
			continue;
		cross[hs]++;
		cross[hr]++;
		uint32_t a = hs < hr ? hs : hr, b = hs < hr ? hr : hs;
		uint32_t p = vgn_tmap_get(&pmap, a, b, 0);
		if (p == VGN_NONE) {
			VGN_GROW(pairs, cap, npairs + 1);
			memset(&pairs[npairs], 0, sizeof *pairs);
			pairs[npairs].a = a;
			pairs[npairs].b = b;
			p = (uint32_t)npairs++;
			vgn_tmap_put(&pmap, a, b, 0, p);
		}
		struct pair *pr = &pairs[p];
		double ts = (double)(s->events[m->send].ts - c->t0);
		double tr = (double)(s->events[m->recv].ts - c->t0);
		if (hs == a) { /* a -> b: d <= r - s, at a's time s */
			VGN_GROW(pr->up, pr->cap_up, pr->nup + 1);
			pr->up[pr->nup++] = (struct pt){ts, tr - ts};
		} else { /* b -> a: d >= s - r, at a's time r */
			VGN_GROW(pr->lowv, pr->cap_low, pr->nlow + 1);
			pr->lowv[pr->nlow++] = (struct pt){tr, ts - tr};
		}
	}
	/* the tightest messages of each pair (for explanations) */
	for (size_t i = 0; i < s->nmsgs; i++) {
		const struct vgn_msg *m = &s->msgs[i];
		uint32_t hs = vgn_event_host(s, m->send), hr = vgn_event_host(s, m->recv);
		if (hs == hr)
			continue;
		uint32_t a = hs < hr ? hs : hr, b = hs < hr ? hr : hs;
		struct pair *pr = &pairs[vgn_tmap_get(&pmap, a, b, 0)];
		double v = (double)(s->events[m->recv].ts - s->events[m->send].ts);
		if (hs == a) {
			double cur = (double)(s->events[s->msgs[pr->up_msg].recv].ts -
			                      s->events[s->msgs[pr->up_msg].send].ts);
			if (!pr->est.to_ref || v < cur)
				pr->up_msg = (uint32_t)i;
			pr->est.to_ref = 1;
		} else {
			double cur = (double)(s->events[s->msgs[pr->low_msg].recv].ts -
			                      s->events[s->msgs[pr->low_msg].send].ts);
			if (!pr->est.from_ref || v < cur)
				pr->low_msg = (uint32_t)i;
			pr->est.from_ref = 1;
		}
	}
	for (size_t p = 0; p < npairs; p++)
		estimate_pair(s, &pairs[p], 0);
	if (reference == VGN_NONE) {
		reference = 0;
		for (uint32_t h = 1; h < s->nhosts; h++)
			if (cross[h] > cross[reference])
				reference = h;
	}
	c->reference = reference;
	for (size_t h = 0; h < s->nhosts; h++) {
		c->hosts[h].status = VGN_CLOCK_UNCONNECTED;
		c->hosts[h].via = VGN_NONE;
	}
	if (reference < s->nhosts) {
		/* breadth first from the reference over hosts that exchanged messages */
		uint32_t *queue = vgb_xcalloc(s->nhosts, sizeof *queue);
		bool *seen = vgb_xcalloc(s->nhosts, sizeof *seen);
		size_t qh = 0, qt = 0;
		queue[qt++] = reference;
		seen[reference] = true;
		c->hosts[reference].status = VGN_CLOCK_REFERENCE;
		while (qh < qt) {
			uint32_t x = queue[qh++];
			for (size_t p = 0; p < npairs; p++) {
				struct pair *pr = &pairs[p];
				uint32_t y = pr->a == x ? pr->b : pr->b == x ? pr->a : VGN_NONE;
				if (y == VGN_NONE || seen[y])
					continue;
				struct vgn_clock_host e = pr->est; /* o_b - o_a */
				if (pr->b == x)
					negate(&e); /* o_a - o_b = o_y - o_x */
				const struct vgn_clock_host *hx = &c->hosts[x];
				if (x != reference) {
					e.offset += hx->offset;
					e.lo += hx->lo;
					e.hi += hx->hi;
					e.drift += hx->drift;
					e.drift_lo += hx->drift_lo;
					e.drift_hi += hx->drift_hi;
					e.has_drift |= hx->has_drift;
					e.status = worse(e.status, hx->status);
					if (!e.why[0] && hx->why[0])
						snprintf(e.why, sizeof e.why, "%s", hx->why);
					e.via = x;
				}
				if (!e.has_drift)
					e.drift = e.drift_lo = e.drift_hi = 0;
				c->hosts[y] = e;
				seen[y] = true;
				queue[qt++] = y;
			}
		}
		free(queue);
		free(seen);
	}
	for (size_t p = 0; p < npairs; p++) {
		free(pairs[p].up);
		free(pairs[p].lowv);
	}
	free(pairs);
	free(cross);
	vgn_tmap_free(&pmap);
	return 0;
}

void vgn_clock_free(struct vgn_clock *c)
{
	free(c->hosts);
	c->hosts = NULL;
	c->nhosts = 0;
}

double vgn_clock_correction(const struct vgn_clock *c, uint32_t host, int64_t ts)
{
	if (!c || host >= c->nhosts)
		return 0;
	const struct vgn_clock_host *h = &c->hosts[host];
	if (h->status == VGN_CLOCK_REFERENCE || h->status == VGN_CLOCK_UNCONNECTED)
		return 0;
	double off = h->offset;
	if (h->has_drift)
		off += h->drift * ((double)(ts - c->t0) - h->offset);
	return off;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct vgn_state *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->cts != y->cts)
		return x->cts < y->cts ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* User-defined states: corrected like events, then grouped by thread in time order. */
static void states_apply(struct vgn_set *s, const struct vgn_clock *c)
{
	for (size_t i = 0; i < s->nstates; i++) {
		struct vgn_state *st = &s->states[i];
		uint32_t host = s->procs[s->threads[st->thread].proc].host;
		st->cts = st->ts - (int64_t)llround(vgn_clock_correction(c, host, st->ts));
	}
	if (s->nstates) /* qsort of NULL, 0 is undefined */
		qsort(s->states, s->nstates, sizeof *s->states, by_thread_time);
	for (size_t t = 0; t < s->nthreads; t++)
		s->threads[t].state_n = 0;
	for (size_t i = s->nstates; i-- > 0;) {
		struct vgn_thread *th = &s->threads[s->states[i].thread];
		th->state_first = (uint32_t)i;
		th->state_n++;
	}
}

uint64_t vgn_clock_apply(struct vgn_set *s, const struct vgn_clock *c)
{
	states_apply(s, c);
	for (size_t i = 0; i < s->nevents; i++) {
		struct vgn_event *e = &s->events[i];
		e->cts = e->ts - (int64_t)llround(vgn_clock_correction(
		                     c, vgn_event_host(s, (uint32_t)i), e->ts));
	}
	uint64_t back = 0;
	for (size_t i = 0; i < s->nmsgs; i++)
		back += s->events[s->msgs[i].recv].cts < s->events[s->msgs[i].send].cts;
	return back;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *vgn_clock_to_json(const struct vgn_set *s, const struct vgn_clock *c)
{
	json_t *hosts = json_array();
	for (size_t h = 0; h < c->nhosts; h++) {
		const struct vgn_clock_host *e = &c->hosts[h];
		json_t *o =
		    json_pack("{s:s,s:s,s:o,s:o,s:o,s:b,s:I,s:I}", "host", s->hosts[h].name,
		              "status", vgn_clock_status_name(e->status), "offset_ns",
		              json_real(e->offset), "lo_ns", num_or_null(e->lo), "hi_ns",
		              num_or_null(e->hi), "has_drift", e->has_drift, "messages_to_ref",
		              (json_int_t)e->to_ref, "messages_from_ref", (json_int_t)e->from_ref);
		if (e->status == VGN_CLOCK_REFERENCE || e->status == VGN_CLOCK_UNCONNECTED) {
			json_object_set_new(o, "lo_ns", json_real(0));
			json_object_set_new(o, "hi_ns", json_real(0));
			if (e->status == VGN_CLOCK_UNCONNECTED) {
				json_object_set_new(o, "lo_ns", json_null());
				json_object_set_new(o, "hi_ns", json_null());
			}
		}
		json_object_set_new(o, "drift_ppm", json_real(e->drift * 1e6));
		json_object_set_new(o, "drift_lo_ppm", json_real(e->drift_lo * 1e6));
		json_object_set_new(o, "drift_hi_ppm", json_real(e->drift_hi * 1e6));
		json_object_set_new(o, "via",
		                    e->via == VGN_NONE ? json_null()
		                                       : vgn_json_text(s->hosts[e->via].name));
		if (e->why[0])
			json_object_set_new(o, "why", json_string(e->why));
		json_array_append_new(hosts, o);
	}
	return json_pack("{s:s,s:I,s:o}", "reference",
	                 c->reference < s->nhosts ? s->hosts[c->reference].name : "", "t0",
	                 (json_int_t)c->t0, "hosts", hosts);
}

static double get_num(const json_t *o, const char *k, double dflt)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_number(v))
		return json_number_value(v);
	return dflt;
}

int vgn_clock_from_json(const struct vgn_set *s, const json_t *j, struct vgn_clock *c, char *err,
                        size_t errsize)
{
	memset(c, 0, sizeof *c);
	const json_t *hosts = json_object_get(j, "hosts");
	const char *ref = json_string_value(json_object_get(j, "reference"));
	if (!json_is_array(hosts) || !ref || !json_is_integer(json_object_get(j, "t0"))) {
		snprintf(err, errsize,
		         "not the output of 'vigil clock --json' (no reference, t0, hosts)");
		return -1;
	}
	c->t0 = json_integer_value(json_object_get(j, "t0"));
	c->nhosts = s->nhosts;
	c->hosts = vgb_xcalloc(s->nhosts ? s->nhosts : 1, sizeof *c->hosts);
	c->reference = VGN_NONE;
	for (size_t h = 0; h < s->nhosts; h++) {
		c->hosts[h].status = VGN_CLOCK_UNCONNECTED;
		c->hosts[h].via = VGN_NONE;
		if (!strcmp(s->hosts[h].name, ref)) {
			c->reference = (uint32_t)h;
			c->hosts[h].status = VGN_CLOCK_REFERENCE;
		}
	}
	size_t i;
	const json_t *o;
	json_array_foreach(hosts, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "host"));
		const char *st = json_string_value(json_object_get(o, "status"));
		if (!name || !st) {
			snprintf(err, errsize, "hosts[%zu]: no host or status", i);
			vgn_clock_free(c);
			return -1;
		}
		for (size_t h = 0; h < s->nhosts; h++) {
			if (strcmp(s->hosts[h].name, name) || h == c->reference)
				continue;
			struct vgn_clock_host *e = &c->hosts[h];
			e->status = VGN_CLOCK_OK;
			for (int k = 0; k < 5; k++)
				if (!strcmp(st, vgn_clock_status_name(k)))
					e->status = k;
			e->offset = get_num(o, "offset_ns", 0);
			e->lo = get_num(o, "lo_ns", -INFINITY);
			e->hi = get_num(o, "hi_ns", INFINITY);
			e->has_drift = json_is_true(json_object_get(o, "has_drift"));
			e->drift = get_num(o, "drift_ppm", 0) / 1e6;
			e->drift_lo = get_num(o, "drift_lo_ppm", 0) / 1e6;
			e->drift_hi = get_num(o, "drift_hi_ppm", 0) / 1e6;
		}
	}
	return 0;
}
