/* Aggregates (TQuel, Snodgrass et al. 1993): the value of an aggregate changes over
 * time, so it is computed as an interval relation (g0, ..., gn-1, value) holding, per
 * group of the by-list, the maximal intervals over which the value is constant.
 *
 * The aggregate's own variables are evaluated like a retrieve whose valid time is their
 * overlap; each qualifying binding contributes its argument (nulls are skipped) over
 * that time, an event at t over [t, t + 1).
 *   for each instant: the value at t is over the contributions valid at t;
 *   for each SPAN:    over those valid at some instant of (t - SPAN, t];
 *   for ever:         over the contributions that began at or before t.
 * any, stdev, first, last, rate, avgti and varts: agg_time.c.
 * count and countU are 0 where no contribution is valid, from the trace's first event to
 * its last; the other functions have no value there (no tuple). The outer statement joins
 * this relation like any other (by-items equal, valid times overlapping). The
 * contributions are collected by the aggregate's executor node (exec_aggregate.c). */
#include <stdlib.h>
#include <string.h>

#include "query/engine_internal.h"
#include "query/exec_node.h"
#include "relations/columns.h"

/* Contributions by key, then begin (nby key values each). */
static int by_key(const struct vgq_contrib *a, const struct vgq_contrib *c, size_t nby)
{
	for (size_t k = 0; k < nby; k++) {
		int o = vgq_value_order(&a->key[k], &c->key[k]);
		if (o)
			return o;
	}
	return a->b < c->b ? -1 : a->b > c->b;
}

/* 0 when two contributions are in the same group */
static int by_key_eq(const struct vgq_contrib *a, const struct vgq_contrib *c, size_t nby)
{
	for (size_t k = 0; k < nby; k++)
		if (vgq_value_order(&a->key[k], &c->key[k]))
			return 1;
	return 0;
}

struct point {
	int64_t t;
	size_t c; /* contribution */
	bool add;
};

static int by_value(const void *x, const void *y)
{
	return vgq_value_order(x, y);
}

/* The aggregate of `n` values, begun at times `b`; false when it has none. */
static bool aggregate(const struct bagg *a, struct vx_value *vals, int64_t *b, size_t n,
                      enum vx_type type, struct vx_value *out)
{
	memset(out, 0, sizeof *out);
	out->type = type;
	if (a->fn >= TQ_ANY)
		return vgq_agg_temporal(a->fn, vals, b, n, out);
	if (a->unique && n > 1) { /* distinct values only */
		qsort(vals, n, sizeof *vals, by_value);
		size_t k = 1;
		for (size_t i = 1; i < n; i++)
			if (vgq_value_order(&vals[i], &vals[k - 1]))
				vals[k++] = vals[i];
		n = k;
	}
	if (a->fn == TQ_COUNT) {
		out->v.i = (int64_t)n;
		return true;
	}
	if (!n)
		return false;
	switch (a->fn) {
	case TQ_SUM:
	case TQ_AVG: {
		if (type == VX_INT) {
			/* exact (n 64-bit values fit 128 bits), so whether the sum is past int64
			 * does not depend on the order of adding */
			__extension__ __int128 sum = 0;
			for (size_t i = 0; i < n; i++)
				sum +=
				    vals[i].type == VX_UINT ? (__int128)vals[i].v.u : vals[i].v.i;
			if (sum < INT64_MIN || sum > INT64_MAX) {
				vgq_fault_note(a->inner->targets[a->nby].value->fault, VF_SUM,
				               a->src, NULL, NULL, NULL, n);
				return false;
			}
			out->v.i = (int64_t)sum;
		} else {
			double sum = 0;
			for (size_t i = 0; i < n; i++)
				sum += vgq_agg_num(&vals[i]);
			out->v.d = a->fn == TQ_AVG ? sum / (double)n : sum;
		}
		return true;
	}
	default: {
		size_t best = 0;
		for (size_t i = 1; i < n; i++) {
			int o = vgq_value_order(&vals[i], &vals[best]);
			if (a->fn == TQ_MIN ? o < 0 : o > 0)
				best = i;
		}
		*out = vals[best];
		return true;
	}
	}
}

/* Pieces kept aside (a unit of the sweep's), to be emitted in order later. */
struct pieces {
	int64_t *b, *e;
	struct vx_value *v;
	size_t n, cap;
};

struct emitter {
	struct vgq_relation *rel;
	struct pieces *to;                /* if set, pieces go there instead of rel */
	const struct vgq_agg_sink *other; /* else, if set, there (a spilled aggregate's worker) */
	const struct vx_value *key;
	size_t nby;
	bool have;
	int64_t b, e;
	struct vx_value v;
};

/* The interval [b, e) of group key with value v, a tuple of rel. */
static void append(struct vgq_relation *rel, size_t nby, int64_t b, int64_t e,
                   const struct vx_value *key, const struct vx_value *v)
{
	size_t t = vgq_relation_append(rel, b);
	rel->to[t] = e;
	rel->open[t] = false;
	for (size_t k = 0; k <= nby; k++) {
		const struct vx_value *x = k < nby ? &key[k] : v;
		union vgq_column *c = &rel->cols[k];
		switch (rel->attrs[k].type) {
		case VGQ_INT:
			c->i[t] = x->type == VX_UINT ? (int64_t)x->v.u : x->v.i;
			break;
		case VGQ_UINT:
			c->u[t] = x->v.u;
			break;
		case VGQ_DOUBLE:
			c->d[t] = vgq_agg_num(x);
			break;
		case VGQ_STRING:
			c->s[t] = x->null ? NULL : x->v.s;
			break;
		case VGQ_BYTES:
			c->b[t] = x->v.b;
			break;
		case VGQ_ENTITY:
			c->r[t] = x->v.r;
			break;
		}
	}
}

static void flush(struct emitter *m)
{
	if (!m->have || m->b >= m->e)
		return;
	struct pieces *ps = m->to;
	if (ps) {
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? 2 * ps->cap : 64;
			ps->b = vgq_xrealloc(ps->b, ps->cap, sizeof *ps->b);
			ps->e = vgq_xrealloc(ps->e, ps->cap, sizeof *ps->e);
			ps->v = vgq_xrealloc(ps->v, ps->cap, sizeof *ps->v);
		}
		ps->b[ps->n] = m->b;
		ps->e[ps->n] = m->e;
		ps->v[ps->n++] = m->v;
		m->have = false;
		return;
	}
	if (m->other)
		m->other->put(m->other->ctx, m->b, m->e, m->key, &m->v);
	else
		append(m->rel, m->nby, m->b, m->e, m->key, &m->v);
	m->have = false;
}

/* A piece [b, e) with value v: merged with the previous one when equal and adjacent
 * (merging is associative: a unit's pieces, merged again in order with the next unit's,
 * give the serial sweep's). */
static void piece(struct emitter *m, int64_t b, int64_t e, const struct vx_value *v)
{
	if (b >= e)
		return;
	if (m->have && m->e == b && !vgq_value_order(&m->v, v) && m->v.null == v->null) {
		m->e = e;
		return;
	}
	flush(m);
	m->have = true;
	m->b = b;
	m->e = e;
	m->v = *v;
}

/* A total order of the points: by time, removals first, then by contribution. */
static int by_time(const void *x, const void *y)
{
	const struct point *a = x, *c = y;
	if (a->t != c->t)
		return a->t < c->t ? -1 : 1;
	if (a->add != c->add)
		return a->add - c->add;
	return a->c < c->c ? -1 : a->c > c->c;
}

/* The begins and ends of a group's contributions (an end moved by a window's span). */
static struct point *points_of(const struct bagg *a, const struct vgq_contrib *c, size_t n,
                               size_t *np)
{
	struct point *p = vgq_xcalloc(2 * n + 1, sizeof *p);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		p[k++] = (struct point){c[i].b, i, true};
		if (a->window == TQ_INSTANT)
			p[k++] = (struct point){c[i].e, i, false};
		else if (a->window == TQ_SPAN) /* valid at some instant of (t - span, t] */
			p[k++] = (struct point){c[i].e > INT64_MAX - a->span_ns + 1
			                            ? INT64_MAX
			                            : c[i].e + a->span_ns - 1,
			                        i, false};
	}
	*np = k;
	return p;
}

/* One group's sweep, shared by its units. */
struct gsweep {
	const struct vgq_contrib *c;
	size_t n, np;
	struct point *p;         /* sorted by by_time */
	size_t *addpos, *rempos; /* per contribution: its points' places (SIZE_MAX: none) */
};

struct agg_job {
	struct vgq_session *s;
	const struct bagg *a;
	enum vx_type type;
	struct gsweep *groups;
	struct unit {
		size_t group, lo, hi; /* the group's points [lo, hi); hi 0: all, points its own */
		struct pieces out;
	} * units;
};

/* Points [lo, hi) of group g swept: at each instant the aggregate over the contributions
 * valid then, in contribution order (so a sum is added up in one order, wherever a unit
 * starts). The active ones when the unit starts are those added before lo and not yet
 * removed. */
static void sweep(const struct agg_job *j, const struct gsweep *g, size_t lo, size_t hi,
                  struct pieces *to)
{
	struct emitter out = {.to = to};
	const struct bagg *a = j->a;
	const struct vgq_contrib *c = g->c;
	const struct point *p = g->p;
	size_t n = g->n, np = g->np;
	const struct vgq_database *db = a->inner->db; /* the session's, or as of an instant */
	int64_t first = db ? db->first : 0, horizon = db ? db->last + 1 : 1;
	/* count and any have a value (0) where nothing is valid */
	bool zero = a->fn == TQ_COUNT || a->fn == TQ_ANY;
	struct vx_value zv = {.type = VX_INT};
	size_t *who = vgq_xcalloc(n + 1, sizeof *who); /* the active contributions, ascending */
	size_t nactive = 0;
	if (lo > 0)
		for (size_t ci = 0; ci < n; ci++)
			if (g->addpos[ci] < lo && g->rempos[ci] >= lo)
				who[nactive++] = ci;
	struct vx_value *scratch = vgq_xcalloc(n + 1, sizeof *scratch);
	int64_t *begins = vgq_xcalloc(n + 1, sizeof *begins);
	if (lo == 0 && zero && np && p[0].t > first)
		piece(&out, first, p[0].t, &zv);
	for (size_t i = lo; i < hi;) {
		int64_t t = p[i].t;
		for (; i < np && p[i].t == t; i++) {
			size_t ci = p[i].c, at = 0, z = nactive;
			while (at < z) { /* where ci is (or goes) among the active */
				size_t mid = at + (z - at) / 2;
				if (who[mid] < ci)
					at = mid + 1;
				else
					z = mid;
			}
			if (p[i].add) {
				memmove(who + at + 1, who + at, (nactive - at) * sizeof *who);
				who[at] = ci;
				nactive++;
			} else if (at < nactive && who[at] == ci) {
				memmove(who + at, who + at + 1, (nactive - at - 1) * sizeof *who);
				nactive--;
			}
		}
		if (t >= horizon)
			break;
		int64_t next = i < np && p[i].t < horizon ? p[i].t : horizon;
		if (next <= t)
			next = t + 1;
		for (size_t k = 0; k < nactive; k++) {
			scratch[k] = c[who[k]].arg;
			begins[k] = c[who[k]].b;
		}
		struct vx_value v;
		if ((nactive || zero) && aggregate(a, scratch, begins, nactive, j->type, &v))
			piece(&out, t, next, &v);
	}
	flush(&out);
	free(who);
	free(scratch);
	free(begins);
}

static void run_units(void *ctx, size_t lo, size_t hi)
{
	struct agg_job *j = ctx;
	for (size_t u = lo; u < hi; u++) {
		struct unit *un = &j->units[u];
		struct gsweep *g = &j->groups[un->group];
		if (un->hi) {
			sweep(j, g, un->lo, un->hi, &un->out);
			continue;
		}
		/* a small group: one unit, its points its own */
		struct gsweep own = *g;
		own.p = points_of(j->a, g->c, g->n, &own.np);
		qsort(own.p, own.np, sizeof *own.p, by_time);
		sweep(j, &own, 0, own.np, &un->out);
		free(own.p);
	}
}

/* A contribution in the sort into groups: its place carries the arrival order, and the
 * key's width travels with it (no global: a spilled aggregate's workers sort partitions
 * at once); h: its group's hash, or 0 (key order). */
struct ordered {
	const struct vgq_contrib *c;
	uint64_t h;
	size_t nby;
};

/* A total order of the contributions: by the group's hash (when kept), key, begin, then
 * arrival. */
static int by_key_then_arrival(const void *x, const void *y)
{
	const struct ordered *i = x, *k = y;
	if (i->h != k->h)
		return i->h < k->h ? -1 : 1;
	int o = by_key(i->c, k->c, i->nby);
	return o ? o : (i->c < k->c ? -1 : i->c > k->c);
}

uint64_t vgq_agg_group_hash(const struct vx_value *keys, size_t nby)
{
	uint64_t h = 0x5bd1e995;
	for (size_t k = 0; k < nby; k++) /* equal under vgq_value_order: equal hashes */
		h = (h ^ (keys[k].null ? 0x9e3779b9 : vgq_value_hash(&keys[k]))) * 0x100000001b3ull;
	return vgq_mix(h);
}

#define AGG_SPLIT_MIN 1024 /* contributions of a group below which one unit sweeps it */

/* Cuts a large group's sweep into units of whole instants, its points shared. */
static size_t split_group(struct vgq_session *s, const struct bagg *a, struct gsweep *g, size_t gi,
                          struct unit *units)
{
	g->p = points_of(a, g->c, g->n, &g->np);
	vgq_parallel_sort(s, g->p, g->np, sizeof *g->p, by_time, NULL);
	g->addpos = vgq_xcalloc(g->n, sizeof *g->addpos);
	g->rempos = vgq_xcalloc(g->n, sizeof *g->rempos);
	for (size_t ci = 0; ci < g->n; ci++)
		g->rempos[ci] = SIZE_MAX;
	for (size_t i = 0; i < g->np; i++)
		(g->p[i].add ? g->addpos : g->rempos)[g->p[i].c] = i;
	size_t k = 8 * (size_t)vgq_session_threads(s), nu = 0, lo = 0;
	if (k > g->np / 1024)
		k = g->np / 1024 ? g->np / 1024 : 1;
	for (size_t u = 1; u <= k && lo < g->np; u++) {
		size_t hi = u == k ? g->np : u * g->np / k;
		while (hi < g->np && hi > lo && g->p[hi].t == g->p[hi - 1].t)
			hi++;
		if (hi <= lo)
			continue;
		units[nu++] = (struct unit){.group = gi, .lo = lo, .hi = hi};
		lo = hi;
	}
	return nu;
}

void vgq_agg_finish(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n)
{
	const struct vgq_database *db = a->inner->db;
	if (n == 0 && a->nby == 0 && (a->fn == TQ_COUNT || a->fn == TQ_ANY) && db) {
		/* nothing qualifies: count (any) is 0 over the whole trace */
		struct emitter m = {.rel = a->rel};
		struct vx_value zv = {.type = VX_INT};
		piece(&m, db->first, db->last + 1, &zv);
		flush(&m);
	}
	vgq_agg_add(s, a, c, n, false);
	vgq_agg_end(a);
}

void vgq_agg_end(struct bagg *a)
{
	const struct vgq_database *db = a->inner->db;
	vgq_relation_finish(a->rel, db ? db->last : 0);
}

size_t vgq_agg_work_bytes(size_t n)
{
	/* the sort's order (a contribution's place, its group's hash and the key width) and copy,
	 * the groups, and at most: every contribution's two points and places, and its place in a
	 * sweep's active set, scratch and begins */
	return n * (sizeof(struct ordered) + sizeof(size_t) + sizeof(struct vgq_contrib) +
	            sizeof(struct gsweep) + 2 * sizeof(struct point) + 2 * sizeof(size_t) +
	            sizeof(struct vx_value) + sizeof(int64_t)) +
	       sizeof(struct gsweep);
}

void vgq_agg_add(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n,
                 bool by_hash)
{
	size_t work = vgq_agg_work_bytes(n);
	if (!vgq_mem_take(s, "the aggregate's groups", work))
		return; /* the statement stops */
	vgq_agg_groups(s, a, c, n, by_hash, NULL);
	vgq_mem_give(s, work);
}

void vgq_agg_put(struct bagg *a, int64_t b, int64_t e, const struct vx_value *key,
                 const struct vx_value *v)
{
	append(a->rel, a->nby, b, e, key, v);
}

void vgq_agg_groups(struct vgq_session *s, struct bagg *a, struct vgq_contrib *c, size_t n,
                    bool by_hash, const struct vgq_agg_sink *to)
{
	size_t nby = a->nby;
	if (n > 1) { /* no contributions: c may be NULL */
		struct ordered *order = vgq_xcalloc(n, sizeof *order);
		for (size_t i = 0; i < n; i++)
			order[i] = (struct ordered){
			    &c[i], by_hash ? vgq_agg_group_hash(c[i].key, nby) : 0, nby};
		vgq_parallel_sort(s, order, n, sizeof *order, by_key_then_arrival, NULL);
		struct vgq_contrib *sorted = vgq_xcalloc(n, sizeof *sorted);
		for (size_t i = 0; i < n; i++)
			sorted[i] = *order[i].c;
		memcpy(c, sorted, n * sizeof *c);
		free(sorted);
		free(order);
	}
	enum vx_type type;
	switch (a->rel->attrs[nby].type) {
	case VGQ_UINT:
		type = VX_UINT;
		break;
	case VGQ_DOUBLE:
		type = VX_DOUBLE;
		break;
	case VGQ_STRING:
		type = VX_STRING;
		break;
	default:
		type = VX_INT;
	}
	struct emitter m = {.rel = a->rel, .other = to, .nby = nby};
	/* the groups, then the units of work: a small group one, a large one cut by time
	 * (only with workers to share them: one thread sweeps each group whole) */
	size_t ngroups = 0;
	struct gsweep *groups = vgq_xcalloc(n + 1, sizeof *groups);
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;
		while (k < n && !by_key_eq(&c[i], &c[k], nby))
			k++;
		groups[ngroups++] = (struct gsweep){.c = c + i, .n = k - i};
		i = k;
	}
	bool split = vgq_session_threads(s) > 1;
	size_t cap = ngroups + 1, nunits = 0;
	struct unit *units = vgq_xcalloc(cap, sizeof *units);
	for (size_t gi = 0; gi < ngroups; gi++) {
		if (!split || groups[gi].n < AGG_SPLIT_MIN) {
			units[nunits++] = (struct unit){.group = gi};
			continue;
		}
		size_t most = 8 * (size_t)vgq_session_threads(s);
		units = vgq_xrealloc(units, cap + most, sizeof *units);
		cap += most;
		nunits += split_group(s, a, &groups[gi], gi, units + nunits);
	}
	struct agg_job j = {s, a, type, groups, units};
	vgq_parallel_for(s, nunits, 1, run_units, &j);
	/* the units' pieces in order, merged again where units meet */
	for (size_t u = 0; u < nunits; u++) {
		struct unit *un = &units[u];
		if (u == 0 || units[u - 1].group != un->group) {
			flush(&m);
			m.key = groups[un->group].c[0].key;
		}
		for (size_t k = 0; k < un->out.n; k++)
			piece(&m, un->out.b[k], un->out.e[k], &un->out.v[k]);
		free(un->out.b);
		free(un->out.e);
		free(un->out.v);
	}
	flush(&m);
	for (size_t gi = 0; gi < ngroups; gi++) {
		free(groups[gi].p);
		free(groups[gi].addpos);
		free(groups[gi].rempos);
	}
	free(groups);
	free(units);
}
